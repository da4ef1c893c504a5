"""The rule code table: every code documented, every mapping row pointing at a real code, one code space."""

from __future__ import annotations

import re

import pytest

from migrator.codes import (
    OUTCOME_CODES,
    RULES,
    CodeFilter,
    finding_code,
    outcome_code,
)
from migrator.lint import load_checks
from migrator.mapping.kinds import FINDING_CODES
from tests.helpers import REPO

DOCS = REPO / "docs" / "codes.md"


def test_every_code_is_documented_and_every_documented_code_exists():
    documented = set(re.findall(r"^\| (VM\d{3}) \|", DOCS.read_text(), re.M))
    assert documented == set(RULES)


def test_the_tables_point_at_known_codes_and_the_lint_owns_vm0xx():
    assert {c.code for c in FINDING_CODES.values()} | {c for *_, c in OUTCOME_CODES} <= set(RULES)
    assert not set(RULES) & set(load_checks())
    assert all(not code.startswith("VM0") for code in RULES)


def test_codes_follow_from_kind_severity_and_reason():
    assert finding_code("path-removal", "manual") == "VM101"
    assert finding_code("key-warn", "warning") == "VM112"
    assert finding_code("key-removal", "info") == "VM114"
    assert finding_code("key-removal", "manual", "VM191") == "VM191"
    with pytest.raises(LookupError):  # no catch-all: a finding's kind declares its code
        finding_code("no-such-kind", "manual")
    assert outcome_code("skipped", "binary file") == "VM202"
    assert outcome_code("skipped", "bash -n: syntax error") == "VM203"
    assert outcome_code("failed", "could not write: the file is read-only") == "VM205"
    assert outcome_code("failed", "left untouched: the edited file does not pass `bash -n`") == "VM204"
    assert outcome_code("skipped", "cannot read directory: Permission denied") == "VM201"
    assert outcome_code("changed", None) is None


def test_select_and_ignore_prefixes_the_longer_one_wins():
    assert CodeFilter()("VM101")
    assert not CodeFilter(select=("VM2",))("VM101")
    assert not CodeFilter(select=("VM1",), ignore=("VM101",))("VM101")
    assert CodeFilter(select=("VM101",), ignore=("VM1",))("VM101")
    assert not CodeFilter(select=("VM1",), ignore=("VM1",))("VM112")
