"""The rule code table: every code documented, every mapping row pointing at a real code, one code space."""

from __future__ import annotations

import re

import pytest

from migrator.codes import (
    LINT_FORMER,
    LINT_RULES,
    RETIRED,
    RULES,
    CodeFilter,
    CodeSelectionError,
    FailureReason,
    SkipReason,
    all_codes,
    finding_code,
    parse_codes,
    suppressed_by,
    unknown_codes,
)
from migrator.fileprocess import FileResult
from migrator.lint import load_checks
from migrator.mapping.kinds import FINDING_CODES
from tests.helpers import REPO

DOCS = REPO / "docs" / "codes.md"


def test_every_code_is_documented_and_every_documented_code_exists():
    documented = set(re.findall(r"^\| (VM\d{3}) \|", DOCS.read_text(), re.M))
    assert documented == set(RULES)


def test_the_tables_point_at_known_codes_and_the_lint_owns_vm0xx():
    assert {c.code for c in FINDING_CODES.values()} | {r.code for r in (*SkipReason, *FailureReason)} <= set(RULES)
    assert all(not code.startswith("VM0") for code in RULES)
    checks = load_checks()
    # The lint's own codes are listed in codes.py (known without importing the checks); a check that
    # reports a problem the rewrite also reports carries the rewrite's code (VM112, VM101, ...).
    assert set(LINT_RULES) == {code for code in checks if code.startswith("VM0")}
    assert all(code.startswith("VM0") for code in LINT_RULES)
    assert {code for check in checks.values() for code in check.codes} <= set(all_codes())
    assert set(RETIRED).isdisjoint(all_codes()) and set(RETIRED.values()) <= set(all_codes())
    assert set(LINT_FORMER) <= set(all_codes())


def test_one_problem_one_code_old_codes_still_answer():
    assert parse_codes(["VM004"]) == ("VM112",)  # retired: the code that replaced it
    assert parse_codes(["VM00,VM1"]) == ("VM00", "VM1")
    with pytest.raises(CodeSelectionError):
        parse_codes(["VM999"])
    assert unknown_codes(["VM005", "VM004", "VM101", "VM9"]) == ["VM9"]
    # In lint, a finding that took the rewrite's code still answers to the code it had there.
    assert not CodeFilter(ignore=("VM006",), lint=True)("VM101")
    assert CodeFilter(ignore=("VM006",))("VM101")  # the rewrite's VM101 never was VM006
    assert CodeFilter(select=("VM00",), lint=True)("VM112")
    assert suppressed_by("VM112", {"VM004"}) and suppressed_by("VM101", {"VM006"}, lint=True)
    assert not suppressed_by("VM101", {"VM006"})


def test_codes_follow_from_kind_severity_and_reason():
    assert finding_code("path-removal", "manual") == "VM101"
    assert finding_code("key-warn", "warning") == "VM112"
    assert finding_code("key-removal", "info") == "VM114"
    assert finding_code("key-removal", "manual", "VM191") == "VM191"
    with pytest.raises(LookupError):  # no catch-all: a finding's kind declares its code
        finding_code("no-such-kind", "manual")
    assert _outcome(SkipReason.BINARY.because()) == ("skipped", "binary file", "VM202")
    assert _outcome(SkipReason.NOT_PARSED.because("bash -n: syntax error")) == ("skipped", "bash -n: syntax error",
                                                                                "VM203")
    assert _outcome(FailureReason.NOT_WRITTEN.because("the file is read-only")) == \
        ("failed", "could not write: the file is read-only", "VM205")
    assert _outcome(FailureReason.WOULD_BREAK.because("the edited file does not pass `bash -n`")) == \
        ("failed", "left untouched: the edited file does not pass `bash -n`", "VM204")
    assert _outcome(SkipReason.DIRECTORY_UNREADABLE.because("Permission denied")) == \
        ("skipped", "cannot read directory: Permission denied", "VM201")
    assert FileResult("run.sh", "changed").code is None


def _outcome(reason):
    result = FileResult.not_migrated("run.sh", reason)
    return result.status, result.reason, result.code


def test_the_code_comes_from_the_reason_never_from_its_words():
    # A parser's message that starts like another reason's words keeps the parse failure's code.
    assert _outcome(SkipReason.NOT_PARSED.because("unreadable heredoc at line 3"))[2] == "VM203"
    assert _outcome(SkipReason.NOT_PARSED.because("internal error: not really"))[0] == "skipped"
    assert all(reason.status == "skipped" for reason in SkipReason)
    assert all(reason.status == "failed" for reason in FailureReason)


def test_results_carry_their_reason_across_a_pipe_by_name():
    import pickle

    result = FileResult.not_migrated("run.sh", SkipReason.UNREADABLE.because("Permission denied"))
    back = pickle.loads(pickle.dumps(result))
    assert back.why is SkipReason.UNREADABLE and back.code == "VM201" and back == result
    assert b"unreadable: {}" not in pickle.dumps(SkipReason.UNREADABLE)  # by name, not with its template


def test_select_and_ignore_prefixes_the_longer_one_wins():
    assert CodeFilter()("VM101")
    assert not CodeFilter(select=("VM2",))("VM101")
    assert not CodeFilter(select=("VM1",), ignore=("VM101",))("VM101")
    assert CodeFilter(select=("VM101",), ignore=("VM1",))("VM101")
    assert not CodeFilter(select=("VM1",), ignore=("VM1",))("VM112")
