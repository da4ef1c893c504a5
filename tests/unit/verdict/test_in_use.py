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
