"""The lint's one check of Python files: imports of verl that do not resolve at `--to` (VM123; VM121 and
VM125, as the rewrite says, where a table entry removed the module or the name).

The same judgement as the migration's (`migrator.rewrite.python.resolution`), on the file as written:
an import that a table entry covers says so (`verl-migrate --to X` rewrites or reports it). Imports
guarded by `except ImportError` are the file's own business and not reported here.
"""

from __future__ import annotations

from migrator.codes import finding_code
from migrator.fileprocess import LineIndex
from migrator.lint import LintFinding
from migrator.mapping import MappingSet
from migrator.rewrite.python.resolution import UNRESOLVED_CODE, unresolved_imports

CODES = frozenset({UNRESOLVED_CODE, finding_code("module-removal", "manual"), finding_code("symbol-removal", "manual")})


def lint_python(src: bytes, path: str, mappings: MappingSet) -> list[LintFinding]:
    lines = LineIndex(src)
    out = []
    for finding in unresolved_imports(src, mappings):
        if finding.code not in CODES:
            continue
        line, col = lines.line_col(finding.offset)
        out.append(LintFinding(path, line, col, finding.code, finding.message, finding.hint, "error"))
    return out
