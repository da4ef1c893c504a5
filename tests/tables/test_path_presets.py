"""Every `env:` preset of a path-move names a variable the new script lets the environment set.

Reads mappings/verl/facts/script-env.tsv (scripts/extract_script_env.py): per release and target
script, the variables read with a default (`${X:-...}`) or read and never assigned. A preset for any
other name would be silently ignored by the script (or overwritten by its own assignment).
"""

from __future__ import annotations

import pytest

from tests.helpers import REPO, yaml_data

VERL = REPO / "mappings" / "verl"
RELEASES = yaml_data(VERL / "releases.yaml")["releases"]


def load_settable() -> dict[tuple[str, str], set[str]]:
    out = {}
    for line in (VERL / "facts" / "script-env.tsv").read_text().splitlines():
        if line.startswith("#") or not line.strip():
            continue
        rel, script, names = (line.split("\t") + [""])[:3]
        out[(rel, script)] = set(filter(None, names.split(";")))
    return out


SETTABLE = load_settable()
MOVES = [(rel, e) for rel in RELEASES[1:] for e in yaml_data(VERL / f"{rel}.yaml")["entries"]
         if e["kind"] == "path-move" and e.get("env")]


def test_there_are_presets_to_check():
    assert len(MOVES) >= 20


@pytest.mark.parametrize("item", MOVES, ids=lambda it: f"{it[0]}:{it[1]['old']}")
def test_every_preset_reaches_the_new_script(item):
    rel, entry = item
    assert (rel, entry["new"]) in SETTABLE, "run scripts/extract_script_env.py"
    unknown = sorted(set(entry["env"]) - SETTABLE[(rel, entry["new"])])
    assert not unknown, f"{entry['new']} at {rel} does not read {unknown} from the environment"


def test_the_check_rejects_a_variable_the_script_assigns_itself():
    # the MiMo MTP script reads NNODES with a default, but never a variable named like a Hydra key
    names = SETTABLE[("v0.8.0", "examples/mtp_trainer/run_mimo_7b_mtp_megatron.sh")]
    assert "NNODES" in names and "trainer" not in names and "nnodes" not in names
