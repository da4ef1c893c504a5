"""lint's VM007 advice fixes the launch: Hydra's "use +key=..." is kept only for a key that is genuinely
new (under a free-form node verl passes on); a typo gets the did-you-mean, a removed key the removal's
hint, a key no verl release declares says so, through the CLI."""

from __future__ import annotations

import json

import pytest

from tests.helpers import run_cli

SETTINGS = ("actor_rollout_ref.rollout.name=sglang actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=2 "
            "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=2 critic.ppo_micro_batch_size_per_gpu=2")
OVERRIDES = {
    "typo": "actor_rollout_ref.actor.ppo_epoch=2",  # ppo_epochs
    "removed": "trainer.use_legacy_worker_impl=disable",  # key-removal, v0.8.0 (verl#6067)
    "fork": "data.max_obs_length=512",  # never a verl key
    "new": "actor_rollout_ref.rollout.engine_kwargs.sglang.attention_backend=triton",  # under `sglang: {}`
}


def test_advice_that_fixes(tmp_path):
    (tmp_path / "run.sh").write_text("#!/bin/bash\npython3 -m verl.trainer.main_ppo " + SETTINGS + " \\\n"
                                     + " \\\n".join(f"    {o}" for o in OVERRIDES.values()) + "\n")
    proc = run_cli("lint", "--to", "v0.9.0", "--select", "VM007", "--output-format", "json", ".", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    found = {f["override"]: f for f in json.loads(proc.stdout)}
    assert set(found) == set(OVERRIDES.values())
    advice = {name: found[o]["message"] + " " + (found[o]["hint"] or "") for name, o in OVERRIDES.items()}
    for name in ("typo", "removed", "fork"):
        assert "use +" not in advice[name] and f"+{OVERRIDES[name]}" not in advice[name], advice[name]
    assert found[OVERRIDES["typo"]]["hint"] == "did you mean `actor_rollout_ref.actor.ppo_epochs`?"
    assert "legacy fsdp/megatron workers were removed" in found[OVERRIDES["removed"]]["hint"]
    assert "no verl release declares this key" in found[OVERRIDES["fork"]]["hint"]
    assert f"use +{OVERRIDES['new']}" in advice["new"]


MEGATRON_KEY = "actor_rollout_ref.actor.megatron.tensor_model_parallel_size=2"  # in ppo_megatron_trainer only
NEWER_KEY = "actor_rollout_ref.rollout.checkpoint_engine.update_weights_bucket_megabytes=1024"  # from v0.7.1


def _vm007_hint(tmp_path, to: str, override: str) -> str:
    (tmp_path / "run.sh").write_text(f"#!/bin/bash\npython3 -m verl.trainer.main_ppo {SETTINGS} {override}\n")
    proc = run_cli("lint", "--to", to, "--select", "VM007", "--output-format", "json", "run.sh", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    [found] = json.loads(proc.stdout)
    return found["hint"]


@pytest.mark.parametrize("to", ["v0.4.1", "v0.7.1"])
def test_a_megatron_key_before_model_engine_megatron_is_told_its_config(tmp_path, to):
    """Before v0.8.0 no `model_engine=megatron` exists; the key is in ppo_megatron_trainer of the same release
    (the hint once said "not yet (it is in main)", from the newest release that had the key)."""
    assert _vm007_hint(tmp_path, to, MEGATRON_KEY) == (
        f"pass `--config-name=ppo_megatron_trainer`: the key is in verl {to}'s ppo_megatron_trainer config")


def test_a_key_newer_than_the_target_names_the_release_that_first_has_it(tmp_path):
    hint = _vm007_hint(tmp_path, "v0.6.1", NEWER_KEY)
    assert hint.startswith("verl v0.6.1 does not have it yet (it is first in verl v0.7.1)"), hint


def test_a_key_verl_now_reads_under_an_undeclared_name_is_told_to_add_it_with_plus(tmp_path):
    """`reward_model.reward_kwargs.*`: verl never declared it (examples add it with `+`), read it up to v0.8.0
    and reads `reward.reward_kwargs.*` from v0.9.0, which no config declares either. VM007 once said "no verl
    release declares this key (a fork's own?): delete it"; VM022 said `set reward.reward_kwargs...`, which
    Hydra rejects without `+`."""
    kwarg = "reward_model.reward_kwargs.overlong_buffer_cfg.len=4096"
    assert _vm007_hint(tmp_path, "v0.9.0", kwarg) == "set `+reward.reward_kwargs.overlong_buffer_cfg.len=4096` instead"
    (tmp_path / "run.sh").write_text(f"#!/bin/bash\npython3 -m verl.trainer.main_ppo {SETTINGS} +{kwarg} "
                                     "reward_model.reward_manager=dapo\n")
    proc = run_cli("lint", "--to", "v0.9.0", "--select", "VM022", "--output-format", "json", "run.sh", cwd=tmp_path)
    hints = {f["key"]: f["hint"] for f in json.loads(proc.stdout)}
    assert hints == {"reward_model.reward_kwargs.overlong_buffer_cfg.len":
                     "set `+reward.reward_kwargs.overlong_buffer_cfg.len=4096` instead",
                     "reward_model.reward_manager": "set `reward.reward_manager.name=dapo` instead"}


def test_vm003_on_a_key_newer_than_the_target_names_the_release_that_first_has_it(tmp_path):
    """VM003 (a key in a `case` branch's variable, which Hydra's verdict does not judge) once said "it was
    there in main" for a key first in v0.9.0, linted at v0.8.0."""
    (tmp_path / "run.sh").write_text(
        '#!/bin/bash\ncase "${DEVICE:-npu}" in\n    npu)\n'
        '        EXTRA="actor_rollout_ref.actor.entropy_from_logits_chunk_size=1"\n        ;;\n'
        '    *)\n        EXTRA="trainer.device=cuda"\n        ;;\nesac\npython3 -m verl.trainer.main_ppo ${EXTRA}\n')
    proc = run_cli("lint", "--to", "v0.8.0", "--select", "VM003", "--output-format", "json", "run.sh", cwd=tmp_path)
    [found] = json.loads(proc.stdout)
    assert found["message"] == ("`actor_rollout_ref.actor.entropy_from_logits_chunk_size` is not in verl v0.8.0 "
                                "(ppo_trainer); it is first in verl v0.9.0")
