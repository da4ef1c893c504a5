"""Validating an edited YAML file: both versions load, and the data changed by exactly the table's
changes (the planned key operations replayed on the loaded data, each checked against the table)."""

from __future__ import annotations

import copy

import yaml

from migrator.edits import SourceNotParsed
from migrator.mapping import MappingSet
from migrator.rewrite import literal
from migrator.rewrite.yaml.context import in_file_context
from migrator.rewrite.yaml.defaults import config_part, overrides, renamed
from migrator.rewrite.yaml.document import Lines, compose_all, has_anchors, load_all
from migrator.rewrite.yaml.forks import scalar_edits
from migrator.rewrite.yaml.planner import Planner, Unsafe, plan_keys
from migrator.rewrite.yaml.relative import relocate_value


def validate(before: bytes, after: bytes, mappings: MappingSet | None = None) -> str | None:
    """None when `after` loads to `before`'s data with exactly the table's changes applied."""
    try:
        old_docs = load_all(before.decode("utf-8-sig"))
    except (UnicodeDecodeError, yaml.YAMLError, ValueError) as exc:
        raise SourceNotParsed(f"not loadable as YAML: {_first_line(exc)}") from None
    try:
        new_docs = load_all(after.decode("utf-8-sig"))
    except (UnicodeDecodeError, yaml.YAMLError, ValueError) as exc:
        return f"the edited file would not load as YAML: {_first_line(exc)}"
    if mappings is None:
        return None if len(old_docs) == len(new_docs) else "the number of YAML documents would change"
    try:
        expected = expected_data(before, old_docs, mappings)
    except Unsafe as exc:
        return f"the planned key changes do not follow the table: {exc}"
    if expected != new_docs:
        try:  # the defaults list's renames are made only where the names are provably verl's configs
            expected = expected_data(before, old_docs, mappings, defaults=True)
        except Unsafe as exc:
            return f"the planned key changes do not follow the table: {exc}"
        if expected != new_docs:
            return "the edited file's data would differ from the table's changes"
    return None


def _first_line(exc: Exception) -> str:
    """The reason, in one line. ValueError: an integer longer than Python converts (4,300 digits)."""
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return text.split("; use sys.set_int_max_str_digits", 1)[0]


def expected_data(before: bytes, docs: list, maps: MappingSet, defaults: bool = False) -> list:
    """`docs` with the file's planned key changes applied to the data, each checked against the table
    (with `defaults`, also the table's renames of the `defaults:` list's configs).

    The line edits are checked against these data operations, so a move that loses, duplicates or
    re-nests anything is caught; an operation the table does not call for raises `Unsafe`.
    """
    base = 3 if before.startswith(b"\xef\xbb\xbf") else 0
    text = before[base:].decode("utf-8")
    documents = compose_all(text)
    maps = in_file_context(documents, maps)
    docs = [_rewrite_strings(copy.deepcopy(d), maps) for d in docs]
    planner = Planner(before, Lines(before, base), maps)
    plan_keys(planner, before[base:], documents, has_anchors(text))
    if planner.ops:
        _apply_ops(docs[0], planner.ops, len(planner.root.path), maps)
    if defaults:
        _rename_defaults(docs, documents, maps)
    return docs


def _rename_defaults(docs: list, documents: list, maps: MappingSet) -> None:
    """Each `defaults:` item naming a renamed config, renamed and followed by its move's overrides."""
    items = docs[0].get("defaults") if len(docs) == 1 and isinstance(docs[0], dict) else None
    if not isinstance(items, list):
        return
    out = []
    for item in items:
        change = maps.renamed_config(config_part(item)[1]) if isinstance(item, str) else None
        groups = overrides(change.args) if change is not None and change.new is not None else None
        if groups is None:
            out.append(item)
            continue
        out.append(renamed(item, change.new))
        out.extend({f"override {group}": option} for group, option in groups)
    docs[0]["defaults"] = out


def _apply_ops(root: dict, ops: list[tuple], depth: int, maps: MappingSet) -> None:
    def container(raw: tuple) -> dict:
        node = root
        for name in raw[:-1]:
            node = node[name]
        return node

    def expect(path: tuple, action: str, new: tuple | None = None) -> None:
        change = literal.key_target(maps, ".".join(path))
        if change is None or change.action != action or (new is not None and change.new != ".".join(new)):
            raise Unsafe(f"{'.'.join(path)} changed in a way the table does not say")

    def expect_value(raw: tuple, path: tuple, new: str) -> None:
        holder, siblings, node = container(raw), {}, root
        for name in raw[:-1]:  # scalars beside each ancestor too, nearest last (as the planner sees them)
            siblings.update({k: _text(v) for k, v in node.items() if not isinstance(v, (dict, list))})
            node = node[name]
        siblings.update({k: _text(v) for k, v in holder.items() if not isinstance(v, (dict, list))})
        old_text = _text(holder[raw[-1]])
        change = maps.value(".".join(path), old_text, siblings)
        if change is None or change.new != new:
            raise Unsafe(f"{'.'.join(path)}: value {old_text} changed in a way the table does not say")

    for op in ops:  # values first: their raw paths are those of the file before any key moves
        if op[0] == "value":
            expect_value(op[1], op[2], op[3])
            container(op[1])[op[1][-1]] = op[3]
    for op in ops:
        if op[0] == "relative":  # before any key leaves: the value is still at its old raw path
            holder = container(op[1])
            holder[op[1][-1]] = relocate_value(holder[op[1][-1]], op[2], op[3], maps)
    moved = []
    for op in ops:
        if op[0] == "remove":
            expect(op[2], "remove")
            del container(op[1])[op[1][-1]]
        elif op[0] == "move":
            expect(op[2], "rename", op[3])
            moved.append((op[3], container(op[1]).pop(op[1][-1])))
    for op in ops:
        if op[0] == "rekey":
            expect(op[2], "rename", op[3])
            holder = container(op[1])
            holder[op[4]] = holder.pop(op[1][-1])
    for new, value in moved:
        node = root
        for name in new[depth:-1]:
            if node.get(name) is None:
                node[name] = {}
            node = node[name]
            if not isinstance(node, dict):
                raise Unsafe(f"{'.'.join(new)}: its parent is not a mapping")
        if new[-1] in node:
            raise Unsafe(f"{'.'.join(new)} is set twice")
        node[new[-1]] = value
    for op in sorted((op for op in ops if op[0] == "prune"), key=lambda op: -len(op[1])):
        holder = container(op[1])
        if holder.get(op[1][-1]) != {}:
            raise Unsafe(f"{'.'.join(op[2])} was deleted but is not empty")
        del holder[op[1][-1]]


def _text(value) -> str:
    return str(value).lower() if isinstance(value, bool) else "null" if value is None else str(value)


def _rewrite_strings(value, maps: MappingSet):
    if isinstance(value, str):
        data = value.encode("utf-8")
        edits, _ = scalar_edits(data, 0, len(data), maps, whole_key=True, interpolations=True)
        out, cursor = [], 0
        for edit in sorted(set(edits), key=lambda e: (e.start, e.end)):
            if edit.start >= cursor:
                out.append(data[cursor:edit.start] + edit.replacement)
                cursor = edit.end
        out.append(data[cursor:])
        return b"".join(out).decode("utf-8")
    if isinstance(value, dict):
        return {k: _rewrite_strings(v, maps) for k, v in value.items()}
    if isinstance(value, list):
        return [_rewrite_strings(v, maps) for v in value]
    return value
