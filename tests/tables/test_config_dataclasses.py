"""The config-dataclass facts cover every `_target_` of the PPO trainer's composed configs at each release
they are written for, and they say what verl's source says of the classes the start-up checks name."""

from __future__ import annotations

import pytest
import yaml

from migrator.startup.conversion import dataclasses_at
from migrator.verdict import release_configs
from migrator.verdict.effective import effective_config
from tests.helpers import REPO

FACTS = REPO / "mappings" / "verl" / "facts" / "config-dataclasses"
RELEASES = sorted(p.stem for p in FACTS.glob("*.yaml"))


def test_facts_exist_from_the_release_that_converts_at_start_up():
    assert RELEASES == ["v0.6.0", "v0.6.1", "v0.7.0", "v0.7.1", "v0.8.0", "v0.9.0"]


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize("config", ["ppo_trainer", "ppo_megatron_trainer"])
def test_every_target_of_the_composed_config_is_in_the_facts(release, config):
    facts = yaml.safe_load((FACTS / f"{release}.yaml").read_text(encoding="utf-8"))
    known = set(facts["dataclasses"]) | set(facts["not_dataclasses"])
    effective = effective_config(release_configs(release), "verl/trainer/config", config, [])
    targets = {effective.resolve(k) for k in effective.leaves if k.endswith("._target_")}
    missing = {t for t in targets if isinstance(t, str) and t.startswith("verl.")} - known
    assert not missing, missing


def test_the_classes_keyword_arguments_are_verl_s():
    policy_loss = dataclasses_at("v0.9.0")["verl.workers.config.PolicyLossConfig"]
    assert policy_loss[:2] == ("verl.workers.config.actor.PolicyLossConfig", "PolicyLossConfig")
    assert {"_target_", "loss_mode", "clip_cov_ratio"} <= policy_loss[2] and "tau_pos" not in policy_loss[2]
    npu = dataclasses_at("v0.6.1")["verl.utils.profiler.config.NPUToolConfig"][2]
    assert {"discrete", "contents", "level", "analysis"} <= npu  # NsightToolConfig's field comes first, inherited
    assert dataclasses_at("v0.5.0") == {}
