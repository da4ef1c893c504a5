"""OmegaConf relative interpolations (`${.x}`, `${..a.b}`, `${oc.select:.x,d}`): they resolve from the
mapping holding the value, so a move of the value's key or of the key they name changes their text."""

from __future__ import annotations

import re

import yaml

from migrator.edits import Edit, Finding
from migrator.mapping import MappingSet
from migrator.rewrite import literal
from migrator.rewrite.yaml.document import STR_TAG

RELATIVE = re.compile(
    rb"\$\{(?:oc\.select:)?(?P<ref>\.+[A-Za-z_][A-Za-z0-9_-]*(?:\.[A-Za-z0-9_][A-Za-z0-9_-]*)*)(?=[},])")


def relocations(text: bytes, start: int, end: int, container: tuple[str, ...], new_container: tuple[str, ...],
                maps: MappingSet) -> list[tuple[int, int, bytes | None, str]]:
    """(start, end, new reference or None, what) for each relative interpolation in text[start:end] of a
    value held by mapping `container` that will be held by `new_container`: None when no reference can
    name the target after the change (the key it names is removed)."""
    out = []
    for m in RELATIVE.finditer(text, start, end):
        ref = m.group("ref").decode("ascii")
        names = ref.lstrip(".")
        up = len(ref) - len(names) - 1
        if up > len(container):
            continue  # above the config's root: it never resolved
        target = container[:len(container) - up] + tuple(names.split("."))
        change = literal.key_target(maps, ".".join(target))
        if change is not None and change.action == "remove":
            out.append((m.start("ref"), m.end("ref"), None, f"{ref} names {change.old}, which was removed"))
            continue
        new_target = tuple(change.new.split(".")) if change is not None and change.action == "rename" else target
        if new_container == container and new_target == target:
            continue
        new_ref = relative_reference(new_container, new_target)
        if new_ref != ref:
            out.append((m.start("ref"), m.end("ref"), new_ref.encode("ascii"), f"{ref} -> {new_ref}"))
    return out


def relative_reference(container: tuple[str, ...], target: tuple[str, ...]) -> str:
    """The reference to `target` from a value held by mapping `container`: `.x` for a sibling."""
    common = 0
    while common < min(len(container), len(target) - 1) and container[common] == target[common]:
        common += 1
    return "." * (len(container) - common + 1) + ".".join(target[common:])


def relocate_value(value: str, container: tuple[str, ...], new_container: tuple[str, ...], maps: MappingSet) -> str:
    """A loaded string value with its relative references relocated (what the edited file must hold)."""
    data = value.encode("utf-8")
    out, cursor = [], 0
    for start, end, new_ref, _ in relocations(data, 0, len(data), container, new_container, maps):
        if new_ref is not None:
            out.append(data[cursor:start] + new_ref)
            cursor = end
    out.append(data[cursor:])
    return b"".join(out).decode("utf-8")


def relocate_references(planner) -> list[tuple[tuple[int, ...], list[Edit], tuple]]:
    """Edits for `${.x}`-style references whose value or target moves (before the moved blocks are
    built, which carry them); returns (ids of the moved keys each relies on, its edits, its op)."""
    moved = {key.path: (id(key), new) for key, new, _ in planner.moves}
    moved.update({op[2]: (None, op[3]) for op in planner.ops if op[0] == "rekey"})
    out = []
    for mapping in planner.block_mappings(planner.root):
        for key in mapping.keys:
            if key.children is not None:
                continue  # its keys are visited as keys of their own
            relies_on, new_path = [], key.path
            for depth in range(len(key.path), 0, -1):
                if key.path[:depth] in moved:
                    key_id, new = moved[key.path[:depth]]
                    relies_on.append(key_id)
                    new_path = new + key.path[depth:]
                    break
            for value, raw, path in _string_scalars(key.value, (), ()):
                start, end = planner.lines.byte(value.start_mark), planner.lines.byte(value.end_mark)
                if b"${." not in planner.src[start:end] and b":." not in planner.src[start:end]:
                    continue
                # A value's reference resolves from the node holding it: the mapping of its key, or
                # the list or flow mapping it is an element of.
                container, new_container = (key.path + path)[:-1], (new_path + path)[:-1]
                edits = []
                for ref_start, ref_end, new_ref, what in relocations(
                        planner.src, start, end, container, new_container, planner.maps):
                    if new_ref is None:
                        planner.findings.append(Finding(ref_start, "key-removal",
                                                        f"relative interpolation {what}; fix it by hand"))
                    else:
                        edits.append(Edit(ref_start, ref_end, new_ref, "key-rename",
                                          f"relative interpolation {what}"))
                if edits:
                    planner.edits.extend(edits)
                    op = ("relative", key.raw + raw, container, new_container)
                    planner.ops.append(op)
                    out.append((tuple(i for i in relies_on if i is not None), edits, op))
    return out


def _string_scalars(node, raw: tuple, path: tuple):
    """(string scalar, its raw path below `node` (list indices as ints), its config path) for a key's
    value, through lists and mappings inside it."""
    if isinstance(node, yaml.ScalarNode):
        if node.tag == STR_TAG:
            yield node, raw, path
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            yield from _string_scalars(item, raw + (index,), path + (str(index),))
    elif isinstance(node, yaml.MappingNode):
        for name, value in node.value:
            if isinstance(name, yaml.ScalarNode):
                yield from _string_scalars(value, raw + (name.value,), path + (name.value,))


def drop_relocations_of_moves_not_made(planner, relocated) -> None:
    """A move `place_moves` turned into a manual step leaves its value where it was: so do its references."""
    dropped_edits, dropped_ops = set(), set()
    for relies_on, edits, op in relocated:
        if all(key_id in planner.move_targets for key_id in relies_on):
            continue
        dropped_ops.add(id(op))
        for edit in edits:
            dropped_edits.add(id(edit))
            planner.findings.append(Finding(edit.start, "key-rename",
                                            f"{edit.message} if its key moves; fix it by hand with the move"))
    if dropped_ops:
        planner.ops = [op for op in planner.ops if id(op) not in dropped_ops]
        planner.edits = [e for e in planner.edits if id(e) not in dropped_edits]
