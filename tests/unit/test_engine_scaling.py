"""The engine's cost per file is linear in its edits: placing N edits (line numbers for the report,
suppression checks) must not rescan the file from the start for each edit."""

from __future__ import annotations

import time

from migrator.edits import Edit, Finding, LocateResult
from migrator.fileprocess import LineIndex, line_col, process_file
from migrator.mapping import MappingSet
from migrator.rewrite import RewriterSpec
from migrator.rewrite.plain import edits_keep_validity, review_edits  # noqa: F401 - this module is a Rewriter

# This module is its own rewriter: every line's `old_name` is one edit (and one finding), nothing else,
# so the time measured is the engine's.
SPEC = RewriterSpec("fake", __name__, (".fake",))
TOKEN = b"old_name"
PADDING = b"# " + b"x" * 100 + b" "


def locate(source: bytes, mappings, display: str) -> LocateResult:
    edits, findings, at = [], [], source.find(TOKEN)
    while at != -1:
        edits.append(Edit(at, at + len(TOKEN), b"new_name", "key-rename", "renamed"))
        findings.append(Finding(at, "key-warn", "look here", severity="warning"))
        at = source.find(TOKEN, at + 1)
    return LocateResult(tuple(edits), tuple(findings))


def validate(before: bytes, after: bytes, mappings=None) -> None:
    return None


def _seconds(path, edits: int) -> float:
    path.write_bytes(PADDING + TOKEN + b"\n" + (PADDING + TOKEN + b"\n") * (edits - 1))
    mappings = MappingSet(None, None, ())
    best = float("inf")
    for _ in range(3):  # the best of three: the machine is shared, and noise only ever adds time
        started = time.perf_counter()
        result = process_file(str(path), "x.fake", mappings, spec=SPEC)
        best = min(best, time.perf_counter() - started)
    assert result.status == "changed" and len(result.edits) == edits and len(result.findings) == edits
    assert result.findings[-1].line == edits and result.findings[-1].col == len(PADDING) + 1
    return best


def test_four_times_the_edits_cost_about_four_times_the_time(tmp_path):
    small = _seconds(tmp_path / "small.fake", 3000)
    large = _seconds(tmp_path / "large.fake", 12000)
    assert large / small < 8, f"3000 edits: {small:.3f}s, 12000 edits: {large:.3f}s ({large / small:.1f}x)"


def test_line_index_agrees_with_counting_newlines():
    source = b"a\n\nbc\r\nd\n"
    index = LineIndex(source)
    for offset in range(len(source) + 1):
        line = source.count(b"\n", 0, offset) + 1
        col = offset - (source.rfind(b"\n", 0, offset) + 1) + 1
        assert index.line_col(offset) == line_col(source, offset) == (line, col)
