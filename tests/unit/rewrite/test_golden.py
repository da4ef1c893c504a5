"""Golden before/after fixtures for the Python, YAML, Markdown and notebook rewriters.

`NAME.in.EXT` is migrated to v0.9.0 with the built-in tables plus tests/fixtures/tables/rewriters.yaml;
the result must equal `NAME.out.EXT` (no `.out` file: nothing may change), the findings must equal
`NAME.findings` (`line:col: message`), and a second run must change nothing.
"""

from __future__ import annotations

import pytest

from tests.helpers.rewrite import FIXTURES, run

KINDS = ("python", "yaml", "markdown", "notebook")
CASES = sorted(p for kind in KINDS for p in (FIXTURES / kind).glob("*.in.*"))


def _expected(path):
    stem, ext = str(path).split(".in.")
    out = path.with_name(path.name.replace(".in.", ".out."))
    findings = path.with_name(path.name.split(".in.")[0] + ".findings")
    return (out.read_bytes() if out.exists() else None), findings.read_text().splitlines()


@pytest.mark.parametrize("path", CASES, ids=[f"{p.parent.name}/{p.name}" for p in CASES])
def test_golden(path):
    expected, expected_findings = _expected(path)
    result = run(path.read_bytes(), path.name)
    assert result.status in ("changed", "unchanged"), result.reason
    if expected is None:
        assert result.status == "unchanged", result.after.decode()
    else:
        assert result.status == "changed"
        assert result.after.decode() == expected.decode()
    assert [f.format().split(":", 1)[1] for f in result.findings] == expected_findings
    if expected is not None:
        again = run(result.after, path.name)
        assert again.status == "unchanged", again.after.decode()


def test_every_kind_has_a_changed_and_a_noop_fixture():
    for kind in KINDS:
        names = [p.name for p in (FIXTURES / kind).glob("*.in.*")]
        outs = [p.name for p in (FIXTURES / kind).glob("*.out.*")]
        assert outs, kind
        if kind != "notebook":
            assert any(n.startswith("noop.") for n in names), kind
