"""Planning a YAML file's edits: command strings in scalar values, and keys renamed in place, moved
between parents (cut with the comments right above them and inserted, re-indented, under the new
parent) or removed. Only locates: every change is an `Edit` of the original bytes or a `Finding`.
"""

from __future__ import annotations

import bisect

import yaml

from migrator.edits import Edit, Finding, LocateResult, SourceNotParsed
from migrator.mapping import KeyChange, MappingSet
from migrator.rewrite import literal
from migrator.rewrite.yaml import relative
from migrator.rewrite.yaml.context import in_file_context
from migrator.rewrite.yaml.defaults import plan_defaults
from migrator.rewrite.yaml.document import (
    MAX_NESTING,
    STR_TAG,
    BlockMapping,
    Key,
    Lines,
    compose_all,
    duplicate_key,
    has_anchors,
    is_block_mapping,
    is_empty_null,
    is_flow_mapping,
    nesting_depth,
    node_last_line,
    package_prefix,
)
from migrator.rewrite.yaml.forks import scalar_edits
from migrator.rewrite.yaml.insert import Insert
from migrator.rewrite.yaml.values import plan_values


class Unsafe(Exception):
    """A structural change here cannot be made by editing lines; report it as a manual step."""


def locate(source: bytes, mappings: MappingSet, path: str = "") -> LocateResult:
    base = 3 if source.startswith(b"\xef\xbb\xbf") else 0
    try:
        text = source[base:].decode("utf-8")
        documents = compose_all(text)
        anchors = has_anchors(text)
    except (UnicodeDecodeError, yaml.YAMLError) as exc:
        raise SourceNotParsed(f"not parsable as YAML: {str(exc).splitlines()[0]}") from None
    except RecursionError:  # the pure-Python composer recurses per level (libyaml stops at 1,000 itself)
        raise SourceNotParsed("nested too deeply to check safely") from None
    depth = nesting_depth(documents)
    if depth > MAX_NESTING:
        raise SourceNotParsed(f"nested too deeply to check safely ({depth} levels; at most {MAX_NESTING})")
    duplicate = duplicate_key(documents)
    if duplicate is not None:
        raise SourceNotParsed(duplicate)
    mappings = in_file_context(documents, mappings)
    planner = Planner(source, Lines(source, base), mappings)
    for document in documents:
        if document is not None:
            planner.scan_scalars(document)
    plan_keys(planner, source[base:], documents, anchors)
    plan_defaults(planner, documents, path)
    return LocateResult(tuple(planner.edits), tuple(planner.findings))


def plan_keys(planner: "Planner", source: bytes, documents: list, has_anchors: bool) -> None:
    prefix = package_prefix(source)
    if prefix is not None:  # `{actor_rollout_ref: {...}}` (JSON-style YAML): no lines to move keys by
        for document in documents:
            if is_flow_mapping(document):
                planner.flow_mapping_findings(document, prefix)
    roots = [d for d in documents if is_block_mapping(d)]
    if prefix is None or not roots:
        return
    if len(documents) > 1 or has_anchors:
        why = "several YAML documents" if len(documents) > 1 else "YAML anchors or aliases"
        for root in roots:
            for key in planner.changed_keys(root, prefix):
                planner.manual(key, f"{'.'.join(key.path)}: the file has {why}; move this key by hand")
    else:
        planner.plan(roots[0], prefix)


class Planner:
    def __init__(self, source: bytes, lines: Lines, maps: MappingSet):
        self.src = source
        self.lines = lines
        self.maps = maps
        self.edits: list[Edit] = []
        self.findings: list[Finding] = []
        self.steps: set[int] = set()
        self.ops: list[tuple] = []  # the structural changes made, as data operations (for validate)
        self._edit_index: tuple[list[int], list[Edit], int] | None = None

    def manual(self, key: Key, message: str, change: KeyChange | None = None) -> None:
        self.findings.append(Finding(self.lines.byte(key.key.start_mark), "key-rename", message,
                                     change.hint if change else None, change.prs if change else ()))

    # -- string values ------------------------------------------------------------------------------
    def scan_scalars(self, node) -> None:
        stack = [(node, False)]
        seen = set()
        while stack:
            current, is_key = stack.pop()
            if id(current) in seen:
                continue
            seen.add(id(current))
            if isinstance(current, yaml.MappingNode):
                for k, v in current.value:
                    stack.append((k, True))
                    stack.append((v, False))
            elif isinstance(current, yaml.SequenceNode):
                stack.extend((item, False) for item in current.value)
            elif isinstance(current, yaml.ScalarNode) and not is_key and current.tag == STR_TAG:
                start, end = self.lines.byte(current.start_mark), self.lines.byte(current.end_mark)
                style = current.style
                if style in ("'", '"'):
                    start, end = start + 1, end - 1
                edits, findings = scalar_edits(self.src, start, end, self.maps, escapes=style == '"',
                                               whole_key=style in (None, "", "'", '"'), interpolations=True)
                self.edits.extend(edits)
                self.findings.extend(findings)

    # -- keys ---------------------------------------------------------------------------------------
    def build(self, node: yaml.MappingNode, path: tuple[str, ...], owner: Key | None) -> BlockMapping:
        mapping = BlockMapping(owner.raw if owner else (), path, node, owner)
        for k, v in node.value:
            if not isinstance(k, yaml.ScalarNode) or k.tag != STR_TAG or k.start_mark.line != k.end_mark.line:
                continue
            local = tuple(k.value.split("."))
            key = Key(mapping.raw + (k.value,), path + local, local, k, v, mapping)
            key.first_line = self._leading_comments(k.start_mark.line, k.start_mark.column)
            key.last_line = self._trailing_lines(node_last_line(v), k.start_mark.column)
            mapping.keys.append(key)
            if is_block_mapping(v):
                key.children = self.build(v, key.path, key)
                if key.children.keys and key.children.column > k.start_mark.column:
                    self.steps.add(key.children.column - k.start_mark.column)
        return mapping

    def _leading_comments(self, line: int, column: int) -> int:
        first = line
        while first > 0 and self.lines.is_comment(first - 1) and self.lines.indent(first - 1) == column:
            first -= 1
        return first

    def _trailing_lines(self, line: int, column: int) -> int:
        last = line
        while last + 1 < len(self.lines.raw) and self.lines.is_comment(last + 1) \
                and self.lines.indent(last + 1) > column:
            last += 1
        return last

    def changed_keys(self, root, prefix):
        mapping = self.build(root, prefix, None)
        stack = [mapping]
        while stack:
            current = stack.pop()
            for key in current.keys:
                if literal.key_target(self.maps, ".".join(key.path)) is not None:
                    yield key
                elif key.children is not None:
                    stack.append(key.children)

    def plan(self, root: yaml.MappingNode, prefix: tuple[str, ...]) -> None:
        self.root = self.build(root, prefix, None)
        self.step = min(self.steps) if self.steps else 2
        self.cuts: dict[int, Key] = {}  # id(key) -> key whose lines are deleted
        self.cut_info: dict[int, tuple[str, str, tuple[int, ...]]] = {}  # id(key) -> edit kind, message, PRs
        self.moves: list[tuple[Key, tuple[str, ...], KeyChange]] = []
        self.move_targets: dict[int, tuple[str, ...]] = {}
        plan_values(self, self.root)
        self.visit(self.root)
        self.moves = self.feasible_moves()
        self.prune()
        relocated = relative.relocate_references(self)
        self.place_moves()
        relative.drop_relocations_of_moves_not_made(self, relocated)
        # Edits inside cut lines are dropped (a moved block carries them); inserts at a cut's edge stay.
        dropped = set()
        for key in self.cuts.values():
            lo, hi = self.lines.starts[key.first_line], self.lines.after(key.last_line)
            dropped.update(id(e) for e in self.edits_within(lo, hi) if e.start < e.end or lo < e.start < hi)
        self.edits = [e for e in self.edits if id(e) not in dropped]
        for key in self.cuts.values():
            if id(key) in self.move_targets:
                self.ops.append(("move", key.raw, key.path, self.move_targets[id(key)]))
            elif self.cut_info.get(id(key), ("",))[0] == "key-removal":
                self.ops.append(("remove", key.raw, key.path))
            else:
                self.ops.append(("prune", key.raw, key.path))
            if not any(self._inside(key, other) for other in self.cuts.values() if other is not key):
                kind, message, prs = self.cut_info.get(id(key), ("key-rename", f"{'.'.join(key.path)} left empty", ()))
                start, end = self.lines.starts[key.first_line], self.lines.after(key.last_line)
                if end == len(self.src) and not self.src.endswith((b"\n", b"\r")) and key.first_line:
                    # The file's last line has no newline: cut the one before it, so the file still ends without.
                    previous = self.lines.raw[key.first_line - 1]
                    start -= len(previous) - len(previous.rstrip(b"\r\n"))
                self.edits.append(Edit(start, end, b"", kind, message, prs))

    def edits_within(self, start: int, end: int) -> list[Edit]:
        """The planned edits inside [start, end], by bisection on an index of the edits by start
        (rebuilt when edits were added): a scan of every edit per cut or move was quadratic."""
        if self._edit_index is None or self._edit_index[2] != len(self.edits):
            ordered = sorted(self.edits, key=lambda e: e.start)
            self._edit_index = ([e.start for e in ordered], ordered, len(self.edits))
        starts, ordered, _ = self._edit_index
        return [e for e in ordered[bisect.bisect_left(starts, start):bisect.bisect_right(starts, end)]
                if e.end <= end]

    def _owns_its_line(self, key: Key) -> bool:
        line = key.key.start_mark.line
        return not self.lines.text[line][:key.key.start_mark.column].strip()

    def _inside(self, inner: Key, outer: Key) -> bool:
        return outer.first_line <= inner.first_line and inner.last_line <= outer.last_line

    def visit(self, mapping: BlockMapping) -> None:
        for key in mapping.keys:
            dotted = ".".join(key.path)
            change = literal.key_target(self.maps, dotted)
            if change is not None and change.action == "rename" and key.children is not None:
                new = tuple(change.new.split("."))
                existing = self._find(new)
                if not self._subtree_follows(key.children, key.path, new) or \
                        (existing is not None and existing.children is not None):
                    change = None  # parts go elsewhere, or the new mapping exists: merge key by key
            if change is not None and change.action != "warn" and not self._owns_its_line(key):
                self.manual(key, f"{change.old}: the key shares its line with other YAML syntax; edit it by hand",
                            change)
                continue
            if change is None:
                if key.children is not None:
                    self.visit(key.children)
                elif isinstance(key.value, yaml.MappingNode) and key.value.flow_style:
                    self._flow_mapping(key)
                continue
            if change.action == "warn":
                self.findings.append(Finding(self.lines.byte(key.key.start_mark), "key-warn",
                                             f"{change.old}: {literal.first_note(change)}", change.hint,
                                             change.prs, severity="warning"))
                if key.children is not None:
                    self.visit(key.children)
            elif change.action == "remove":
                self.cuts[id(key)] = key
                self.cut_info[id(key)] = ("key-removal", f"removed {change.old}", change.prs)
                if change.hint:
                    self.findings.append(Finding(self.lines.byte(key.key.start_mark), "key-removal",
                                                 f"removed {change.old}", change.hint, change.prs, "info"))
            else:
                self.rename(key, tuple(change.new.split(".")), change)

    def _find(self, path: tuple[str, ...]) -> Key | None:
        """The key written at `path` (one component per level), if the file has it."""
        mapping, found = self.root, None
        if path[:len(mapping.path)] != mapping.path or len(path) == len(mapping.path):
            return None
        for name in path[len(mapping.path):]:
            if mapping is None:
                return None
            found = next((k for k in mapping.keys if k.local == (name,)), None)
            if found is None:
                return None
            mapping = found.children
        return found

    def _subtree_follows(self, mapping: BlockMapping, old: tuple[str, ...], new: tuple[str, ...]) -> bool:
        for key in mapping.keys:
            rel = key.path[len(old):]
            change = literal.key_target(self.maps, ".".join(key.path))
            if change is None or change.action != "rename" or tuple(change.new.split(".")) != new + rel:
                return False
            if key.children is not None and not self._subtree_follows(key.children, old, new):
                return False
        return True

    def _flow_mapping(self, key: Key) -> None:
        self.flow_mapping_findings(key.value, key.path)

    def flow_mapping_findings(self, node: yaml.MappingNode, path: tuple[str, ...]) -> None:
        """A manual step for each changed key inside a flow mapping (`{a: {b: 1}}`) at `path`."""
        stack = [(node, path)]
        while stack:
            node, path = stack.pop()
            for k, v in node.value:
                if not isinstance(k, yaml.ScalarNode):
                    continue
                sub = path + tuple(str(k.value).split("."))
                if literal.key_target(self.maps, ".".join(sub)) is not None:
                    self.findings.append(Finding(self.lines.byte(k.start_mark), "key-rename",
                                                 f"{'.'.join(sub)} changes, but it is inside a flow mapping "
                                                 "({...}); edit it by hand"))
                if isinstance(v, yaml.MappingNode):
                    stack.append((v, sub))

    def rename(self, key: Key, new: tuple[str, ...], change: KeyChange) -> None:
        holder = key.mapping.path
        if new[:len(self.root.path)] != self.root.path:
            self.manual(key, f"{change.old} -> {change.new} leaves this file's `@package`; move it by hand", change)
            return
        if len(key.local) > 1 or new[:-1] == key.path[:-1]:
            local = new[len(holder):]
            if new[:len(holder)] != holder:
                self.manual(key, f"{change.old} -> {change.new}: a dotted key written flat cannot move out of "
                                 f"{'.'.join(holder) or 'the top level'}; move it by hand", change)
            elif any(other.local == local for other in key.mapping.keys):
                self.manual(key, f"{change.old} -> {change.new}: the new key is already set here; merge by hand",
                            change)
            else:
                start, end = self._key_text_span(key)
                self.edits.append(Edit(start, end, ".".join(local).encode(), "key-rename",
                                       f"{change.old} -> {change.new}", change.prs))
                self.ops.append(("rekey", key.raw, key.path, new, ".".join(local)))
            return
        self.moves.append((key, new, change))

    def _key_text_span(self, key: Key) -> tuple[int, int]:
        start, end = self.lines.byte(key.key.start_mark), self.lines.byte(key.key.end_mark)
        if key.key.style in ("'", '"'):
            start, end = start + 1, end - 1
        return start, end

    # -- moves ----------------------------------------------------------------------------------------
    def feasible_moves(self) -> list:
        """The moves that can be made; the others become manual findings and their keys stay."""
        self.leaving = set(self.cuts) | {id(k) for k, _, _ in self.moves}
        feasible, claimed = [], []
        for key, new, change in self.moves:
            if any(_overlaps(new, other) for other in claimed):
                self.manual(key, f"{change.old} -> {change.new}: another key of this file moves there too; "
                                 "merge by hand", change)
                continue
            try:
                target = self._destination(key, new, {})
                self._block(key, new[-1], target.indent_of(new), change)
            except Unsafe as exc:
                self.manual(key, f"{change.old} -> {change.new}: {exc}; move it by hand", change)
                continue
            feasible.append((key, new, change))
            claimed.append(new)
        self.leaving = set(self.cuts) | {id(k) for k, _, _ in feasible}
        return feasible

    def prune(self) -> None:
        """A mapping left with no keys by cuts and moves goes too (else its key would become null)."""
        leaving = set(self.leaving)
        targets = [new for _, new, _ in self.moves]
        changed = True
        while changed:
            changed = False
            for mapping in self.block_mappings(self.root):
                owner = mapping.owner
                if owner is None or id(owner) in leaving or not mapping.keys:
                    continue
                if any(new[:len(owner.path)] == owner.path for new in targets):
                    continue
                if all(id(k) in leaving for k in mapping.keys):
                    leaving.add(id(owner))
                    self.cuts[id(owner)] = owner
                    changed = True

    def block_mappings(self, mapping: BlockMapping):
        yield mapping
        for key in mapping.keys:
            if key.children is not None:
                yield from self.block_mappings(key.children)

    def place_moves(self) -> None:
        inserts: dict[tuple, Insert] = {}  # (offset, parent path) -> what goes there
        for key, new, change in self.moves:
            try:
                target = self._destination(key, new, inserts)
                block = self._block(key, new[-1], target.indent_of(new), change)
            except Unsafe as exc:
                self.manual(key, f"{change.old} -> {change.new}: {exc}; move it by hand", change)
                continue
            target.add(new, block, key, change)
            self.cuts[id(key)] = key
            self.cut_info[id(key)] = ("key-rename", f"{change.old} -> {change.new} (moved from here)", change.prs)
            self.move_targets[id(key)] = new
        at_offset: dict[int, list[Insert]] = {}
        for (offset, _), insert in inserts.items():
            if any(self.lines.starts[c.first_line] < offset < self.lines.after(c.last_line)
                   for c in self.cuts.values()):
                for key, change in insert.moved:
                    self.manual(key, f"{change.old} -> {change.new}: the new parent is itself moved or removed; "
                                     "move it by hand", change)
                    del self.cuts[id(key)]
                continue
            at_offset.setdefault(offset, []).append(insert)
        for offset, group in at_offset.items():
            # Mappings ending on the same line: the innermost one's keys come first.
            group.sort(key=lambda insert: -len(insert.path))
            text = b"".join(insert.render(self.lines.newline) for insert in group)
            if offset == len(self.src) and not self.src.endswith((b"\n", b"\r")):
                text = self.lines.newline + text[:-len(self.lines.newline)]  # and still no final newline
            moved = [change for insert in group for _, change in insert.moved]
            self.edits.append(Edit(offset, offset, text, "key-rename", "; ".join(f"{c.old} -> {c.new}" for c in moved),
                                   tuple(dict.fromkeys(pr for c in moved for pr in c.prs))))

    def _destination(self, key: Key, new: tuple[str, ...], inserts: dict) -> "Insert":
        """Where the moved block goes: the end of the deepest existing parent mapping of `new`."""
        mapping = self.root
        parent = new[:-1]
        depth = len(mapping.path)
        if parent[:depth] != mapping.path:
            raise Unsafe("the new key is outside this file's `@package`")
        while depth < len(parent):
            found = next((k for k in mapping.keys if k.local == (parent[depth],)), None)
            if found is None:
                break
            if id(found) in self.leaving:
                raise Unsafe(f"its new parent {'.'.join(found.path)} is moved or removed")
            if found.children is not None:
                mapping = found.children
                depth += 1
                continue
            if is_empty_null(found.value):
                offset = self.lines.after(found.key.start_mark.line)
                return inserts.setdefault((offset, found.path), Insert(
                    offset, found.key.start_mark.column + self.step, found.path, self.step))
            raise Unsafe(f"{'.'.join(found.path)} holds a value that is not a block mapping")
        if depth == len(parent) and any(k.local == (new[-1],) for k in mapping.keys):
            raise Unsafe("the new key is already set")
        if not mapping.keys:
            raise Unsafe("its new parent mapping is empty")
        last = max(k.last_line for k in mapping.keys)
        offset = self.lines.after(last)
        return inserts.setdefault((offset, mapping.path), Insert(offset, mapping.column, mapping.path, self.step))

    def _block(self, key: Key, name: str, indent: int, change: KeyChange) -> list[bytes]:
        """The key's lines, with the edits inside them applied, re-indented to `indent` and renamed to `name`."""
        start, end = self.lines.starts[key.first_line], self.lines.after(key.last_line)
        name_start, name_end = self._key_text_span(key)
        inner = [e for e in self.edits_within(start, end) if e.start < end]
        inner.append(Edit(name_start, name_end, name.encode(), "key-rename", ""))
        text, cursor = [], start
        for edit in sorted(inner, key=lambda e: (e.start, e.end)):
            if edit.start < cursor:
                raise Unsafe("overlapping edits inside it")
            text.append(self.src[cursor:edit.start] + edit.replacement)
            cursor = edit.end
        text.append(self.src[cursor:end])
        shift = indent - key.key.start_mark.column
        out = []
        for raw in b"".join(text).splitlines():
            if not raw.strip():
                out.append(b"")
            elif shift >= 0:
                out.append(b" " * shift + raw)
            else:
                have = len(raw) - len(raw.lstrip(b" "))
                if have < -shift and not raw.lstrip().startswith(b"#"):
                    raise Unsafe("a line of its value is indented less than the key")
                out.append(raw[min(have, -shift):])
        return out


def _overlaps(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """Is one path the other or inside it?"""
    return a[:len(b)] == b or b[:len(a)] == a

