"""lint reads Hydra YAML configs: a user's config whose `defaults:` extends a verl config has its keys
checked against that config at the target release (Hydra merges an unknown key in silently), through
the CLI; other YAML is left alone."""

from __future__ import annotations

import json

from tests.helpers import run_cli

CONFIG = """\
hydra:
  searchpath:
    - pkg://verl.trainer.config
defaults:
  - ppo_trainer
  - _self_
data:
  train_batch_size: 256
  max_obs_length: 512
actor_rollout_ref:
  rollout:
    name: vllm
    engine_kwargs:
      vllm:
        anything_goes_here: 1
  actor:
    ppo_epoch: 2
trainer:
  use_legacy_worker_impl: disable  # verl-migrate: ignore VM005
  nnodes: 1
"""


def lint_json(tmp_path, *args):
    proc = run_cli("lint", "--to", "v0.9.0", "--output-format", "json", *args, ".", cwd=tmp_path)
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)


def test_a_config_that_extends_verls_is_checked_key_by_key(tmp_path):
    (tmp_path / "my_ppo.yaml").write_text(CONFIG)
    (tmp_path / "dataset.yaml").write_text("defaults: [a, b]\nnot_verl: 1\n")  # extends no verl config
    (tmp_path / "values.yml").write_text("a: 1\n")
    found = {(f["path"], f["line"], f["code"], f["key"]): f["hint"] for f in lint_json(tmp_path)}
    assert found == {
        ("my_ppo.yaml", 9, "VM003", "data.max_obs_length"): None,
        ("my_ppo.yaml", 17, "VM003", "actor_rollout_ref.actor.ppo_epoch"):
            "did you mean `actor_rollout_ref.actor.ppo_epochs`?",
        ("my_ppo.yaml", 19, "VM003", "trainer.use_legacy_worker_impl"):
            "the legacy fsdp/megatron workers were removed; the engine workers are always used",
    }


def test_suppression_selection_and_group_choices(tmp_path):
    (tmp_path / "my_ppo.yaml").write_text(CONFIG.replace("ppo_epoch: 2", "ppo_epoch: 2  # verl-migrate: ignore VM003"))
    assert [f["line"] for f in lint_json(tmp_path)] == [9, 19]
    assert lint_json(tmp_path, "--ignore", "VM003") == []
    # A defaults list that also chooses a group extends another config: not judged.
    (tmp_path / "my_ppo.yaml").write_text(CONFIG.replace("  - _self_", "  - override model_engine: megatron\n  - _self_"))
    assert lint_json(tmp_path) == []
