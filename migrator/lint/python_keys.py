"""VM003 in Python files: a config key the target release no longer has, in an override string a launcher
hands to verl (`subprocess.run([..., "-m", "verl.trainer.main_ppo", "old.key=1"])`) or in code that reads
verl's config. The same judgement as the migration's: the Python rewriter's own key edits and key-removal
steps on the file as written (only where it proves the string or the object is verl's), so lint reports
exactly what `verl-migrate --to X` would rename or remove there, at the same places.
"""

from __future__ import annotations

from migrator.edits import SourceNotParsed
from migrator.fileprocess import LineIndex
from migrator.lint import LintFinding
from migrator.mapping import MappingSet
from migrator.pulls import pr_label

CODE = "VM003"
_REMOVED = " was removed"


def lint_python_keys(src: bytes, path: str, mappings: MappingSet, rev: str, place=None) -> list[LintFinding]:
    """`place(offset)`: (line, col) of an offset of `src` in the file (a heredoc's program sits inside a
    script); by default `src` is the file."""
    from migrator.rewrite import python as python_rewriter

    try:
        located = python_rewriter.locate(src, mappings, path)
    except SourceNotParsed:
        return []  # the import check says nothing of an unparsed file either
    place = place or LineIndex(src).line_col
    hint = f"run `verl-migrate --to {rev}` on this file"
    out = []
    for edit in located.edits:
        if edit.kind != "key-rename" or edit.in_comment or " -> " not in edit.message:
            continue
        old, new = edit.message.split(" (", 1)[0].split(" -> ", 1)
        prs = ", ".join(pr_label(pr) for pr in edit.prs)
        line, col = place(edit.start)
        out.append(LintFinding(path, line, col, CODE, f"`{old}` was renamed to `{new}`" + (f" ({prs})" if prs else ""),
                               hint, "error", key=old))
    for finding in located.findings:
        if finding.kind != "key-removal" or _REMOVED not in finding.message:
            continue
        key = finding.message.split(_REMOVED, 1)[0]
        line, col = place(finding.offset)
        out.append(LintFinding(path, line, col, CODE, f"`{key}` was removed", finding.hint or hint, "error", key=key))
    return sorted(out, key=lambda f: (f.line, f.col))
