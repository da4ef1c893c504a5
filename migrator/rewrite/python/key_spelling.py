"""The edits that make one spelling of a config key spell its new key, where that fits in place.

A key is spelt as parts (`cfg.a.get("b")`: the attribute `a`, the string key `b`); a rename is made
by replacing the parts that differ, a run of attributes (`a.b` -> `x.y.b`) or the components of one
path string (`OmegaConf.select(cfg, "a.b")`). A string key cannot hold a dotted name, and a part spelt
where a name was bound (`r = cfg.a; r.b`) is not here to edit: then there is no plan.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Part:
    """One key component of an access: an attribute name, a key in a string, or a component of a
    dotted path string (whose contents are rewritten as a whole)."""

    text: str
    kind: str  # "attr" | "key" | "path" | "fixed" (part of a name's node, bound elsewhere)
    span: tuple[int, int] | None  # the name or the string's contents; None when not editable in place
    index: int = 0  # a path component's place in its string


def plan_edits(parts: list[Part], new: list[str], src: bytes) -> list[tuple[int, int, bytes]] | None:
    """The edits that make `parts` spell `new`, or None when they cannot be made in place."""
    old = [p.text for p in parts]
    a = 0
    while a < min(len(old), len(new)) and old[a] == new[a]:
        a += 1
    b = 0
    while b < min(len(old), len(new)) - a and old[-1 - b] == new[-1 - b]:
        b += 1
    if a == len(old) == len(new):
        return []
    if len(old) == len(new):  # component for component
        edits, paths = [], {}
        for i in range(a, len(old) - b):
            part = parts[i]
            if part.span is None:
                return None
            if part.kind == "path":
                paths.setdefault(part.span, {})[part.index] = new[i]
            elif old[i] != new[i]:
                edits.append((part.span[0], part.span[1], new[i].encode()))
        for span, replaced in paths.items():
            components = src[span[0]:span[1]].decode().split(".")
            for index, text in replaced.items():
                components[index] = text
            edits.append((span[0], span[1], ".".join(components).encode()))
        return edits
    if len(old) - a - b == 0 or len(new) - a - b == 0:  # a pure insertion or deletion: take a neighbour
        if b > 0:
            b -= 1
        elif a > 0:
            a -= 1
    return _replace_run(parts[a:len(parts) - b], new[a:len(new) - b], src)


def _replace_run(parts: list[Part], new: list[str], src: bytes) -> list[tuple[int, int, bytes]] | None:
    """One run of attributes spelt `a.b.c`, or components of one path string, replaced by `new`."""
    if not parts or any(p.span is None for p in parts):
        return None
    start, end = parts[0].span[0], parts[-1].span[1]  # type: ignore[index]
    if all(p.kind == "attr" for p in parts):
        if src[start:end] != ".".join(p.text for p in parts).encode():
            return None
        return [(start, end, ".".join(new).encode())]
    if all(p.kind == "path" and p.span == parts[0].span for p in parts):
        components = src[start:end].decode().split(".")
        components[parts[0].index:parts[-1].index + 1] = new
        return [(start, end, ".".join(components).encode())]
    return None
