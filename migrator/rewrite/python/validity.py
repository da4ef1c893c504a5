"""When the engine may skip compiling a migrated Python file: edits that provably leave the compiler's
verdict as it was (most migrated files change module paths only: `from verl.a.b import x` ->
`from verl.c import x`). Compiling the result cost as much as parsing the file.

An edit qualifies when it replaces a dotted name by a dotted name (both with at least one dot) that
starts with the same name and holds no keyword, inside a run of name characters no other edit touches:
- in code, the tokens keep their kinds (a name, then `.` and a name any number of times), and every
  place a dotted name can stand (an import's module, an attribute chain, a decorator, a value pattern)
  takes any number of parts; the one name the statement binds (an import binds the first part) stays,
  so the symbol table, and with it every compile-time check, stays too;
- in a string or a comment, it holds no quote, backslash, brace or newline: the literal stays one.
`__future__` imports are left to the compiler (their names are checked when compiling).
"""

from __future__ import annotations

import keyword
import re

from migrator.prefilter import NAME_BYTES

_DOTTED = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+\Z")


def edits_keep_validity(source: bytes, edits) -> bool:
    """True when every edit is such a dotted-name rename, so `compile` would judge the result as it
    judges `source`."""
    if not edits:
        return False
    end_of_last = -1
    for edit in sorted(edits, key=lambda e: (e.start, e.end)):
        if edit.start <= end_of_last:  # touching or overlapping: the runs would join
            return False
        end_of_last = edit.end
        if not _renames_dotted_name(source, edit.start, edit.end, edit.replacement):
            return False
    return True


def _renames_dotted_name(source: bytes, start: int, end: int, new: bytes) -> bool:
    old = source[start:end]
    if not (_DOTTED.match(old) and _DOTTED.match(new)):
        return False
    if (start and source[start - 1] in NAME_BYTES) or (end < len(source) and source[end] in NAME_BYTES):
        return False  # the run goes on beyond the edit
    old_parts, new_parts = old.decode("ascii").split("."), new.decode("ascii").split(".")
    if old_parts[0] != new_parts[0] or new_parts[0] == "__future__":
        return False
    return not any(keyword.iskeyword(part) for part in new_parts)
