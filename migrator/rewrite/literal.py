"""Edits for spans of literal text: string values, prose, comments and code in docs.

Python strings, YAML scalars, Markdown prose and notebook cells all carry the same things a shell
line does (`key=value` overrides, `-m module`, script paths); this turns the shared scanners of
`scan.py` into `Edit`s and `Finding`s for one byte span, so each rewriter only says where its text is.
"""

from __future__ import annotations

import re
import unicodedata

from migrator.edits import Edit, Finding
from migrator.mapping import KeyChange, MappingSet
from migrator.mapping.kinds.path import not_proven_same
from migrator.mapping.precision import SUBTREE_PROBE
from migrator.rewrite import scan
from migrator.rewrite.moved_scripts import held_finding, unsafe_move
from migrator.rewrite.values import override_value_edits, removal_finding, target_change, value_at

# A word starts after these bytes (quotes and brackets too: `["a.b=1", 'c.d=2']`, `(a.b=1)`).
WORD_BOUNDARY = b" \t\n\r;|&()[]{},'\"`=:"
# OmegaConf interpolations of an absolute key: `${a.b.c}`, `${oc.select:a.b.c,default}`.
INTERPOLATION = re.compile(
    rb"\$\{(?:oc\.select:)?(?P<key>[A-Za-z_][A-Za-z0-9_-]*(?:\.[A-Za-z0-9_][A-Za-z0-9_-]*)+)(?=[},])")
# A probe component no real config uses, to ask "does this whole subtree move?".
_PROBE = SUBTREE_PROBE


def first_note(change: KeyChange) -> str:
    if change.note:
        return change.note
    for entry in reversed(change.entries):
        if entry.note:
            return entry.note
    return "has no effect in this release"


def key_target(maps: MappingSet, key: str) -> KeyChange | None:
    """The change for `key`, also when `key` is the root of a subtree the table moves as a whole."""
    change = maps.key(key)
    if change is not None:
        return change
    probe = maps.key(f"{key}.{_PROBE}")
    if probe is None:
        return None
    if probe.action == "rename" and probe.new.endswith("." + _PROBE):
        return KeyChange(key, probe.new[: -len(_PROBE) - 1], "rename", None, probe.entries)
    return KeyChange(key, None, probe.action, probe.hint, probe.entries)


def whole_key_change(maps: MappingSet, text: bytes) -> KeyChange | None:
    """The change for a string value that is exactly an old key (or the root of a moved subtree)."""
    return key_target(maps, text.decode("ascii")) if scan.KEY_IN_PROSE.fullmatch(text) else None


def module_target(maps: MappingSet, name: str):
    """The module change for a dotted name that is exactly a module (or a member of one)."""
    if not scan.MODULE_RE.fullmatch(name.encode()) or "." not in name:
        return None
    return maps.module(name)


_SYMBOL_STRING = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*")


def symbol_target(maps: MappingSet, name: str):
    """(change, spelt with a colon) for a string naming a moved symbol: `pkg.mod:Name` (entry points,
    `_target_`-like values) with any change, or dotted `pkg.mod.Name` when a symbol entry decides."""
    if _SYMBOL_STRING.fullmatch(name):
        change = maps.symbol(name)
        return (change, True) if change is not None else None
    if name.count(".") < 2 or not scan.MODULE_RE.fullmatch(name.encode()):
        return None
    module, _, last = name.rpartition(".")
    change = maps.symbol(f"{module}:{last}")
    return (change, False) if change is not None and change.explicit else None


def _symbol_edit(change, colon: bool, start: int, end: int, edits: list, findings: list, in_comment: bool) -> None:
    old = change.old if colon else change.old.replace(":", ".")
    if change.new is not None:
        new = change.new if colon else change.new.replace(":", ".")
        edits.append(Edit(start, end, new.encode(), "symbol-move", f"{old} -> {new}", change.prs, in_comment))
    elif not in_comment:
        findings.append(Finding(start, "symbol-removal", f"{old} was removed", change.hint, change.prs))


# Where an override may start: after a word boundary, or after a `\n` / `\t` escape in a string literal.
_WORD_START = re.compile(rb"(?<=[" + re.escape(WORD_BOUNDARY) + rb"])[~+A-Za-z_]")
_ESCAPED_WORD_START = re.compile(rb"(?:(?<=[" + re.escape(WORD_BOUNDARY) + rb"])|(?<=\\[nt]))[~+A-Za-z_]")


def override_matches(src: bytes, start: int, end: int, span_starts_word: bool, escapes: bool):
    """Override matches that begin a word of src[start:end]."""
    starts = (_ESCAPED_WORD_START if escapes else _WORD_START).finditer(src, start, end)
    positions = [m.start() for m in starts if m.start() > start]
    if span_starts_word:
        positions.insert(0, start)
    for pos in positions:
        m = scan.OVERRIDE_IN_TEXT.match(src, pos, end)
        if m is not None and scan.is_override(m):
            yield m


def text_edits(src: bytes, start: int, end: int, maps: MappingSet, *, span_starts_word: bool = True,
               escapes: bool = False, prose: bool = False, in_comment: bool = False,
               whole_key: bool = False, interpolations: bool = True,
               continues_after: bool = False) -> tuple[list[Edit], list[Finding]]:
    """Overrides at word starts, `-m module`, paths, and (in prose) bare dotted keys in src[start:end].

    `continues_after`: the value goes on after `end` with text that may join a path ending there
    (`"x.sh" ".orig"`, `f"x.sh{ext}"`): such a path is reported, not moved.

    `whole_key`: the span is one value (a string literal); when it is exactly an old key, module or
    subtree root it is renamed (`OmegaConf.select(cfg, "old.key")`, `runpy.run_module("old.mod")`).
    """
    edits: list[Edit] = []
    findings: list[Finding] = []
    taken: set[int] = set()
    if whole_key and end > start:
        text = src[start:end]
        try:
            name = text.decode("ascii")
        except UnicodeDecodeError:
            name = ""
        change = whole_key_change(maps, text)
        if change is not None:
            _key_edit(change, start, end, edits, findings, in_comment)
            return edits, findings
        found = symbol_target(maps, name)
        if found is not None:
            _symbol_edit(*found, start, end, edits, findings, in_comment)
            return edits, findings
        module = module_target(maps, name)
        if module is not None:
            _module_edit(module, start, end, edits, findings, in_comment)
            return edits, findings
        target = target_change(maps, name)
        if target is not None:
            edits.append(Edit(start, end, target.new.encode(), "target-move", target.describe(), target.prs,
                              in_comment))
            return edits, findings
    for m in override_matches(src, start, end, span_starts_word, escapes):
        key = m.group("key").decode("ascii")
        if m.group("eq") is not None:
            value_edits, value_findings, value = override_value_edits(
                maps, key, m.start("key"), m.end("key"), value_at(src, m.end(), end), in_comment)
            edits.extend(value_edits)
            findings.extend(value_findings)
            if value is not None and value.action == "remove" and not in_comment:
                findings.append(removal_finding(m.start("key"), value, removed=False))
            if value is not None and (value.new_key is not None or value.action == "remove"):
                continue
        change = maps.key(key)
        if change is not None:
            taken.add(m.start("key"))
            _key_edit(change, m.start("key"), m.end("key"), edits, findings, in_comment)
    if interpolations:
        for m in INTERPOLATION.finditer(src, start, end):
            change = key_target(maps, m.group("key").decode("ascii"))
            if change is not None and m.start("key") not in taken:
                taken.add(m.start("key"))
                _key_edit(change, m.start("key"), m.end("key"), edits, findings, in_comment)
    if prose:
        for key_start, key_end, change in scan.find_keys_in_prose(src, start, end, maps):
            if key_start not in taken and change.action == "rename":
                edits.append(Edit(key_start, key_end, change.new.encode(), "key-rename",
                                  f"{change.old} -> {change.new}", change.prs, in_comment))
    for m in scan.MODULE_AFTER_DASH_M.finditer(src, start, end):
        module = maps.module(m.group("module").decode("ascii"))
        if module is not None:
            _module_edit(module, m.start("module"), m.end("module"), edits, findings, in_comment)
    for path_start, path_end, change in scan.find_paths(src, start, end, maps):
        old = src[path_start:path_end].decode("ascii")
        if change.new is not None and not in_comment and (
                (path_end == end and continues_after) or _escape_joins(src, path_end, end, escapes)):
            findings.append(Finding(path_start, "path-move", f"{old} moved to {change.new}; not edited: more "
                                    "text is glued after it in the same string", None, change.prs))
            continue
        if change.new is None:
            if not in_comment:
                findings.append(Finding(path_start, "path-removal", f"{old} was removed", change.hint, change.prs))
        elif change.env or change.args:  # no edit either way: presets have no command to go before here
            if in_comment:
                continue
            if not_proven_same(change):  # the move's step, with what differs
                findings.append(held_finding(path_start, old, change, False))
            else:
                preset = " ".join(f"{k}={v}" for k, v in change.env)
                args = (" " + " ".join(change.args)) if change.args else ""
                findings.append(Finding(path_start, "path-move",
                                        f"{old} moved to {change.new}; run it as `{preset} bash {change.new}{args}` "
                                        "(edit by hand: the presets cannot be placed here)", None, change.prs))
        else:  # a move to a script that trains something else is unsafe: the engine decides
            edits.append(Edit(path_start, path_end, change.new.encode(), "path-move", f"{old} -> {change.new}",
                              change.prs, in_comment, unsafe_move(path_start, old, change, False, in_comment)))
    return edits, findings


_PATH_CHARS = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.+/-\\")
_SIMPLE_ESCAPES = frozenset(b"ntrvfab\"'")
_OCTAL_ESCAPE = re.compile(rb"\\([0-7]{1,3})")
_HEX_ESCAPE = re.compile(rb"\\(?:x([0-9A-Fa-f]{2})|u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8}))")
_NAMED_ESCAPE = re.compile(rb"\\N\{([^}]*)\}")


def _escape_joins(src: bytes, at: int, end: int, escapes: bool) -> bool:
    """Is src[at], right after a path in a string literal, a backslash that puts a name character
    there (`x.sh\\x2eorig`, `x.sh\\<newline>.orig`, a raw or unknown `\\`)? Then the path is not the whole name."""
    joined = False
    while at < end and src[at] == 0x5C:
        if not escapes:
            return True
        following = src[at + 1:at + 2]
        if following in (b"\n", b"\r"):  # a continuation inside the literal: the text goes on
            at += 3 if src[at + 1:at + 3] == b"\r\n" else 2
            joined = True
            continue
        if following and following[0] in _SIMPLE_ESCAPES:
            return False
        value = None
        if (m := _OCTAL_ESCAPE.match(src, at)):
            value = int(m.group(1), 8)
        elif (m := _HEX_ESCAPE.match(src, at)):
            value = int(next(g for g in m.groups() if g), 16)
        elif (m := _NAMED_ESCAPE.match(src, at)):
            try:
                value = ord(unicodedata.lookup(m.group(1).decode("ascii", "replace")))
            except KeyError:
                return True
        return value is None or value in _PATH_CHARS  # an unknown escape keeps its backslash
    return joined and at < end and src[at] in _PATH_CHARS


def _module_edit(change, start: int, end: int, edits: list, findings: list, in_comment: bool) -> None:
    """A moved module is renamed in place; a removed one is a manual step (comments are left alone)."""
    if change.new is not None:
        edits.append(Edit(start, end, change.new.encode(), "module-move", f"{change.old} -> {change.new}",
                          change.prs, in_comment))
    elif not in_comment:
        findings.append(Finding(start, "module-removal", f"{change.old} was removed", change.hint, change.prs))


def _key_edit(change: KeyChange, start: int, end: int, edits: list, findings: list, in_comment: bool) -> None:
    if change.action == "rename":
        edits.append(Edit(start, end, change.new.encode(), "key-rename", f"{change.old} -> {change.new}",
                          change.prs, in_comment))
    elif in_comment:
        return
    elif change.action == "warn":
        findings.append(Finding(start, "key-warn", f"{change.old}: {first_note(change)}", change.hint, change.prs,
                                severity="warning"))
    else:
        findings.append(Finding(start, "key-removal", f"{change.old} was removed; delete it by hand", change.hint,
                                change.prs))
