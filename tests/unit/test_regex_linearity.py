"""Every regular expression that runs over file text matches in linear time, shown by structure
(tests/helpers/regexes.py: Python's own parse of each pattern against the rules that make a backtracking
engine quadratic or exponential), never by a clock; where a pattern was replaced by code, the code
gives the old pattern's answers (the old pattern is the reference). Timings: bench/regex_scaling.py."""

from __future__ import annotations

import random
import re

import pytest

from migrator.lint.script import script_entry_point
from migrator.rewrite.shell.launches import _assignments
from migrator.rewrite.shell.locator import _overrides_at_word_starts
from migrator.rewrite.shell.syntax import WORD_BOUNDARY
from tests.helpers import REPO
from tests.helpers.regexes import EXPLAINED, Pattern, audit_rows, built, inventory, table_patterns, verdict

EVERY_PATTERN = inventory() + built() + table_patterns()


@pytest.mark.parametrize("pattern", EVERY_PATTERN, ids=lambda p: p.where)
def test_every_pattern_is_linear_by_structure_or_explained(pattern):
    problems = verdict(pattern)
    if pattern.where in EXPLAINED:
        assert problems, f"{pattern.where} is linear by structure now: drop its explanation"
    else:
        assert problems == [], (pattern.where, pattern.source)


def test_every_explanation_names_a_pattern_of_the_package():
    assert set(EXPLAINED) <= {p.where for p in EVERY_PATTERN}


def test_the_inventory_finds_the_patterns_where_they_are():
    wheres = {p.where for p in EVERY_PATTERN}
    assert {"migrator.rewrite.scan:OVERRIDE_IN_TEXT", "migrator.rewrite.python.nesting:_STRING_REST[b\"'''\"]",
            "migrator.rewrite.python.resolution:_resolves() re.sub", "migrator.prefilter:_trie_regex"} <= wheres
    assert len(EVERY_PATTERN) > 120


@pytest.mark.parametrize("source, uses", [
    (rb"(a+)+b", "match"), (rb"(?:x*y*)*z", "match"), (rb"\s*\s*x", "match"), (rb"a*a*b", "match"),
    (rb"(\w+)\1", "match"), (rb"[a-z]+\.", "search"), (rb"[^,]*,", "search"), (rb"\s*,\s*", "split"),
    (rb"(?m)^\s*x", "finditer"), (rb"(?P<key>[A-Za-z_][A-Za-z0-9_-]*(?:\.[A-Za-z0-9_][A-Za-z0-9_-]*)+)=", "finditer"),
    (rb"(?m)^[ \t]*(?:export[ \t]+)?(?P<n>\w+)=(?P<v>\([^)]*\)|[^\n]*)", "finditer"),
    (r"(?:^|/)((?:verl|recipe|examples)/[\w/.-]+\.py)$", "search"),
    (r"^\s*path\s*=\s*(.+?)\s*$", "finditer"),
    (rb"import[ \t]+\w+[ \t]*,?[ \t]*(?:#[^\n]*)?\r?$", "match"),
])
def test_the_rules_catch_what_backtracks(source, uses):
    """The checker has teeth: the textbook cases and the four this package had are flagged."""
    assert verdict(Pattern("control", source, 0, frozenset({uses})))


@pytest.mark.parametrize("source, uses", [
    (rb"(?<![a-z])[a-z]+\.", "search"), (rb"[a-z]+", "finditer"), (rb'"[^"]*"', "finditer"),
    (rb"(?m)^[ \t]*#[^\n]*$", "finditer"), (rb"\A\s*x", "search"), (rb"(?:\.[a-z]+)+", "match"),
    (rb"(?:[^\"\\]|\\.)*", "match"), (rb'"[^"]*\d', "search"),
])
def test_the_rules_pass_what_does_not(source, uses):
    assert verdict(Pattern("control", source, 0, frozenset({uses}))) == []


def test_docs_list_every_pattern_with_the_reason_it_is_linear():
    """docs/robustness.md carries the table `python -m tests.helpers.regexes` prints."""
    docs = (REPO / "docs" / "robustness.md").read_text(encoding="utf-8")
    start, end = "<!-- regex audit: python -m tests.helpers.regexes -->\n", "\n<!-- end of regex audit -->"
    assert start in docs and end in docs
    table = docs.split(start, 1)[1].split(end, 1)[0]
    assert table.splitlines() == audit_rows(), "regenerate the table with `python -m tests.helpers.regexes`"


# -- the code that replaced a quadratic pattern gives the old pattern's answers ------------------------

OLD_OVERRIDE_SCAN = re.compile(rb"(?P<prefix>~|\+\+|\+)?(?P<key>[A-Za-z_][A-Za-z0-9_-]*(?:\.[A-Za-z0-9_][A-Za-z0-9_-]*)+)"
                               rb"(?:(?P<eq>=)|(?=[\s\"'\\]|\Z))")


def test_overrides_at_word_starts_are_the_matches_the_scan_kept():
    """The scan kept an `OVERRIDE_IN_TEXT.finditer` match only at the span's start or after a word boundary."""
    rng = random.Random(11)
    pieces = [b"a.b=1", b"a.b", b"~x.y", b"+a.b", b"++c.d=", b" ", b"\t", b"\n", b";", b"|", b"(", b")", b"aaaa",
              b".", b"-", b"=", b"x", b"'", b'"', b"\\", b"$", b"/", b"9"]
    for _ in range(50_000):
        src = b"".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
        start = rng.randint(0, len(src))
        end = rng.randint(start, len(src))
        reference = [(m.start(), m.end()) for m in OLD_OVERRIDE_SCAN.finditer(src, start, end)
                     if m.start() == start or src[m.start() - 1:m.start()] in WORD_BOUNDARY]
        assert [(m.start(), m.end()) for m in _overrides_at_word_starts(src, start, end)] == reference, (src, start, end)


OLD_ASSIGNMENT = re.compile(rb"(?m)^[ \t]*(?:(?:export|local|readonly|declare(?:[ \t]+-\w+)*)[ \t]+)?"
                            rb"(?P<name>[A-Za-z_][A-Za-z0-9_]*)=(?P<value>\([^)]*\)|[^\n]*)")


def test_assignments_are_what_the_array_pattern_found():
    rng = random.Random(12)
    pieces = [b"A=", b"B=(", b")", b"\n", b" ", b"x", b"export ", b"declare -a ", b"$v", b"(", b"C=1", b"\t", b"#"]
    for _ in range(50_000):
        src = b"".join(rng.choice(pieces) for _ in range(rng.randint(0, 14)))
        assert list(_assignments(src)) == [(m.group("name"), m.group("value")) for m in OLD_ASSIGNMENT.finditer(src)]


OLD_PY_SCRIPT = re.compile(r"(?:^|/)((?:verl|recipe|examples)/[\w/.-]+\.py)$")


def test_script_entry_point_is_what_the_suffix_pattern_found():
    rng = random.Random(13)
    pieces = ["verl/", "recipe/", "examples/", "/", "x", ".py", ".", "-", " ", "\n", "é", "a.py", "$", "py", "l/"]
    for _ in range(50_000):
        word = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 9)))
        m = OLD_PY_SCRIPT.search(word)
        assert script_entry_point(word) == (m.group(1) if m else None), word
