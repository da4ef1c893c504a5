"""mappings/verl/facts/default-changes.yaml against the shipped config trees: every recorded default is the
value Hydra composes at the release before and at the release itself, and the file names its generator."""

from __future__ import annotations

import pytest

from migrator.config import known_releases
from migrator.verdict import release_configs
from migrator.verdict.effective import effective_config, shown
from tests.helpers import REPO, yaml_data

FACTS = REPO / "mappings" / "verl" / "facts" / "default-changes.yaml"
ROWS = yaml_data(FACTS)["changes"]


def _effective(release: str, config: str):
    config_dir, _, name = config.rpartition("/")
    return effective_config(release_configs(release), config_dir, name, ())


@pytest.mark.parametrize("release", sorted({row["release"] for row in ROWS}))
def test_every_recorded_default_is_what_hydra_composes(release):
    releases = list(known_releases())
    previous = releases[releases.index(release) - 1]
    for row in (r for r in ROWS if r["release"] == release):
        before, after = _effective(previous, row["config"]), _effective(release, row["config"])
        assert shown(before.resolve(row.get("old-key", row["key"]))) == row["old"], row
        assert shown(after.resolve(row["key"])) == row["new"], row


def test_the_file_names_its_generator_and_the_attributions_are_prs():
    head = FACTS.read_text(encoding="utf-8").splitlines()[0]
    assert head.startswith("# GENERATED VIA scripts/extract_default_changes.py from verl ")
    assert (REPO / "scripts" / "extract_default_changes.py").is_file()
    assert len(ROWS) > 100
    attributed = [row for row in ROWS if row["prs"]]
    assert len(attributed) >= 0.8 * len(ROWS)
    assert all(len(row["prs"]) <= len(row["commits"]) for row in ROWS)
    entropy = [row for row in ROWS if row["key"] == "actor_rollout_ref.actor.entropy_coeff"
               and row["config"] == "verl/trainer/config/ppo_trainer"]
    assert [(row["release"], row["old"], row["new"], row["prs"]) for row in entropy] == [("v0.4.0", "0.001", "0", [1100])]
