"""Users' functions that verl calls, whose expected signature changed (`signature-change` with `callback`).

verl calls a custom reward function (`custom_reward_function.path` / `.name`, default `compute_score`)
by keyword: `compute_score(data_source=..., solution_str=..., ground_truth=..., extra_info=...)` since
v0.3.0.post1 (#266). Whatever its name, the function verl calls therefore starts with those parameter
names, so the table gives the shape (`callback: [data_source, solution_str, ground_truth]`) rather than
a name: a top-level function whose parameters start that way and that takes neither the new argument
nor `**kwargs` is reported at its `def`, with the entry's hint. The file need not import verl (reward
files rarely do). Nested functions and methods are not what verl calls and are left alone.
"""

from __future__ import annotations

import ast

from migrator.edits import Finding
from migrator.mapping import MappingSet
from migrator.mapping.kinds.signature import with_callback
from migrator.mapping.per_set import per_table_set
from migrator.rewrite.python.parsed import line_starts, parse


@per_table_set  # asked for every Python file
def callback_entries(maps: MappingSet) -> tuple:
    return with_callback(maps.entries())


def callback_tokens(maps: MappingSet) -> set[str]:
    """A name every matching file holds (for the prefilter): each shape's second parameter."""
    return {e.callback[min(1, len(e.callback) - 1)] for e in callback_entries(maps)}


def callback_findings(source: bytes, maps: MappingSet) -> list[Finding]:
    entries = [e for e in callback_entries(maps) if all(p.encode() in source for p in e.callback)]
    if not entries:
        return []
    try:
        tree = parse(source)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return []
    starts = line_starts(source)
    out = []
    for node in _top_level_functions(tree.body):
        args = node.args
        positional = [a.arg for a in (*args.posonlyargs, *args.args)]
        names = set(positional) | {a.arg for a in args.kwonlyargs}
        for entry in entries:
            shape = list(entry.callback)
            if positional[:len(shape)] != shape or entry.param in names or args.kwarg is not None:
                continue
            offset = starts[node.lineno - 1] + node.col_offset
            out.append(Finding(offset, "signature-change",
                               f"`{node.name}({', '.join(positional)})` has the shape of a function verl calls in "
                               f"place of {entry.function}; since {entry.origin.release} verl passes it "
                               f"{entry.param}=..., which it does not take (no `{entry.param}`, no `**kwargs`)",
                               entry.hint, (entry.pr,)))
    return out


def _top_level_functions(body):
    """Module-level defs, also inside top-level `if`/`try` blocks (`if HAVE_X: def compute_score...`)."""
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node
        elif isinstance(node, ast.If):
            yield from _top_level_functions(node.body)
            yield from _top_level_functions(node.orelse)
        elif isinstance(node, ast.Try):
            yield from _top_level_functions(node.body)
            for handler in node.handlers:
                yield from _top_level_functions(handler.body)
            yield from _top_level_functions(node.orelse)
