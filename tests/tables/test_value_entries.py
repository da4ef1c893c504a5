"""The value entries of the release tables follow the value-entry format (docs/table-format.md, "Value entries")."""

from __future__ import annotations

import re

import pytest

from tests.helpers import REPO, yaml_data

VERL = REPO / "mappings" / "verl"
RELEASES = yaml_data(VERL / "releases.yaml")["releases"]
TABLES = {rel: yaml_data(VERL / f"{rel}.yaml") for rel in RELEASES[1:]}
COMMON = {"kind", "pr", "commit", "release"}
FIELDS = {  # kind: (required beyond COMMON, optional)
    "value-rename": ({"key", "new"}, {"old", "old-pattern", "args", "optional", "file", "note"}),
    "value-removal": ({"key", "hint"}, {"old", "old-pattern", "action", "file", "note"}),
    "value-map": ({"old-key", "new-key"}, {"map", "template", "companion", "file", "note"}),
    "value-default": ({"key", "old-default", "new-default", "action"}, {"file", "note"}),
    "target-move": ({"old", "new"}, {"key", "when", "file", "note"}),
}
KEY_RE = re.compile(r"^([A-Za-z_][A-Za-z0-9_-]*(\.[A-Za-z_][A-Za-z0-9_-]*)*|--config-name)$")
CLASS_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+$")
ENTRIES = [(rel, e) for rel, table in TABLES.items() for e in table["entries"] if e["kind"] in FIELDS]


def test_the_verified_value_entries_are_all_in_the_tables():
    # 29 verified entries were merged from the draft; a lost block would drop a whole release's value changes.
    assert len(ENTRIES) >= 29
    assert {rel for rel, _ in ENTRIES} >= {"v0.4.1", "v0.5.0", "v0.6.0", "v0.6.1", "v0.7.0", "v0.7.1", "v0.8.0",
                                          "v0.9.0"}


@pytest.mark.parametrize("item", ENTRIES, ids=lambda it: f"{it[0]}:{it[1]['kind']}:{it[1].get('old', it[1].get('old-key'))}")
def test_entry_fields(item):
    rel, entry = item
    required, optional = FIELDS[entry["kind"]]
    optional = optional | {"why"}  # what proves it where verl's history does not (scripts/prove_tables.py)
    assert COMMON | required <= set(entry), f"missing {sorted(COMMON | required - set(entry))}"
    assert not set(entry) - COMMON - required - optional, f"unknown {sorted(set(entry) - COMMON - required - optional)}"
    assert entry["release"] == rel and isinstance(entry["pr"], int) and re.fullmatch(r"[0-9a-f]{7,12}", entry["commit"])
    for field in ("key", "old-key", "new-key"):
        if field in entry:
            assert KEY_RE.match(entry[field]), entry[field]
    if entry["kind"] in ("value-rename", "value-removal"):
        assert ("old" in entry) != ("old-pattern" in entry), "exactly one of old and old-pattern"
    if "old-pattern" in entry:
        pattern = re.compile(entry["old-pattern"])
        assert not pattern.fullmatch(""), "a pattern must not match an empty value"
    if entry["kind"] == "target-move":
        assert CLASS_RE.match(entry["old"]) and CLASS_RE.match(entry["new"]) and entry["old"] != entry["new"]
    if entry["kind"] == "value-map":
        assert ("map" in entry) != ("template" in entry), "exactly one of map and template"
    if entry.get("action") is not None:
        assert entry["action"] in {"remove", "insert"}


def test_patterns_match_the_values_they_describe():
    by_key = {(e.get("key"), e.get("old-pattern")): e for _, e in ENTRIES if "old-pattern" in e}
    math = re.compile(by_key[("custom_reward_function.path", r"(.*/)?verl/utils/reward_score/math\.py")]["old-pattern"])
    assert math.fullmatch("/home/u/verl/verl/utils/reward_score/math.py")
    assert not math.fullmatch("/home/u/verl/verl/utils/reward_score/math_reward.py")
    dummy = re.compile(by_key[("actor_rollout_ref.rollout.load_format", "dummy_(dtensor|hf|megatron)")]["old-pattern"])
    assert dummy.fullmatch("dummy_dtensor") and not dummy.fullmatch("dummy")


def test_a_bool_to_level_map_never_copies_the_boolean():
    (entry,) = [e for _, e in ENTRIES if e.get("old-key") == "algorithm.rollout_is"]
    assert entry["map"][False] is None
    assert entry["map"][True] not in (True, False, "true", "false", "True", "False")
