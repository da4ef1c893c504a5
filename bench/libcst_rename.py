"""The libcst codemod the benchmark runs with `python -m libcst.tool codemod -x libcst_rename.RenameCodemod`.

It does the Python part of the migration the same way: old modules in imports, old keys and paths in
string literals. The renames come from a JSON file named by $BENCH_RENAMES (written by bench/run.py).
"""

from __future__ import annotations

import json
import os

import libcst as cst
from libcst.codemod import VisitorBasedCodemodCommand
from libcst.helpers import get_full_name_for_node

with open(os.environ["BENCH_RENAMES"], encoding="utf-8") as _fh:
    _RENAMES = json.load(_fh)
MODULES: dict[str, str] = _RENAMES["modules"]
STRINGS: dict[str, str] = _RENAMES["strings"]


def _new_module(name: str | None) -> str | None:
    if not name:
        return None
    for old, new in MODULES.items():
        if name == old or name.startswith(old + "."):
            return new + name[len(old):]
    return None


class RenameCodemod(VisitorBasedCodemodCommand):
    DESCRIPTION = "Rename old verl modules in imports and old keys/paths in string literals."

    def leave_ImportFrom(self, original_node, updated_node):
        new = _new_module(get_full_name_for_node(updated_node.module) if updated_node.module else None)
        if new is None:
            return updated_node
        return updated_node.with_changes(module=cst.parse_expression(new))

    def leave_Import(self, original_node, updated_node):
        names = []
        for alias in updated_node.names:
            new = _new_module(get_full_name_for_node(alias.name))
            names.append(alias.with_changes(name=cst.parse_expression(new)) if new else alias)
        return updated_node.with_changes(names=names)

    def leave_SimpleString(self, original_node, updated_node):
        value = updated_node.evaluated_value
        new = STRINGS.get(value) if isinstance(value, str) else None
        if new is None:
            return updated_node
        quote = updated_node.quote
        return updated_node.with_changes(value=f"{updated_node.prefix}{quote}{new}{quote}")
