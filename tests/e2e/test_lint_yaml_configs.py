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


DEPRECATED = """\
defaults:
  - ppo_trainer
  - _self_
actor_rollout_ref:
  actor:
    ppo_micro_batch_size: 8
  rollout:
    name: vllm
    engine_kwargs:
      vllm:
        enable_expert_parallel: true
"""
LAUNCH = ("python3 -m verl.trainer.main_ppo actor_rollout_ref.rollout.name=vllm "
          "actor_rollout_ref.actor.ppo_micro_batch_size=8 "
          "+actor_rollout_ref.rollout.engine_kwargs.vllm.enable_expert_parallel=true\n")


def test_a_deprecated_key_in_a_config_gets_vm112_as_the_override_does(tmp_path):
    """A warn-only key (still accepted, does nothing) is VM112 in a config as on the command line, with
    the same message and hint; under a free-form node too (a config merges any key there)."""
    (tmp_path / "my_ppo.yaml").write_text(DEPRECATED)
    (tmp_path / "run.sh").write_text(LAUNCH)
    found = [f for f in lint_json(tmp_path) if f["code"] == "VM112"]
    by_file = {path: {f["key"]: (f["message"], f["hint"], f["severity"]) for f in found if f["path"] == path}
               for path in ("my_ppo.yaml", "run.sh")}
    assert set(by_file["my_ppo.yaml"]) == {"actor_rollout_ref.actor.ppo_micro_batch_size",
                                          "actor_rollout_ref.rollout.engine_kwargs.vllm.enable_expert_parallel"}
    assert by_file["my_ppo.yaml"] == by_file["run.sh"]
    assert [(f["line"], f["col"]) for f in found if f["path"] == "my_ppo.yaml"] == [(6, 5), (11, 9)]
    assert [f for f in lint_json(tmp_path, "--select", "VM112") if f["path"] == "my_ppo.yaml"] == \
        [f for f in found if f["path"] == "my_ppo.yaml"]
    assert [f for f in lint_json(tmp_path, "--ignore", "VM112") if f["path"] == "my_ppo.yaml"] == []


def test_a_key_newer_than_the_target_is_told_so_not_to_delete_it(tmp_path):
    """`entropy_from_logits_chunk_size` is first in v0.9.0: linted at v0.8.0, the hint once said "it was in
    verl main: delete it", from the newest release that had the key."""
    (tmp_path / "ours.yaml").write_text("defaults:\n  - ppo_trainer\n  - _self_\nactor_rollout_ref:\n  actor:\n"
                                        "    entropy_from_logits_chunk_size: 1\n")
    proc = run_cli("lint", "--to", "v0.8.0", "--output-format", "json", "ours.yaml", cwd=tmp_path)
    [found] = json.loads(proc.stdout)
    assert found["hint"] == "it is first in verl v0.9.0: was the config written for a newer verl?"


def test_line_ends_a_missing_final_newline_and_several_documents(tmp_path):
    """The config is composed by libyaml with the pure-Python loader's marks: `\\r\\n` line ends and a file
    without a final newline place each finding where an LF file does; a stream of two documents is no config."""
    (tmp_path / "crlf.yaml").write_bytes(CONFIG.rstrip("\n").replace("\n", "\r\n").encode())
    (tmp_path / "two.yaml").write_text(CONFIG + "---\nother: 1\n")
    found = sorted((f["path"], f["line"], f["col"], f["key"]) for f in lint_json(tmp_path))
    assert found == [("crlf.yaml", 9, 3, "data.max_obs_length"), ("crlf.yaml", 17, 5, "actor_rollout_ref.actor.ppo_epoch"),
                     ("crlf.yaml", 19, 3, "trainer.use_legacy_worker_impl")]
