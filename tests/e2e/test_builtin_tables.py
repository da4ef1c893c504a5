"""Done-when for the core: the README's example script (examples/my_scripts/run_npu_grpo.sh, a hand-made
verl-style NPU script carrying the four must-have built-in entries) migrates exactly to v0.9.0 through the
real CLI, and a second run is clean."""

from __future__ import annotations

import shutil

from tests.helpers import FIXTURES, REPO, run_cli

README_SCRIPT = REPO / "examples" / "my_scripts" / "run_npu_grpo.sh"


def test_user_script_migrates_exactly_with_builtin_tables(tmp_path):
    script = tmp_path / "my_scripts" / "run_npu_grpo.sh"
    script.parent.mkdir()
    shutil.copy(README_SCRIPT, script)
    # PR 6285's new script is not proven to train what the old one trained (seq_length 10240 -> 4096, ...:
    # facts/script-moves.yaml): without --unsafe-fixes the move is a manual step that says what differs.
    safe = run_cli("--to", "v0.9.0", "--allow-dirty", script.parent)
    assert safe.returncode == 0, safe.stderr
    held = [line for line in safe.stderr.splitlines() if line.startswith(f"    {script}:27:10: ")]
    assert len(held) == 1 and "which trains something else: 29 settings differ (" in held[0], safe.stderr
    assert "actor_rollout_ref.actor.mindspeed.mcore_kwargs.seq_length 10240 -> 4096" in held[0]
    assert held[0].endswith("run it as `NPUS_PER_NODE=8 bash "
                            "examples/ascend_extras/grpo_trainer/run_qwen3_30b_a3b_mindspeed.sh`")
    assert "bash examples/grpo_trainer/run_qwen3_30b_a3b_mindspeed.sh trainer.total_epochs=1" in script.read_text()
    assert "1 file changed (1 env-removal, 3 key-rename), 2 manual actions" in safe.stderr
    shutil.copy(README_SCRIPT, script)
    proc = run_cli("--to", "v0.9.0", "--unsafe-fixes", "--allow-dirty", script.parent)
    assert proc.returncode == 0, proc.stderr
    assert script.read_bytes() == (FIXTURES / "e2e" / "run_npu_grpo.expected.sh").read_bytes()
    # The path moved; the key was renamed in a quoted array element, a case branch and a command;
    # the NPU export was neutralised.
    text = script.read_text()
    # PR 6285's new script defaults NPUS_PER_NODE to 16; the old one ran on 8, so the move presets it.
    assert "NPUS_PER_NODE=8 bash examples/ascend_extras/grpo_trainer/run_qwen3_30b_a3b_mindspeed.sh" in text
    assert '"actor_rollout_ref.rollout.checkpoint_engine.update_weights_bucket_megabytes=${bucket_mb}"' in text
    assert 'EXTRA="actor_rollout_ref.rollout.checkpoint_engine.update_weights_bucket_megabytes=1024"' in text
    assert "# verl-migrate: removed (verl#6066): export VLLM_ATTENTION_BACKEND=XFORMERS" in text
    assert "1 file changed (1 env-removal, 3 key-rename, 2 path-move)" in proc.stderr
    # The warn-only key is reported with file, line, code, hint and PR, and never edited; Hydra rejects it at
    # v0.9.0 (not under `+`), so it is a manual step (VM198), not a warning.
    lines = proc.stderr.splitlines()
    warning = [line for line in lines if "enable_expert_parallel" in line]
    assert len(warning) == 1
    assert warning[0].startswith(f"    {script}:35:5: ")
    hint = lines[lines.index(warning[0]) - 1]
    assert hint.startswith("  hint: ") and "expert_parallel_size" in hint
    assert hint.endswith("(https://github.com/verl-project/verl/pull/5609)")
    assert lines[lines.index(warning[0]) - 2].startswith("VM198 ")
    assert "enable_expert_parallel=True" in text
    assert "VM104" in proc.stderr  # the move made, and what differs said
    again = run_cli("--to", "v0.9.0", "--check", script.parent)  # the rejected key stays a manual action
    assert again.returncode == 1 and "0 files would change, 1 manual action," in again.stderr


VLLM_KWARG = "actor_rollout_ref.rollout.engine_kwargs.vllm.disable_mm_preprocessor_cache"


def test_a_key_the_target_no_longer_declares_under_a_free_form_node_gets_its_plus(tmp_path):
    """v0.4.1 declared `engine_kwargs.vllm.disable_mm_preprocessor_cache`; from v0.6.0 `engine_kwargs.vllm` is
    a free-form dict (verl#3037) that Hydra extends only with `+`. The script was left as it was (a
    key-no-action entry), and its launch failed at Hydra; now the `+` is added, for the files' releases that
    declared the key only."""
    script = tmp_path / "run.sh"
    script.write_text(f"#!/bin/bash\npython3 -m verl.trainer.main_ppo \\\n    {VLLM_KWARG}=True \\\n"
                      "    trainer.nnodes=1\n")
    proc = run_cli("--from", "v0.4.1", "--to", "v0.9.0", "run.sh", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert f"    +{VLLM_KWARG}=True \\\n" in script.read_text() and "1 plus-added" in proc.stderr
    assert run_cli("lint", "--to", "v0.9.0", "--select", "VM007", "run.sh", cwd=tmp_path).returncode == 0
    script.write_text(f"#!/bin/bash\npython3 -m verl.trainer.main_ppo {VLLM_KWARG}=True\n")
    proc = run_cli("--from", "v0.6.0", "--to", "v0.9.0", "--check", "run.sh", cwd=tmp_path)
    assert "0 files would change" in proc.stderr, proc.stderr
