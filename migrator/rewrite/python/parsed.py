"""One `ast.parse` per source for the passes that read the same file: the statement chooser, the
config-key pass and the import check each need the tree of the same bytes. The last source's tree (or
its syntax error) is kept; nothing in this package mutates a tree."""

from __future__ import annotations

import ast
import warnings

_LAST: list = []  # [(source, tree or the SyntaxError/ValueError it raised)]


def parse(source: bytes) -> ast.Module:
    """`ast.parse(source)` with warnings silenced (invalid escapes warn; libcst never did)."""
    if _LAST and _LAST[0][0] == source:
        outcome = _LAST[0][1]
    else:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                outcome = ast.parse(source)
        except (SyntaxError, ValueError) as exc:
            outcome = exc
        _LAST[:] = [(source, outcome)]
    if isinstance(outcome, Exception):
        raise outcome
    return outcome
