"""Python launchers: moved modules in imports, `-m`/`runpy` module strings, Hydra overrides in string
literals (f-string literal parts included), old script paths, and config keys spelt as attribute chains.

What each construct means for the migration lives in one place, `locator.Locator`; two parse
front-ends feed it byte spans of the original file, so every edit is a byte span and everything else
stays byte for byte:
- the stdlib `ast` (`ast_front`), for the top-level statements that hold an old name, whenever every
  such name sits where `ast` gives exact positions (strings, imports, names and attribute chains);
- libcst (`cst_front`), the reference: it also sees comments and f-string parts, and takes every
  file the `ast` front-end declines. libcst is imported only then (~0.1 s of start-up per process).
Uses of the API through imports (keyword renames at call sites, signature changes, `alias.Name`) are
`api`'s, over the stdlib `ast` of the whole file. Imports that the table leaves unresolved at the target
(per the module facts) are `resolution`'s; users' functions verl calls (a custom reward function) are
`callbacks`'. This module only dispatches between them; the front-ends
import only the modules below them (`locator`, `statements`), never this one.
"""

from __future__ import annotations

from migrator.edits import LocateResult, SourceNotParsed
from migrator.mapping import MappingSet
from migrator.rewrite.plain import review_edits  # noqa: F401 - the Rewriter protocol: no second look
from migrator.rewrite.python.api import locate_api
from migrator.rewrite.python.api_fit import api_fit_findings
from migrator.rewrite.python.ast_front import locate_ast as _locate_ast
from migrator.rewrite.python.callbacks import callback_findings
from migrator.rewrite.python.config_access import locate_config_keys, might_spell_keys
from migrator.rewrite.python.nesting import (
    MAX_FSTRING_NESTING,
    MAX_NESTING,
    MAX_NESTING_FOR_LIBCST,
    UNBOUNDED,
    nesting_depth_over,
)
from migrator.rewrite.python.parsed import parsed_already
from migrator.rewrite.python.resolution import unresolved_imports
from migrator.rewrite.python.statements import ast_lines_differ, might_change
from migrator.rewrite.python.validity import edits_keep_validity  # noqa: F401 - the engine asks for it

KIND = "python"
# Markdown's code blocks come labelled `block.<lang>`: examples, whose imports and callbacks are not checked
EXAMPLE_LABEL = "block."


def locate(source: bytes, mappings: MappingSet, path: str = "") -> LocateResult:
    depth = nesting_depth_over(source, MAX_NESTING_FOR_LIBCST)  # the bounds below are the comparisons made
    if depth > MAX_NESTING:  # the parsers would exhaust the recursion limit, or libcst the C stack
        raise SourceNotParsed(_too_deep(depth, MAX_NESTING))
    if mappings.only_imports and not might_spell_keys(source, mappings) and _parses(source, mappings):
        # No entry's token is in the file but an import root (the prefilter's scope), nor a renamed key's
        # name, which a config access may spell apart (`r = cfg.actor_rollout_ref; r.rollout.n`): the
        # table's passes have nothing to find, the import check below may.
        result = LocateResult((), ())
    else:
        result = _locate_table(source, mappings, depth)
    if path.startswith(EXAMPLE_LABEL):
        return result
    more = unresolved_imports(source, mappings, result.edits, result.findings) + callback_findings(source, mappings) \
        + api_fit_findings(source, mappings)
    return LocateResult(result.edits, result.findings + tuple(more)) if more else result


def _parses(source: bytes, mappings: MappingSet) -> bool:
    """Would the table's passes find the file parsable? They parse it only where a statement may change,
    and take libcst where `ast` fails or gives no exact lines (a BOM, a coding cookie, a lone `\r`), which
    then decides: False sends the file to them."""
    if not might_change(source, mappings):
        return True
    if ast_lines_differ(source):
        return False
    try:  # no tree is needed: compiling costs half of `ast.parse`, which builds the tree's Python objects
        compile(source, "<parse check>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return False  # the compiler refuses more than the parser (`return` outside a function): they decide
    return True


def _too_deep(depth: int, bound: int, why: str = "") -> str:
    levels = f"about {depth} levels" if depth != UNBOUNDED else f"f-strings more than {MAX_FSTRING_NESTING} deep"
    return f"nested too deeply to parse safely{why} ({levels}; at most {bound})"


def _locate_table(source: bytes, mappings: MappingSet, depth: int) -> LocateResult:
    # The API pass has its own quick check (a module's last name: `from verl.utils import torch_functional`).
    edits, findings = locate_api(source, mappings)
    if not might_change(source, mappings):
        # So has the config-key pass (the front-ends run it in `Locator.finish`): `cfg.a.get("b")`
        # holds no dotted old token.
        if might_spell_keys(source, mappings):
            config_edits, config_findings = locate_config_keys(source, mappings)
            edits, findings = edits + config_edits, findings + config_findings
        return LocateResult(tuple(edits), tuple(findings))
    result = _locate_ast(source, mappings)
    if result is None and depth > MAX_NESTING_FOR_LIBCST:
        raise SourceNotParsed(_too_deep(depth, MAX_NESTING_FOR_LIBCST, " with libcst, which this file needs"))
    if result is None:
        result = _locate_statements(source, mappings)
    if result is None:
        result = _locate_module(source, mappings)
    if not edits and not findings:
        return result
    return LocateResult(result.edits + tuple(edits), result.findings + tuple(findings))


def _locate_statements(source: bytes, mappings: MappingSet) -> LocateResult | None:
    from migrator.rewrite.python import cst_front  # libcst only for files the `ast` front-end declines

    return cst_front.locate_statements(source, mappings)


def _locate_module(source: bytes, mappings: MappingSet) -> LocateResult:
    from migrator.rewrite.python import cst_front

    return cst_front.locate_module(source, mappings)


def validate(before: bytes, after: bytes, mappings=None) -> str | None:
    """None when the edited file still compiles."""
    try:  # from the tree the import check made of the same bytes, when it made one
        compile(parsed_already(after) or after, "<migrated>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as exc:
        try:
            compile(before, "<original>", "exec", dont_inherit=True)
        except (SyntaxError, ValueError):
            raise SourceNotParsed("the file does not compile with this Python before any edit") from None
        return f"the edited file would not compile: {exc}"
    return None
