"""VM020-VM023 on their fixtures (tests/fixtures/lint/startup/): verl's own start-up checks on the launch's
effective config, the keys verl accepts and ignores, and the values no component registry knows."""

from __future__ import annotations

import pytest

from migrator.lint.facts import load_facts
from migrator.lint.runner import lint_source
from migrator.mapping import compose, load_builtin
from tests.helpers import FIXTURES

FIXTURES = FIXTURES / "lint" / "startup"
REV = "v0.9.0"


@pytest.fixture(scope="module")
def mappings():
    return compose(load_builtin(), None, REV, [])


def lint(mappings, name: str, rev: str = REV):
    report = lint_source((FIXTURES / name).read_bytes(), name, load_facts(), mappings, rev)
    return report, [f for f in report.findings if f.code.startswith("VM02")]


def test_batch_divisibility_names_the_keys_and_the_nearest_batch_sizes(mappings):
    _, found = lint(mappings, "vm020_batch.sh")
    batch, temperature = found
    assert (batch.line, batch.code, batch.key, batch.severity) == (5, "VM020", "data.train_batch_size", "error")
    assert "real_train_batch_size (30) must be divisible by minimal possible batch size (4)" in batch.message
    assert "trainer.n_gpus_per_node=4" in batch.message and "data.train_batch_size=30" in batch.message
    assert batch.hint.startswith("set data.train_batch_size to 28 or 32 (a multiple of 4)")
    assert "verl#1811" in batch.hint
    assert temperature.line in (9, 10) and "validation gen temperature should be greater than 0" in temperature.message
    assert "(after an earlier check stops it)" in temperature.message


def test_shell_values_and_the_callers_arguments_are_never_guessed(mappings):
    report, found = lint(mappings, "vm020_unknown.sh")
    assert found == []
    assert any("start-up check(s) not judged" in note for note in report.notes)


def test_warning_ignored_keys_and_unknown_component(mappings):
    _, found = lint(mappings, "vm021_vm022_vm023.sh")
    by_code = {}
    for f in found:
        by_code.setdefault(f.code, []).append(f)
    (mode,) = by_code["VM021"]
    assert (mode.line, mode.severity) == (8, "warning") and "Unknown rollout mode 'search'" in mode.message
    ignored = {f.key: f for f in by_code["VM022"]}
    assert set(ignored) == {"reward_model.reward_manager", "reward_model.model.trust_remote_code",
                            "actor_rollout_ref.actor.grad_clip", "reward_model.reward_kwargs.max_resp_len"}
    assert ignored["reward_model.reward_manager"].hint == "set `reward.reward_manager.name=dapo` instead"
    assert "verl#6710" in ignored["reward_model.reward_manager"].message
    assert ignored["reward_model.model.trust_remote_code"].hint == "verl reads no replacement: remove it"
    assert ignored["actor_rollout_ref.actor.grad_clip"].hint == "set `actor_rollout_ref.actor.optim.clip_grad=0.5` instead"
    # reward.reward_kwargs declares no keys: Hydra takes the setting only as an add.
    assert ignored["reward_model.reward_kwargs.max_resp_len"].hint == "set `+reward.reward_kwargs.max_resp_len=4096` instead"
    (unknown,) = by_code["VM023"]
    assert unknown.line == 11 and "names no reward-manager of verl v0.9.0" in unknown.message
    assert "dapo, gdpo, naive, remote" in unknown.message


def test_older_release_checks_after_ray_init(mappings):
    older = compose(load_builtin(), None, "v0.5.0", [])
    _, found = lint(older, "vm020_batch.sh", "v0.5.0")
    assert found and all("RayPPOTrainer._validate_config, when the trainer starts, after ray.init" in f.message
                         for f in found if f.code == "VM020")


def test_an_ignored_key_is_never_sent_to_a_value_its_replacement_refuses(mappings):
    """`reward_model.reward_manager=prime`: v0.9.0 reads `reward.reward_manager.name`, whose registry has no
    `prime`; "set reward.reward_manager.name=prime instead" would only move the failure to start-up."""
    _, found = lint(mappings, "vm022_unregistered.sh")
    (ignored,) = [f for f in found if f.code == "VM022"]
    assert ignored.key == "reward_model.reward_manager"
    assert "reward.reward_manager.name=prime" not in ignored.hint
    assert "`prime` names no reward-manager" in ignored.hint and "dapo, gdpo, naive, remote" in ignored.hint


def test_a_legacy_key_verl_copies_onto_a_registry_key_at_start_up_is_judged_by_that_registry():
    """v0.7.1's main_ppo copies `reward_model.reward_manager` onto `reward.reward_manager.name` before it reads
    its config (effective-config.yaml, copied_at_start); its reward loop registers no `prime`."""
    at_v071 = compose(load_builtin(), None, "v0.7.1", [])
    _, found = lint(at_v071, "vm022_unregistered.sh", "v0.7.1")
    (unknown,) = [f for f in found if f.code == "VM023"]
    assert unknown.key == "reward_model.reward_manager"
    assert "`reward_model.reward_manager=prime` names no reward-manager of verl v0.7.1" in unknown.message
    assert "(verl copies it onto reward.reward_manager.name at start-up)" in unknown.message


def test_a_key_the_config_dataclass_does_not_declare_stops_verl(mappings):
    _, found = lint(mappings, "vm020_undeclared_key.sh")
    (stray,) = found
    assert (stray.line, stray.code, stray.key) == (11, "VM020", "actor_rollout_ref.actor.policy_loss.soft_gate")
    assert "PolicyLossConfig.__init__() got an unexpected keyword argument 'soft_gate'" in stray.message
    assert "[actor_rollout_ref.actor.policy_loss.soft_gate=1.5]" in stray.message
    assert stray.hint.startswith("remove actor_rollout_ref.actor.policy_loss.soft_gate: verl's PolicyLossConfig")


def test_profiler_contents_given_as_text_stop_verl_before_its_ranks_are_read(mappings):
    _, found = lint(mappings, "vm020_profiler.sh")
    actor = next(f for f in found if f.key == "actor_rollout_ref.actor.profiler.tool_config.npu.contents")
    assert actor.line == 12 and "Profiler contents must be of type list, got <class 'str'>" in actor.message
    assert "(validate_config, before Ray starts)" in actor.message
    assert actor.hint.startswith("set actor_rollout_ref.actor.profiler.tool_config.npu.contents to a list")
    assert not any("Profiler ranks" in f.message for f in found)  # the tool's node is built first, and fails


def test_a_profiler_value_the_shell_decides_is_not_judged(mappings):
    report, found = lint(mappings, "vm020_profiler_shell.sh")
    assert found == []
    assert any("start-up check(s) not judged" in note for note in report.notes)
