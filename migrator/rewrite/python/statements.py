"""Choosing the top-level statements that hold an old token, so a front-end parses only those.

The quick check (the prefilter over this rewriter's tokens) decides first whether a file can change
at all; `choose_statements` then picks the statements that matter, from the stdlib `ast`.
"""

from __future__ import annotations

import ast
import bisect
import re
import warnings
from typing import TYPE_CHECKING, NamedTuple

from migrator.mapping import MappingSet

if TYPE_CHECKING:
    from migrator.prefilter import Prefilter

_QUICK_CHECKS: list[tuple[MappingSet, Prefilter, bool]] = []


def _quick_check(mappings: MappingSet) -> tuple[Prefilter, bool]:
    """The prefilter's Aho-Corasick search over this rewriter's tokens (whole names; `.starts` for every
    occurrence), and whether a token spans lines. One per composed table set, built once per process:
    a flat regex alternation of hundreds of tokens cost ~0.1 s to compile in every worker."""
    from migrator.prefilter import Prefilter

    for maps, search, multiline in _QUICK_CHECKS:
        if maps is mappings:
            return search, multiline
    tokens = mappings.old_tokens() | {m.rsplit(".", 1)[-1] for m in mappings.old_modules()} \
        | {p.rstrip("/").rsplit("/", 1)[-1] for p in mappings.old_paths()}
    search, multiline = Prefilter(tokens), any("\n" in token for token in tokens)
    _QUICK_CHECKS[:] = [(mappings, search, multiline)]
    return search, multiline


def might_change(source: bytes, mappings: MappingSet) -> bool:
    """Python never nests keys, so an old dotted token, a moved module's last name (`from a import b`)
    or an old path's last segment (`os.path.join(..., "x.sh")`) must occur; this skips parsing for
    nearly every file."""
    return _quick_check(mappings)[0](source)


# PEP 263: a coding cookie on line 1 or 2 (any cookie, even utf-8, takes the whole-file path).
_COOKIE = re.compile(rb"^[ \t\f]*#.*?coding[:=]", re.MULTILINE)


class Statements(NamedTuple):
    """The top-level statements that hold an old token, as [first line, last line, ast statements]."""

    chosen: dict[int, list]
    roots: set[str]  # `import a.b` of a moved module: every statement naming `a` is chosen too
    line_starts: list[int]
    occurrences: list[int]  # sorted offsets of every token occurrence
    outside: list[int]  # the occurrences on lines outside every statement (comments, for valid Python)


def choose_statements(source: bytes, mappings: MappingSet) -> Statements | None:
    """The top-level statements that matter, or None when the whole file must be parsed.

    Everything the locator reports lies inside a node that holds an old token (`might_change`), and
    every node but a comment between statements lies inside one top-level statement; the stdlib `ast`
    gives each statement's lines. `import a.b` of a moved module also needs every use of the name `a`
    and every import binding it (`finish()`): those statements all contain the text `a`, so they are
    chosen too. None whenever that argument does not hold or cannot be checked cheaply: a BOM, a
    coding cookie or a `\\r` (line numbering), a file `ast` rejects (libcst's errors and encodings stay
    as they are). Tokens outside every statement's lines (a comment between statements, at the end
    of a block or of the file) are listed in `outside`.
    """
    if source.startswith(b"\xef\xbb\xbf") or b"\r" in source:
        return None
    if _COOKIE.search(b"\n".join(source.split(b"\n", 2)[:2])):
        return None
    try:
        with warnings.catch_warnings():  # invalid escapes warn; libcst never did
            warnings.simplefilter("ignore")
            tree = ast.parse(source)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    line_starts = [0]
    line_starts.extend(m.end() for m in re.finditer(rb"\n", source))
    # [first line, last line, statements]; statements sharing a line (`a = 1; b = 2`) are one span, as
    # they are one libcst SimpleStatementLine: every span is exactly one statement of libcst's.
    spans: list[list] = []
    for stmt in tree.body:
        first = min([stmt.lineno] + [d.lineno for d in getattr(stmt, "decorator_list", ())])
        if spans and first <= spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], stmt.end_lineno)
            spans[-1][2].append(stmt)
        else:
            spans.append([first, stmt.end_lineno, [stmt]])

    def covering(starts, chosen: dict) -> list[int]:
        """Add the spans holding these offsets to chosen; the offsets in no span."""
        index, outside = 0, []
        for start in sorted(starts):
            line = bisect.bisect_right(line_starts, start)
            index = bisect.bisect_left(spans, line, index, key=lambda span: span[1])
            if index == len(spans) or spans[index][0] > line:
                outside.append(start)
                continue
            chosen[index] = spans[index]
        return outside

    chosen: dict[int, list] = {}
    search, multiline = _quick_check(mappings)
    if multiline:
        return None
    occurrences = sorted(search.starts(source))
    outside = covering(occurrences, chosen)
    roots = {alias.name.split(".")[0] for span in chosen.values() for stmt in span[2] for node in ast.walk(stmt)
             if isinstance(node, ast.Import) for alias in node.names
             if alias.asname is None and "." in alias.name and _moved(mappings, alias.name)}
    if roots:
        from migrator.prefilter import occurrences as word_starts

        covering(word_starts(source, tuple(root.encode() for root in roots)), chosen)
    return Statements(chosen, roots, line_starts, occurrences, outside)


def _moved(mappings: MappingSet, module: str) -> bool:
    change = mappings.module(module)
    return change is not None and change.new is not None
