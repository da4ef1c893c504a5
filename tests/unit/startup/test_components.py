"""verl's component registries and ignored keys as facts: what the migration and lint ask of them."""

from migrator.startup.components import ignored_key, registry_for, selects_new_component


def test_a_renamed_key_that_now_selects_verls_own_component():
    new = selects_new_component("reward.reward_manager.name", "remote", "v0.6.1", "v0.9.0")
    assert new is not None and new.registry == "reward-manager"
    assert new.defined_at.startswith("verl/experimental/reward_loop/reward_manager/remote.py:")
    assert "remote" not in new.source_names and "prime" in new.source_names


def test_names_that_existed_before_or_exist_nowhere_select_nothing_new():
    assert selects_new_component("reward.reward_manager.name", "naive", "v0.6.1", "v0.9.0") is None
    assert selects_new_component("reward.reward_manager.name", "prime", "v0.6.1", "v0.9.0") is None
    assert selects_new_component("trainer.nnodes", "2", "v0.6.1", "v0.9.0") is None


def test_registries_carry_the_line_that_registers_each_name():
    registry = registry_for("reward.reward_manager.name", "v0.9.0")
    assert set(registry.names) == {"dapo", "gdpo", "naive", "remote"}
    assert registry.only_when == {"reward.reward_manager.source": "register"}
    assert "prime" in registry_for("reward_model.reward_manager", "v0.6.1").names


def test_ignored_keys_per_release_and_entry_point():
    item = ignored_key("reward_model.model.path", "v0.9.0", "verl.trainer.main_ppo")
    assert item.pr == 6710 and item.instead("reward_model.model.path") == "reward.reward_model.model_path"
    assert item.instead("reward_model.rollout.tensor_model_parallel_size") == \
        "reward.reward_model.rollout.tensor_model_parallel_size"
    assert item.instead("reward_model.model.trust_remote_code") is None
    assert ignored_key("reward_model.model.path", "v0.8.0", "verl.trainer.main_ppo") is None
    assert ignored_key("actor_rollout_ref.actor.grad_clip", "v0.8.0", "verl.trainer.main_ppo").pr == 6067
    assert ignored_key("actor_rollout_ref.actor.grad_clip", "v0.7.1", "verl.trainer.main_ppo") is None
