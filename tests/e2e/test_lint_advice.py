"""lint's VM007 advice fixes the launch: Hydra's "use +key=..." is kept only for a key that is genuinely
new (under a free-form node verl passes on); a typo gets the did-you-mean, a removed key the removal's
hint, a key no verl release declares says so, through the CLI."""

from __future__ import annotations

import json

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
