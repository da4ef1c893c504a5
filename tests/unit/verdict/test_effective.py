"""The effective config of a launch (verl's composed defaults plus the command's overrides, applied by Hydra)
and the comparison of two of them, against the REAL shipped config trees."""

from __future__ import annotations

import copy

import pytest
from omegaconf import OmegaConf

from migrator.verdict import PLACEHOLDER, release_configs
from migrator.verdict.compose import base_config
from migrator.verdict.effective import (
    NOT_RENAMED,
    UNKNOWN,
    compare,
    effective_config,
    leaves,
    resolve,
    same_value,
    shown,
)

PPO = "verl.trainer.main_ppo"


def ppo(release: str, *overrides: str):
    configs = release_configs(release)
    entry = configs.entry_by_module(PPO)
    return effective_config(configs, entry.config_path, entry.config_name, overrides)


@pytest.mark.parametrize("release", ["v0.3.0.post1", "v0.6.1", "v0.9.0"])
def test_interpolations_resolve_as_omegaconf_resolves_them(release):
    # Every interpolated leaf of every entry point's config: ours equals OmegaConf's, or is UNKNOWN.
    configs = release_configs(release)
    resolved = unknown = 0
    for entry in configs.entry_points.values():
        try:
            cfg = base_config(configs, entry.config_path, entry.config_name, ())
        except Exception:  # noqa: BLE001 - a recipe whose config is not in the shipped tree
            continue
        flat, full = leaves(cfg), copy.deepcopy(cfg)
        for key, value in flat.items():
            if not (isinstance(value, str) and value.startswith("${")):
                continue
            ours = resolve(flat, key)
            if ours is UNKNOWN:
                unknown += 1
                continue
            theirs = OmegaConf.select(full, key, throw_on_missing=True)
            if OmegaConf.is_config(theirs):
                theirs = OmegaConf.to_container(theirs, resolve=True)
            theirs = tuple(theirs) if isinstance(theirs, list) else theirs
            assert same_value(ours, theirs), (entry.config_name, key, value, ours, theirs)
            resolved += 1
    assert resolved > 50 and unknown < resolved / 10, (resolved, unknown)


def test_a_reference_follows_the_commands_own_value_not_the_base():
    # `critic.ppo_mini_batch_size: ${oc.select:actor_rollout_ref.actor.ppo_mini_batch_size,256}`: the
    # shared base node would resolve against the base's 256.
    effective = ppo("v0.9.0", "actor_rollout_ref.actor.ppo_mini_batch_size=64")
    assert effective.resolve("critic.ppo_mini_batch_size") == 64
    assert ppo("v0.9.0").resolve("critic.ppo_mini_batch_size") == 256


def test_rejected_overrides_do_not_count_and_set_keys_are_known():
    effective = ppo("v0.9.0", "trainer.total_epochs=3", "trainer.no_such_key=1", "+trainer.extra=1")
    assert effective.resolve("trainer.total_epochs") == 3
    assert "trainer.no_such_key" not in effective.leaves
    assert effective.sets("trainer.total_epochs") and effective.sets("trainer.extra")
    assert not effective.sets("trainer.nnodes")


def test_relative_and_nested_selects():
    flat = {"a.b": 1, "a.c": "${.b}", "a.d": "${oc.select:a.missing,${oc.select:a.b,null}}", "x.y": "${..a.b}",
            "e": "${oc.select:nowhere, 7}", "f": "${oc.env:HOME}", "g": "pre-${a.b}"}
    assert resolve(flat, "a.c") == 1
    assert resolve(flat, "a.d") == 1
    assert resolve(flat, "x.y") == 1
    assert resolve(flat, "e") == 7
    assert resolve(flat, "f") is UNKNOWN
    assert resolve(flat, "g") == "pre-1"
    assert resolve({"a": None, "g": "x/${a}/${oc.env:HOME}"}, "g") is UNKNOWN


def test_a_default_verl_changed_is_a_difference_and_a_setting_is_not():
    # entropy_coeff: 0.001 at v0.3.0.post1, 0 from v0.4.0 (#1100).
    before, after = ppo("v0.3.0.post1"), ppo("v0.9.0")
    found = {d.key: d for d in compare(before, after).differences}
    entropy = found["actor_rollout_ref.actor.entropy_coeff"]
    assert (entropy.before, entropy.after, entropy.cause) == (0.001, 0, "default")
    pinned = compare(ppo("v0.3.0.post1", "actor_rollout_ref.actor.entropy_coeff=0.001"),
                     ppo("v0.9.0", "actor_rollout_ref.actor.entropy_coeff=0.001"))
    assert "actor_rollout_ref.actor.entropy_coeff" not in {d.key for d in pinned.differences}


def test_renames_and_value_changes_map_the_source_into_the_targets_terms():
    before = ppo("v0.6.1", "actor_rollout_ref.rollout.load_format=dummy_dtensor")
    after = ppo("v0.9.0", "actor_rollout_ref.rollout.load_format=dummy")
    plain = {d.key for d in compare(before, after).differences}
    assert "actor_rollout_ref.rollout.load_format" in plain
    mapped = compare(before, after, revalue=lambda key, value: "dummy" if value == "dummy_dtensor" else value)
    assert "actor_rollout_ref.rollout.load_format" not in {d.key for d in mapped.differences}
    bucket = "actor_rollout_ref.rollout.checkpoint_engine.update_weights_bucket_megabytes"
    moved = compare(before, after, rename=lambda key: bucket
                    if key == "actor_rollout_ref.rollout.update_weights_bucket_megabytes" else NOT_RENAMED)
    found = next(d for d in moved.differences if d.key == bucket)
    assert (found.source_key, found.before, found.after) == \
        ("actor_rollout_ref.rollout.update_weights_bucket_megabytes", 512, 2048)
    # The skip component is off at the target (`skip.rollout.enable: false`): its dump dir is not compared.
    skipped = compare(before, after, rename=lambda key: "skip.rollout.dump_dir"
                      if key == "actor_rollout_ref.rollout.skip_dump_dir" else NOT_RENAMED)
    assert "skip.rollout.dump_dir" not in {d.key for d in skipped.differences}
    assert compare(before, after, rename=lambda key: None).differences == []  # every key removed by the table


def test_a_source_with_both_a_deprecated_alias_and_its_successor_compares_the_successor():
    # v0.8.0 declares actor.grad_clip beside actor.optim.clip_grad, which it reads (#6067); the tables rename
    # the alias onto its successor. Where the source sets both, the successor is what the run had.
    alias, successor = "actor_rollout_ref.actor.grad_clip", "actor_rollout_ref.actor.optim.clip_grad"
    before = ppo("v0.8.0", f"{successor}=0.5", f"{alias}=2.0")
    after = ppo("v0.9.0", f"{successor}=0.5")
    rename = lambda key: successor if key == alias else NOT_RENAMED  # noqa: E731
    assert successor not in {d.key for d in compare(before, after, rename=rename).differences}
    # The successor itself is still compared: a change of it is a difference.
    changed = compare(before, ppo("v0.9.0", f"{successor}=1.0"), rename=rename)
    [found] = [d for d in changed.differences if d.key == successor]
    assert (found.source_key, found.before, found.after) == (successor, 0.5, 1.0)


def test_values_the_shell_decides_are_not_compared():
    before = ppo("v0.6.1", f"actor_rollout_ref.rollout.max_num_seqs={PLACEHOLDER}")
    after = ppo("v0.9.0", f"actor_rollout_ref.rollout.max_num_seqs={PLACEHOLDER}")
    result = compare(before, after)
    assert "actor_rollout_ref.rollout.max_num_seqs" not in {d.key for d in result.differences}
    assert result.unknown >= 1
    assert "actor_rollout_ref.rollout.max_num_seqs" in {d.key for d in compare(ppo("v0.6.1"), ppo("v0.9.0")).differences}


def test_a_component_the_run_does_not_start_is_not_compared():
    # The reward model's sub-node defaults changed, but `enable` is false on both sides.
    before, after = ppo("v0.6.1"), ppo("v0.9.0")
    keys = {d.key for d in compare(before, after, rename=lambda k: "reward.reward_model.n_gpus_per_node"
                                   if k == "reward_model.n_gpus_per_node" else NOT_RENAMED).differences}
    assert "reward.reward_model.n_gpus_per_node" not in keys


@pytest.mark.parametrize(("a", "b", "same"), [(0, 0.0, True), (1, True, False), (None, "null", False),
                                               ((1, 2), (1, 2.0), True), ({"a": 1}, {"a": 1}, True),
                                               ("sync", "async", False)])
def test_same_value(a, b, same):
    assert same_value(a, b) is same


def test_shown_writes_values_as_hydra_overrides():
    assert [shown(v) for v in (None, True, (1, "a"), {"k": False}, 0.5)] == ["null", "true", "[1,a]", "{k:false}", "0.5"]


def test_plain_assignments_give_what_hydra_applying_every_override_gives():
    # The flat path writes `key=value` into the base's leaves; Hydra applying each override on the
    # command's copy must agree, leaf for leaf.
    from migrator.verdict.effective import _applied_by_hydra, _effective
    from migrator.verdict.judge import Verdict, compose_groups, sort_overrides

    configs = release_configs("v0.9.0")
    entry = configs.entry_by_module(PPO)
    overrides = ("model_engine=megatron", "trainer.total_epochs=3", "actor_rollout_ref.actor.optim.lr=1e-6",
                 "trainer.logger=[console,wandb]", "data.train_files=/x.parquet", "trainer.val_before_train=False",
                 f"actor_rollout_ref.rollout.n={PLACEHOLDER}", "actor_rollout_ref.rollout.temperature=null",
                 "+trainer.extra_setting=7", "+actor_rollout_ref.actor.megatron.override_transformer_config.x=1",
                 "+actor_rollout_ref.actor.megatron.override_transformer_config.y=2", "trainer.no_such_key=1")
    flat = _effective(configs, entry.config_path, entry.config_name, overrides)
    verdict = Verdict("")
    parsed, groups = sort_overrides(configs, entry.config_path, entry.config_name, list(overrides), verdict)
    selected = compose_groups(configs, entry.config_path, entry.config_name, groups, verdict)
    hydra = _applied_by_hydra((configs, entry.config_path, entry.config_name, selected),
                              [p for p in parsed if p.text != "trainer.no_such_key=1"])
    assert dict(flat.leaves) == dict(hydra.leaves)
    assert (flat.set_keys, flat.symbolic) == (hydra.set_keys, hydra.symbolic)
    assert flat.resolve("actor_rollout_ref.actor.megatron.tensor_model_parallel_size") is not None
