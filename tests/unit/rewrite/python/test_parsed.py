"""`child_nodes`: `ast.iter_child_nodes` without the expression contexts, in the same order."""

from __future__ import annotations

import ast
from pathlib import Path

import migrator
from migrator.rewrite.python.parsed import child_nodes


def test_child_nodes_are_ast_s_own_but_the_expression_contexts():
    # Every module of this package: every kind of node, fields holding nodes, lists and None.
    sources = sorted(Path(migrator.__file__).parent.rglob("*.py"))
    kinds = set()
    for source in sources:
        for node in ast.walk(ast.parse(source.read_bytes())):
            kinds.add(type(node))
            expected = [c for c in ast.iter_child_nodes(node) if not isinstance(c, ast.expr_context)]
            assert child_nodes(node) == expected, (source, ast.dump(node)[:200])
    assert {ast.Load, ast.Store, ast.FunctionDef, ast.Try, ast.JoinedStr, ast.comprehension} <= kinds
