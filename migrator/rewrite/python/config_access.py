"""Config keys spelt in Python code, renamed all or none per key, and only on verl's config.

An access spells a key as attributes, strings or both: `cfg.a.b`, `cfg.a.get("b")`, `cfg["a"]["b"]`,
`getattr(cfg.a, "b")`, `"b" in cfg.a`, `OmegaConf.select(cfg, "a.b")`, `OmegaConf.update(cfg, "a.b", v)`.
An access whose object is provably verl's config (`provenance`) is resolved from that object's node; any
other is matched the old way (any run of names that spells an old key) and can only be reported.
Every occurrence of one old key in a file gets the same decision: all renamed when each is on verl's
config and can be edited in place, else none, each reported with one shared message.
"""

from __future__ import annotations

import ast
import bisect
import re
from dataclasses import dataclass, field
from itertools import repeat

from migrator.edits import Edit, Finding
from migrator.mapping import KeyChange, MappingSet
from migrator.mapping.changes import EntryContext
from migrator.mapping.config_objects import ConfigObjects
from migrator.mapping.per_set import per_table_set
from migrator.prefilter import Prefilter
from migrator.rewrite.literal import first_note, key_target, whole_key_change
from migrator.rewrite.python.key_spelling import Part, plan_edits
from migrator.rewrite.python.parsed import child_nodes, parse
from migrator.rewrite.python.parsed import line_starts as parser_line_starts
from migrator.rewrite.python.provenance import ConfigNode, Provenance, provenance_of

CODE = "VM115"
# Calls whose second argument is a dotted key path into their first (OmegaConf's select and update).
PATH_CALLS = frozenset({("OmegaConf", "select"), ("OmegaConf", "update")})
# Calls whose second argument is one key of their first.
KEY_CALLS = frozenset({"getattr", "hasattr"})
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*\Z")
# DictConfig and dict methods: the last name of `cfg.node.items()` is no key.
METHODS = frozenset({"items", "keys", "values", "copy", "pop", "setdefault", "update", "get"})
@per_table_set
def config_roots(mappings: MappingSet) -> frozenset[str]:
    """The top-level config nodes of the target release (empty without shipped facts)."""
    facts = mappings.history.facts if mappings.history is not None else None
    keys = facts.keys(mappings.to_release) if facts is not None else ()
    return frozenset(k.split(".", 1)[0] for k in keys)


@dataclass
class Reference:
    """One occurrence of an old key."""

    change: KeyChange
    offset: int
    edits: list[tuple[int, int, bytes]] | None  # None: cannot be edited in place
    proven: bool
    links: set[str] = field(default_factory=set)  # other keys that must get the same decision


@per_table_set
def _key_tokens(mappings: MappingSet) -> Prefilter:
    """Every spelling of an old key holds each of its names: the longest one of each (`num_cpus` of
    `ray_init.num_cpus`) is looked for, as a whole name, before anything is parsed or resolved."""
    return Prefilter({max(k.split("."), key=len) for k in _renamed_keys(mappings) + _removed_keys(mappings)})


# After a name: a key of a dict literal (`{"reward_model": {...}}` in data preparation), never an access.
_DICT_KEY = re.compile(rb"""["']\s*:""")
_NAME = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")


def _renamed_keys(mappings: MappingSet) -> list[str]:
    return [k for k in mappings.old_keys() if getattr(key_target(mappings, k), "action", None) == "rename"]


def _removed_keys(mappings: MappingSet) -> list[str]:
    """Keys removed or only warned about: reported in every spelling (`cfg.a.get("b")` as `cfg.a.b`)."""
    return [k for k in mappings.old_keys() if getattr(key_target(mappings, k), "action", None) in ("remove", "warn")]


@per_table_set
def _moved_apart(mappings: MappingSet) -> frozenset[str]:
    """Nodes above renamed keys that the target release no longer has and no entry moves whole
    (`ray_init`: its keys went to `ray_kwargs.ray_init.*` and `ray_kwargs.timeline_json_file`)."""
    facts = mappings.history.facts if mappings.history is not None else None
    target = facts.nodes(mappings.to_release) if facts is not None else frozenset()
    above = set()
    for key in _renamed_keys(mappings) if target else ():
        parts = key.split(".")
        above.update(".".join(parts[:n]) for n in range(1, len(parts)))
    return frozenset(n for n in above if n not in target and key_target(mappings, n) is None)


def might_spell_keys(source: bytes, mappings: MappingSet, no_keys: list[tuple[int, int]] = ()) -> bool:
    """Does an old renamed key's longest name occur as a whole name, other than as a dict literal's key or
    inside one of `no_keys` (sorted spans of string tokens that `cannot_spell_key`: a launcher's override
    strings)? The pass reads a key only from an access's names or from a string that is a whole key or
    key path, and resolves nothing unless one of them is such a name (`resolve_all`)."""
    search = _key_tokens(mappings)
    if not search(source):
        return False
    starts = [start for start, _ in no_keys]
    for _, start, end in search.matches(source):
        if (start and source[start - 1] in _NAME) or (end < len(source) and source[end] in _NAME):
            continue
        if _DICT_KEY.match(source, end):
            continue
        at = bisect.bisect_right(starts, start) - 1
        if at < 0 or end > no_keys[at][1]:
            return True
    return False


# A byte no key or key path has (`_KEY`, dots between): `=` of an override, a blank of a command.
_NOT_OF_A_KEY = re.compile(rb"[^A-Za-z0-9_.\-]")


def cannot_spell_key(content: bytes) -> bool:
    """Can no string whose bytes between the quotes are `content` be a key, a key path or a key's part,
    alone or joined with others? Without a backslash its value is its bytes, and one that is no key's
    is none joined either."""
    return b"\\" not in content and _NOT_OF_A_KEY.search(content) is not None


def locate_config_keys(source: bytes, maps: MappingSet) -> tuple[list[Edit], list[Finding]]:
    """Edits and findings for every old config key the file spells: in an access, or as a whole
    string elsewhere (`KEYS = ["a.b"]`: reported, it may reach verl's config or the program's own)."""
    line_starts = parser_line_starts(source)
    try:
        tree = parse(source)
        objects = maps.history.config_objects if maps.history is not None else ConfigObjects()
        walker = _Walker(source, line_starts, maps, lambda: provenance_of(tree, source, line_starts, objects))
        walker.walk(tree)
        walker.resolve_all()
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return [], []  # the front-ends report the file
    edits, findings = _decide(walker.references, line_starts)
    return edits, findings + [_removal_finding(offset, change) for offset, change in walker.removals]


def _removal_finding(offset: int, change: KeyChange) -> Finding:
    """A removed key spelt with a string (`.get("b")`, `["b"]`); attribute chains are the locator's."""
    if change.action == "warn":
        return Finding(offset, "key-warn", f"{change.old}: {first_note(change)}", change.hint, change.prs,
                       severity="warning")
    return Finding(offset, "key-removal", f"{change.old} was removed; change this code by hand", change.hint,
                   change.prs)


def _decide(references: list[Reference], line_starts: list[int]) -> tuple[list[Edit], list[Finding]]:
    parent: dict[str, str] = {}

    def find(key: str) -> str:
        while parent.get(key, key) != key:
            key = parent[key]
        return key

    for ref in references:
        for other in ref.links:
            parent[find(other)] = find(ref.change.old)
    olds = sorted({ref.change.old for ref in references})
    for i, old in enumerate(olds):  # a moved node and a key under it are one decision
        for other in olds[i + 1:]:
            if other.startswith(old + "."):
                parent[find(other)] = find(old)
    groups: dict[str, list[Reference]] = {}
    for ref in references:
        groups.setdefault(find(ref.change.old), []).append(ref)
    edits: list[Edit] = []
    findings: list[Finding] = []
    for refs in groups.values():
        if all(r.proven and r.edits is not None for r in refs):
            for r in refs:
                for start, end, text in r.edits or ():
                    edits.append(Edit(start, end, text, "key-rename", f"{r.change.old} -> {r.change.new}",
                                      r.change.prs))
            continue
        findings.extend(_report(refs, line_starts))
    return edits, findings


def _report(refs: list[Reference], line_starts: list[int]) -> list[Finding]:
    def line(offset: int) -> int:
        return bisect.bisect_right(line_starts, offset)

    renames = ", ".join(dict.fromkeys(f"{r.change.old} -> {r.change.new}" if r.change.new else
                                      f"{r.change.old} (gone: its keys moved one by one)" for r in refs))
    lines = sorted({line(r.offset) for r in refs})
    unproven = sorted({line(r.offset) for r in refs if not r.proven})
    stuck = sorted({line(r.offset) for r in refs if r.proven and r.edits is None})
    why = []
    if unproven:
        why.append(f"nothing shows the object on line{'s' if len(unproven) > 1 else ''} "
                   f"{', '.join(map(str, unproven))} is verl's config (it may be your own)")
    if stuck:
        why.append(f"line{'s' if len(stuck) > 1 else ''} {', '.join(map(str, stuck))} cannot be edited in place "
                   "(the key is spelt partly where a name was bound, or in a form that cannot hold the new key)")
    places = f"{len(refs)} place{'s' if len(refs) > 1 else ''}"
    message = (f"config key {renames} ({places} in this file: line{'s' if len(lines) > 1 else ''} "
               f"{', '.join(map(str, lines))}) not renamed: {'; '.join(why)}; rename every place by hand "
               "where the object is verl's config, or none")
    prs = tuple(dict.fromkeys(pr for r in refs for pr in r.change.prs))
    return [Finding(r.offset, "key-rename", message, None, prs, code=CODE) for r in sorted(refs, key=lambda r: r.offset)]


_ACCESS_KINDS = frozenset({ast.Attribute, ast.Subscript, ast.Call, ast.Compare})


class _Walker:
    """Finds every access, with the functions and class around it."""

    def __init__(self, source: bytes, line_starts: list[int], maps: MappingSet, provenance):
        self.src = source
        self.line_starts = line_starts
        self.maps = maps
        self._provenance = provenance  # built on first use: most files spell no old key at all
        self.tokens = frozenset(_key_tokens(maps).tokens)
        self._moved_apart: frozenset[str] | None = None
        self.roots = config_roots(maps)
        self.inside: set[int] = set()  # ids of nodes already read as part of an outer access
        self.accesses: list[tuple] = []  # (root, parts, scopes, class), resolved once the walk is done
        self.references: list[Reference] = []
        self.removals: list[tuple[int, KeyChange]] = []  # removed keys spelt with a string (not attributes only)
        self.string_starts: set[int] = set()  # contents starts of the strings read as keys
        self.bound_at: dict[int, str] = {}  # start of a `x = config.node` value -> that node's old key

    @property
    def provenance(self) -> Provenance:
        if callable(self._provenance):
            self._provenance = self._provenance()
        return self._provenance

    # -- the walk ------------------------------------------------------------------------------------
    def walk(self, tree: ast.Module) -> None:
        """Every node once, parents before children (an access marks its inner nodes and strings before
        they come up), knowing the functions around it and the class whose body holds the innermost."""
        stack: list[tuple] = [(tree, (), None)]
        while stack:
            node, scopes, body_class = stack.pop()
            kind = type(node)
            if kind is ast.Name:
                continue
            if kind is ast.Constant:
                self.visit_Constant(node)
                continue
            if kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
                outer = [*node.decorator_list, node.args, *([node.returns] if node.returns else [])]
                inner = scopes + ((node, body_class),)
                stack.extend((child, inner, None) for child in reversed(node.body))
                stack.extend((child, scopes, body_class) for child in reversed(outer))
                continue
            if kind is ast.Lambda:  # its parameters shadow the names around it (`lambda config: ...`)
                stack.append((node.body, scopes + ((node, body_class),), None))
                stack.append((node.args, scopes, body_class))
                continue
            if kind is ast.ClassDef:
                stack.extend((child, scopes, node) for child in reversed(node.body))
                stack.extend((child, scopes, body_class) for child in reversed(
                    [*node.decorator_list, *node.bases, *node.keywords]))
                continue
            if kind is ast.JoinedStr:  # an f-string's literal parts are the front-ends' (overrides, paths)
                if len(node.values) == 1 and type(node.values[0]) is ast.Constant:
                    self.visit_Constant(node.values[0])  # `f"a.b"`: one whole value
                stack.extend((v, scopes, body_class) for v in reversed(node.values) if type(v) is ast.FormattedValue)
                continue
            if kind in _ACCESS_KINDS and id(node) not in self.inside:
                found = self.access(node)
                if found is not None:
                    self.inside.update(found[2])
                    self.string_starts.update(p.span[0] for p in found[1] if p.kind in ("key", "path") and p.span)
                    cls = scopes[-1][1] if scopes else None
                    self.accesses.append((found[0], found[1], [f for f, _ in scopes], cls))
            children = child_nodes(node)
            if children:  # shared with the other passes: not reversed in place
                stack.extend(zip(reversed(children), repeat(scopes), repeat(body_class)))  # no Python frame a child

    def visit_Constant(self, node: ast.Constant) -> None:
        """A string that is exactly an old key, outside every access: its object is unknown."""
        value = node.value.decode("latin-1") if isinstance(node.value, bytes) else node.value
        if not isinstance(value, str) or "." not in value or len(value) > 200:
            return
        start = self.offset(node.lineno, node.col_offset)
        change = whole_key_change(self.maps, value.encode("ascii", "replace"))
        if change is None or change.action != "rename":
            return
        parts = self.string(node, dotted=True)
        if not parts or parts[0].span is None or parts[0].span[0] not in self.string_starts:
            self.references.append(Reference(change, parts[0].span[0] if parts and parts[0].span else start, None, False))

    def access(self, node):
        """(root Name, parts, ids of the nodes it spans) of an access at node, or None."""
        if isinstance(node, ast.Call) and not node.keywords and len(node.args) >= 2:
            func = node.func
            name = func.id if isinstance(func, ast.Name) else None
            pair = (func.value.id, func.attr) if isinstance(func, ast.Attribute) and isinstance(
                func.value, ast.Name) else None
            if name in KEY_CALLS or pair in PATH_CALLS:
                base = self.chain(node.args[0])
                key = self.string(node.args[1], dotted=pair is not None)
                return (base[0], base[1] + key, base[2]) if base is not None and key else None
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.In, ast.NotIn)):
            base = self.chain(node.comparators[0])
            key = self.string(node.left, dotted=False)
            return (base[0], base[1] + key, base[2]) if base is not None and key else None
        found = self.chain(node)
        return found if found is not None and found[1] else None

    def chain(self, node):
        """(root Name, parts, ids of its nodes) for `name.a["b"].get("c")...`, or None."""
        parts: list[Part] = []
        spanned: list[int] = []
        current = node
        while True:
            if isinstance(current, ast.Name):
                return current, parts[::-1], spanned
            spanned.append(id(current))
            if isinstance(current, ast.Attribute):
                end = self.offset(current.end_lineno, current.end_col_offset)
                start = end - len(current.attr.encode())
                span = (start, end) if self.src[start:end] == current.attr.encode() else None
                parts.append(Part(current.attr, "attr", span))
                current = current.value
            elif isinstance(current, ast.Subscript) and (key := self.string(current.slice, dotted=False)):
                parts.extend(key)
                current = current.value
            elif isinstance(current, ast.Call) and isinstance(current.func, ast.Attribute) \
                    and current.func.attr == "get" and 1 <= len(current.args) <= 2 and not current.keywords \
                    and (key := self.string(current.args[0], dotted=False)):
                spanned.append(id(current.func))
                parts.extend(key)
                current = current.func.value
            else:
                return None

    def string(self, node, dotted: bool) -> list[Part]:
        """A string constant as key parts (several for a dotted path), [] when it is no key."""
        if not isinstance(node, ast.Constant) or not isinstance(node.value, str):
            return []
        texts = node.value.split(".") if dotted else [node.value]
        if not all(_KEY.match(t) for t in texts):
            return []
        start = self.offset(node.lineno, node.col_offset)
        end = self.offset(node.end_lineno, node.end_col_offset)
        raw = self.src[start:end]
        quote = raw[-1:]
        inner = (start + raw.index(quote) + 1, end - 1) if quote in (b"'", b'"') and raw.count(quote) == 2 else None
        if inner is not None and self.src[inner[0]:inner[1]] != node.value.encode():
            inner = None
        return [Part(t, "path" if dotted else "key", inner, i) for i, t in enumerate(texts)]

    def offset(self, line: int, col: int) -> int:
        return self.line_starts[line - 1] + col

    # -- resolving -----------------------------------------------------------------------------------
    def resolve_all(self) -> None:
        """Resolve the accesses; none needs the provenance unless one spells an old key's longest name
        (a name bound to a node, `r = cfg.actor_rollout_ref`, is itself such an access)."""
        if not any(p.text in self.tokens for _, parts, _, _ in self.accesses for p in parts):
            return
        for access in self.accesses:
            self.resolve(*access)

    def resolve(self, root: ast.Name, parts: list[Part], scopes: list, cls) -> None:
        offset = self.offset(root.lineno, root.col_offset)
        leading = []
        for part in parts:
            if part.kind != "attr":
                break
            leading.append(part.text)
        base = self.provenance.node_of(scopes, cls, [root.id, *leading])
        if base is None:
            self.unproven(parts, offset)
            return
        consumed, node = base
        own = parts[consumed:]
        prefix = list(node.prefix)
        if not any(t in self.tokens for t in prefix) and not any(p.text in self.tokens for p in own):
            return
        spelled = prefix
        links: set[str] = set()
        if node.origin is not None and node.origin[0] in self.bound_at:
            links.add(self.bound_at[node.origin[0]])
            moved = self.lookup(".".join(prefix), node)
            spelled = moved.new.split(".") if moved is not None and moved.action == "rename" else prefix
        if own and own[-1].kind == "attr" and own[-1].text in METHODS:
            own = own[:-1]  # `cfg.node.items()` reads the node
        path = [Part(t, "fixed", None) for t in spelled] + own
        whole = ".".join(prefix + [p.text for p in own])
        if own and whole in self.moved_apart():
            # `ray.init(**cfg.ray_init)`: a node the target no longer has, whose keys moved one by one
            self.references.append(Reference(KeyChange(whole, None, "rename", None, ()), offset, None, True, links))
            return
        for j in range(len(prefix) + len(own), len(prefix), -1):
            key = ".".join(prefix + [p.text for p in own[:j - len(prefix)]])
            change = self.lookup(key, node)
            if change is None:
                continue
            if change.action == "rename":
                used = path[:len(spelled) + j - len(prefix)]
                ref = Reference(change, offset, plan_edits(used, change.new.split("."), self.src), True, links)
                self.references.append(ref)
                if consumed + j - len(prefix) == len(parts):
                    self.bound_at[offset] = change.old
            elif any(p.kind != "attr" for p in own[:j - len(prefix)]):
                self.removals.append((offset, change))
            return

    def moved_apart(self) -> frozenset[str]:
        if self._moved_apart is None:
            self._moved_apart = _moved_apart(self.maps)
        return self._moved_apart

    def unproven(self, parts: list[Part], offset: int) -> None:
        """The old matching: any run of two or more names that spells an old key (not inside a node of
        the target's config, `cfg.ray_kwargs.ray_init.x`); only reported."""
        texts = [p.text for p in parts]
        for i in range(len(texts) - 1):
            if i > 0 and texts[i - 1] in self.roots:
                return
            for j in range(len(texts), i + 1, -1):
                change = key_target(self.maps, ".".join(texts[i:j]))
                if change is None:
                    continue
                if change.action == "rename":
                    self.references.append(Reference(change, offset, None, False))
                elif any(p.kind != "attr" for p in parts[i:j]):
                    self.removals.append((offset, change))
                return

    def lookup(self, key: str, node: ConfigNode) -> KeyChange | None:
        if not key:
            return None
        if node.config_name and not self.maps.is_ppo_config(node.config_name):
            return self.maps.key(key, EntryContext(None, node.config_name))
        return key_target(self.maps, key)
