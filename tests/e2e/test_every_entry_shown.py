"""`mappings show` counts and lists every entry of the range, and `release-notes` has a section for every
kind's entries (value entries included): the real CLI in a subprocess, on the built-in v0.6.0 table."""

from __future__ import annotations

import json
from collections import Counter

from migrator.mapping.kinds import KINDS
from tests.helpers import REPO, run_cli, yaml_data

V060 = yaml_data(REPO / "mappings" / "verl" / "v0.6.0.yaml")["entries"]
FAMILIES = Counter(KINDS[e["kind"]].family.name for e in V060)


def test_the_table_has_the_entries_that_were_missing():
    assert len(V060) == 87 and FAMILIES["value"] == 8 and FAMILIES["key-scope"] == 2


def test_mappings_show_counts_and_lists_every_entry():
    proc = run_cli("mappings", "show", "--from", "v0.5.0", "--to", "v0.6.0")
    assert proc.returncode == 0, proc.stderr
    header, *rows = proc.stdout.splitlines()
    assert header == f"# verl v0.5.0 -> v0.6.0: {len(V060)} entries"
    assert len(rows) == len(V060)  # one release: every entry is a row of its own
    shown = Counter(row.split()[0] for row in rows)
    assert shown["value"] == FAMILIES["value"] and shown["key-scope"] == FAMILIES["key-scope"]
    assert "value  actor_rollout_ref.rollout.name=hf -> (warn)" in proc.stdout
    assert "key-scope ray_init.num_cpus -> (scope) [applies to: evaluation, generation]" in proc.stdout


def test_mappings_show_json_has_a_row_for_every_entry():
    proc = run_cli("mappings", "show", "--from", "v0.5.0", "--to", "v0.6.0", "--output-format", "json")
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)["entries"]
    assert len(rows) == len(V060)
    assert Counter(row["family"] for row in rows)["value"] == FAMILIES["value"]


def test_a_longer_range_counts_its_entries_and_says_how_many_rows_compose_them():
    proc = run_cli("mappings", "show", "--from", "v0.7.1", "--to", "v0.9.0")
    assert proc.returncode == 0, proc.stderr
    header = proc.stdout.splitlines()[0]
    entries = sum(len(yaml_data(REPO / "mappings" / "verl" / f"{r}.yaml")["entries"]) for r in ("v0.8.0", "v0.9.0"))
    assert header.startswith(f"# verl v0.7.1 -> v0.9.0: {entries} entries")


def test_release_notes_have_a_section_for_the_value_entries():
    proc = run_cli("release-notes", "--to", "v0.6.0")
    assert proc.returncode == 0, proc.stderr
    assert "## Changed config values\n" in proc.stdout
    section = proc.stdout.split("## Changed config values\n", 1)[1].split("\n## ", 1)[0]
    value_kinds = {name for name, unit in KINDS.items() if unit.family.name == "value"}
    rows = [line for line in section.splitlines() if line.startswith("| ") and line.split(" | ")[0][2:] in value_kinds]
    assert len(rows) == FAMILIES["value"]
    assert f"{FAMILIES['value']} changed config values" in proc.stdout.splitlines()[2]
