"""Edits for the value of an override (`key=value`), shared by the shell, Python, YAML and Markdown rewriters.

Only a literal value is edited. A value that is a shell or OmegaConf expansion (`$MODE`, `${x}`) never
is: its key and the variable are reported, and the caller looks for the variable's literal assignment.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from migrator.edits import Edit, Finding
from migrator.mapping import MappingSet

# Bytes that end an unquoted value word.
_VALUE_END = re.compile(rb"[\s\"'`;|&()<>\\]")
_EXPANSION = re.compile(rb"\$\{?(?P<name>[A-Za-z_][A-Za-z0-9_]*)")


# One leading `$NAME` or `${NAME}` and then a path: the expansion stands for a directory.
_DIRECTORY_EXPANSION = re.compile(rb"(?:\$[A-Za-z_][A-Za-z0-9_]*|\$\{[A-Za-z_][A-Za-z0-9_]*\})(?=/[^$`]*\Z)")
# Two directories that stand for the expansion when proving a change does not depend on it.
_STAND_INS = ("/stand-in/one", "/other/stand-in/two")


@dataclass(frozen=True)
class ValueToken:
    start: int
    end: int
    text: str
    variable: str | None = None  # the value is exactly `$NAME` / `${NAME}`: not a literal
    # Where a value is a directory expansion and then literal text (`$VERL/verl/utils/x.py`): the literal
    # part's start; an edit may touch it when the change does not depend on the prefix (literal_tail).
    tail_start: int | None = None


def value_at(src: bytes, start: int, limit: int) -> ValueToken | None:
    """The value that begins at `start` (just after `=`): a word, or one quoted string, up to `limit`."""
    if start >= limit:
        return None
    quote = src[start:start + 1]
    if quote in (b'"', b"'"):
        close = src.find(quote, start + 1, limit)
        if close < 0:
            return None
        inner_start, inner_end = start + 1, close
        after = close + 1
    else:
        m = _VALUE_END.search(src, start, limit)
        inner_start, inner_end = start, m.start() if m else limit
        after = inner_end
    if after < limit and (not _VALUE_END.match(src, after) or src[after:after + 1] in (b'"', b"'", b"\\")):
        return None  # glued to more text (`a"b"`, `x\ y`): not one literal
    raw = src[inner_start:inner_end]
    if b"$" in raw or b"`" in raw:
        m = _EXPANSION.fullmatch(raw) or re.fullmatch(rb"\$\{(?P<name>[A-Za-z_][A-Za-z0-9_]*)\}", raw)
        prefix = None if m or quote == b"'" else _DIRECTORY_EXPANSION.match(raw)
        return ValueToken(inner_start, inner_end, "", m.group("name").decode() if m else "?",
                          inner_start + prefix.end() if prefix else None)
    if quote == b'"' and b"\\" in raw:
        return None
    try:
        return ValueToken(inner_start, inner_end, raw.decode("utf-8"))
    except UnicodeDecodeError:
        return None


def override_value_edits(maps: MappingSet, key: str, key_start: int, key_end: int, token: ValueToken | None,
                         in_comment: bool = False):
    """(edits, findings, change): the value edit for `key=<token>`, or a finding; `change` is the
    composed ValueChange (None when the value stays), so the caller knows whether the key is handled."""
    if token is None:
        return [], [], None
    if token.variable is not None:
        return [], [], None
    change = maps.value(key, token.text)
    if change is None:
        return [], [], None
    edits: list[Edit] = []
    findings: list[Finding] = []
    if change.action == "rename":
        if change.new_key is not None:
            edits.append(Edit(key_start, key_end, change.new_key.encode(), "value-map", change.describe(),
                              change.prs, in_comment))
        replacement = change.new.encode()
        if change.args and not in_comment:
            replacement += b" " + b" ".join(a.encode() for a in change.args)
        edits.append(Edit(token.start, token.end, replacement, change.entries[-1].KIND, change.describe(),
                          change.prs, in_comment))
    elif change.action == "warn" and not in_comment:
        findings.append(Finding(key_start, "value-removal", f"{key}={token.text} is rejected now", change.hint,
                                change.prs, severity="warning"))
    return edits, findings, change


def literal_tail(maps: MappingSet, key: str, src: bytes, token: ValueToken) -> ValueToken | None:
    """The literal part of `key=$DIR/lit/er/al` as a token of its own, when the table's change of the value
    does not depend on what the directory is (`custom_reward_function.path=$VERL/verl/utils/reward_score/
    math.py`, #3378): a rename whose result, for two different directories in its place, is that directory
    followed by one same text. Else None (the value stays, as every expansion does)."""
    if token.tail_start is None:
        return None
    try:
        tail = src[token.tail_start:token.end].decode("utf-8")
    except UnicodeDecodeError:
        return None
    change = maps.value(key, tail)
    if change is None or change.action != "rename" or change.new_key is not None or change.args:
        return None
    for stand_in in _STAND_INS:
        whole = maps.value(key, stand_in + tail)
        if whole is None or whole.action != "rename" or whole.new != stand_in + change.new:
            return None
    return ValueToken(token.tail_start, token.end, tail)


def removal_finding(key_start: int, change, removed: bool) -> Finding:
    """For a value whose override goes (`rollout.mode=sync`): info when removed, else a manual step."""
    what = f"{change.key}={change.value}"
    if removed:
        return Finding(key_start, "value-removal", f"removed {what}", change.hint, change.prs, severity="info")
    return Finding(key_start, "value-removal", f"{what}: delete this override by hand", change.hint, change.prs)


def target_change(maps: MappingSet, text: str, key: str | None = None, siblings: dict | None = None):
    """A class-path string (`_target_`, `class_name`) that a target move renames, or None."""
    if "." not in text or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.]*", text):
        return None
    change = maps.value(key or "_target_", text, siblings)
    if change is None or change.action != "rename" or change.new_key is not None:
        return None
    if not all(e.moves_class_path for e in change.entries):
        return None
    return change
