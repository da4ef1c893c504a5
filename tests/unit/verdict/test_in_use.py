"""Which components a run starts and which nulls verl fills (mappings/verl/effective-config.yaml),
judged on effective configs as verl's trainer judges them."""

from __future__ import annotations

import pytest

from migrator.verdict.effective import EffectiveConfig
from migrator.verdict.in_use import components, inactive, null_means


def config(**leaves) -> EffectiveConfig:
    return EffectiveConfig("v0.9.0", "verl/trainer/config/ppo_trainer",
                           {k.replace("__", "."): v for k, v in leaves.items()})


@pytest.mark.parametrize("leaves, runs", [
    ({"critic__enable": None, "algorithm__adv_estimator": "gae"}, True),
    ({"critic__enable": None, "algorithm__adv_estimator": "grpo"}, False),
    ({"critic__enable": True, "algorithm__adv_estimator": "grpo"}, True),
    ({"critic__enable": False, "algorithm__adv_estimator": "gae"}, False),
    ({"algorithm__adv_estimator": "gae"}, True),  # before critic.enable existed
    ({"algorithm__adv_estimator": "${oc.env:ESTIMATOR}"}, False),  # unknown: not shown to run
])
def test_the_critic_runs_as_need_critic_decides(leaves, runs):
    assert inactive(config(critic__optim__lr=1e-5, **leaves), "critic.optim.lr") is (not runs)


def test_the_reference_policy_runs_with_a_kl_term():
    off = config(algorithm__use_kl_in_reward=False, actor_rollout_ref__actor__use_kl_loss=False)
    on = config(algorithm__use_kl_in_reward=False, actor_rollout_ref__actor__use_kl_loss=True)
    assert inactive(off, "actor_rollout_ref.ref.fsdp_config.param_offload")
    assert not inactive(on, "actor_rollout_ref.ref.fsdp_config.param_offload")
    assert not inactive(off, "actor_rollout_ref.actor.optim.lr")  # the actor always runs
    assert not inactive(off, "actor_rollout_ref.reference")  # a node's name is not a prefix of another's


def test_every_component_names_a_node_and_a_rule():
    assert {c.node for c in components()} >= {"critic", "actor_rollout_ref.ref", "reward.reward_model"}
    assert all(c.enabled_by or c.otherwise_when or c.when_any_true for c in components())


def test_a_null_tokenizer_path_means_the_models_path():
    assert null_means("critic.model.tokenizer_path") == "critic.model.path"
    assert null_means("actor_rollout_ref.model.tokenizer_path") == "actor_rollout_ref.model.path"
    assert null_means("critic.model.path") is None


def legacy(release: str, set_keys=(), **leaves) -> EffectiveConfig:
    return EffectiveConfig(release, "verl/trainer/config/ppo_trainer",
                           {k.replace("__", "."): v for k, v in leaves.items()}, frozenset(set_keys))


def test_main_ppo_reads_the_legacy_reward_node_as_it_moves_it_into_reward():
    from migrator.verdict.in_use import as_read

    before = legacy("v0.7.1", {"reward_model.reward_manager", "reward_model.rollout.name"},
                    reward_model__reward_manager="dapo", reward_model__num_workers=None,
                    reward_model__rollout__name="vllm", reward_model__rollout__gpu_memory_utilization=None,
                    reward__reward_manager__name="naive", reward__num_workers=8,
                    reward__reward_model__rollout__gpu_memory_utilization=0.5,
                    sandbox_fusion__url=None, sandbox_fusion__max_concurrent=None,
                    reward__sandbox_fusion__url=None, reward__sandbox_fusion__max_concurrent=64,
                    custom_reward_function__path="my.py", custom_reward_function__name=None,
                    reward__custom_reward_function__path=None, reward__custom_reward_function__name="compute_score")
    read = as_read(before, "verl.trainer.main_ppo")
    assert read.leaves["reward.reward_manager.name"] == "dapo" and read.sets("reward.reward_manager.name")
    assert read.leaves["reward.num_workers"] == 8  # a null is not copied
    assert read.leaves["reward.reward_model.rollout.name"] == "vllm"  # leaf by leaf under a node
    assert read.leaves["reward.reward_model.rollout.gpu_memory_utilization"] == 0.5
    assert read.leaves["reward.sandbox_fusion.max_concurrent"] == 64  # all null: the node is not copied
    # a node copied whole once any leaf is set: its nulls too (verl assigns the node)
    assert read.leaves["reward.custom_reward_function.path"] == "my.py"
    assert read.leaves["reward.custom_reward_function.name"] is None
    assert not any(k.startswith(("reward_model.", "sandbox_fusion.", "custom_reward_function.")) for k in read.leaves)


def test_other_releases_and_entry_points_read_the_config_as_it_is():
    from migrator.verdict.in_use import as_read

    for release, entry in (("v0.9.0", "verl.trainer.main_ppo"), ("v0.7.1", "verl.trainer.main_ppo_sync"),
                           ("v0.7.0", "verl.trainer.main_ppo")):
        config = legacy(release, (), reward_model__reward_manager="dapo", reward__reward_manager__name="naive")
        assert as_read(config, entry) is config
