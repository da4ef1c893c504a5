"""Golden before/after fixtures for the shell rewriter (tests/fixtures/shell/NAME.in.sh -> NAME.out.sh).

Each case also lists its findings (NAME.findings: `line:col: severity: message (hint)`), and every
output must pass `bash -n`, be stable under a second run, and differ from its input only inside
the edit spans.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest

from migrator.fileprocess import apply_edits, process_file
from migrator.rewrite import shell
from tests.helpers import FIXTURES

CASES = sorted(p.name[: -len(".in.sh")] for p in (FIXTURES / "shell").glob("*.in.sh"))


def _finding_lines(result) -> list[str]:
    return [f"{f.line}:{f.col}: {f.severity}: {f.message}" + (f" ({f.hint})" if f.hint else "")
            for f in result.findings]


@pytest.mark.parametrize("name", CASES)
def test_golden_output(name, core_mappings):
    src = FIXTURES / "shell" / f"{name}.in.sh"
    expected = (FIXTURES / "shell" / f"{name}.out.sh").read_bytes()
    result = process_file(str(src), src.name, core_mappings)
    assert result.status in ("changed", "unchanged"), result.reason
    actual = result.after if result.status == "changed" else src.read_bytes()
    assert actual == expected
    expected_findings = (FIXTURES / "shell" / f"{name}.findings").read_text(encoding="utf-8").splitlines()
    assert _finding_lines(result) == expected_findings


@pytest.mark.parametrize("name", CASES)
def test_golden_output_is_stable(name, core_mappings, tmp_path):
    out = FIXTURES / "shell" / f"{name}.out.sh"
    copy = tmp_path / out.name
    copy.write_bytes(out.read_bytes())
    again = process_file(str(copy), copy.name, core_mappings)
    assert again.status == "unchanged", again.edits


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
@pytest.mark.parametrize("name", CASES)
def test_golden_output_passes_bash_n(name):
    out = (FIXTURES / "shell" / f"{name}.out.sh").read_bytes().replace(b"\r\n", b"\n")
    proc = subprocess.run(["bash", "-n"], input=out, capture_output=True)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("name", CASES)
def test_bytes_outside_edit_spans_are_unchanged(name, core_mappings):
    source = (FIXTURES / "shell" / f"{name}.in.sh").read_bytes()
    located = shell.locate(source, core_mappings)
    new, applied, rejected = apply_edits(source, list(located.edits))
    assert not rejected
    # Rebuild the output from the original bytes between the spans and the replacements only.
    cursor, rebuilt = 0, b""
    for edit in applied:
        rebuilt += source[cursor:edit.start] + edit.replacement
        cursor = edit.end
    rebuilt += source[cursor:]
    assert rebuilt == new
    # Every deleted or replaced span covers only what its entry names, plus blanks and `\` for removals.
    for edit in applied:
        removed = source[edit.start:edit.end]
        if edit.kind == "key-rename":
            assert b"." in removed and b" " not in removed
        elif edit.kind in ("key-removal",):
            assert removed.strip(b" \t\\\r\n").count(b"\n") == 0
