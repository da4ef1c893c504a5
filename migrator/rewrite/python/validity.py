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

An edit also qualifies when it lies inside the text of one plain string token (no `f` or `b` prefix, one
token: not an implicit concatenation) of the tree the rewriter parsed, and neither the old nor the new text
holds a quote, backslash, brace, newline or NUL, with no backslash right before it: the token stays one string
token (a Hydra override's key renamed or moved in `"a.b=1"`), and the compiler never reads a string's
text (the edits of most migrated launchers).
"""

from __future__ import annotations

import keyword
import re

from migrator.prefilter import NAME_BYTES
from migrator.rewrite.python.ast_front import STRING_TOKEN
from migrator.rewrite.python.parsed import line_starts, parsed_already

_DOTTED = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+\Z")


def edits_keep_validity(source: bytes, edits) -> bool:
    """True when every edit is such a dotted-name rename, so `compile` would judge the result as it
    judges `source`."""
    if not edits:
        return False
    end_of_last = -1
    strings = None
    for edit in sorted(edits, key=lambda e: (e.start, e.end)):
        if edit.start <= end_of_last:  # touching or overlapping: the runs would join
            return False
        end_of_last = edit.end
        if _renames_dotted_name(source, edit.start, edit.end, edit.replacement):
            continue
        if strings is None:
            strings = _plain_string_texts(source, edits)
        if not _inside_plain_string(source, strings, edit.start, edit.end, edit.replacement):
            return False
    return True


_NOT_IN_TEXT = frozenset(b"'\"\\\r\n\x00{}")
_PREFIX = re.compile(rb"[A-Za-z]*")


def _plain_string_texts(source: bytes, edits) -> list[tuple[int, int]]:
    """(start, end) of the text inside the quotes of each plain one-token string in the top-level statements
    that hold an edit, sorted; empty unless the rewriter's last parse was of these bytes (and no BOM:
    `ast` columns are then byte offsets of the file)."""
    import ast
    import bisect

    tree = parsed_already(source)
    if tree is None or source.startswith(b"\xef\xbb\xbf") or not tree.body:
        return []
    starts = line_starts(source)
    firsts = [starts[stmt.lineno - 1] + stmt.col_offset for stmt in tree.body]
    holding = {bisect.bisect_right(firsts, edit.start) - 1 for edit in edits} - {-1}
    nodes = [node for index in sorted(holding) for node in ast.walk(tree.body[index])]
    in_fstrings = {id(part) for node in nodes if type(node) is ast.JoinedStr for part in node.values}
    out = []
    for node in nodes:
        if type(node) is not ast.Constant or type(node.value) is not str or node.end_lineno is None \
                or id(node) in in_fstrings:
            continue
        start = starts[node.lineno - 1] + node.col_offset
        end = starts[node.end_lineno - 1] + node.end_col_offset
        text = source[start:end]
        prefix = _PREFIX.match(text).end()
        if not STRING_TOKEN.fullmatch(text) or text[:prefix].lower() not in (b"", b"r", b"u"):
            continue
        quote = 3 if text[prefix:prefix + 3] in (b"'''", b'"""') else 1
        out.append((start + prefix + quote, end - quote))
    return sorted(out)


def _inside_plain_string(source: bytes, strings: list[tuple[int, int]], start: int, end: int, new: bytes) -> bool:
    import bisect

    at = bisect.bisect_right(strings, (start, len(source))) - 1
    if at < 0 or not (strings[at][0] <= start and end <= strings[at][1]):
        return False
    if start > 0 and source[start - 1] == 0x5C:  # a backslash would escape the new text's first character
        return False
    return not any(b in _NOT_IN_TEXT for b in source[start:end] + new) and _utf8(new)


def _utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
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
