"""A moved script that trains something else, through the real command (issue: verl#6126 deleted
run_qwen3-235b_megatron_96gb.sh, DAPO data and the dapo reward manager, and added
run_qwen3_235b_a22b_megatron.sh, which trains on GSM8K with the default reward; git sees no rename)."""

from __future__ import annotations

import json

from tests.helpers import run_cli

OLD = "examples/grpo_trainer/run_qwen3-235b_megatron_96gb.sh"
NEW = "examples/grpo_trainer/run_qwen3_235b_a22b_megatron.sh"
SCRIPT = f"#!/bin/bash\nset -e\nbash {OLD} trainer.total_epochs=1 \"$@\"\n"
RUN = ["--from", "v0.6.1", "--to", "v0.9.0"]


def test_the_move_is_a_manual_step_that_lists_what_the_new_script_trains_differently(tmp_path):
    script = tmp_path / "run.sh"
    script.write_text(SCRIPT)
    proc = run_cli(*RUN, "--check", tmp_path)
    assert proc.returncode == 1, proc.stderr  # a manual action remains
    assert "VM103 a moved script whose new script is not proven to train what the old one trained" in proc.stderr
    line = next(x for x in proc.stderr.splitlines() if x.startswith(f"    {script}:3:6: "))
    assert f"{OLD} moved to {NEW} (verl#6126), which trains something else: 27 settings differ (" in line
    assert "data.train_files $HOME/verl/dataset/dapo-math-17k.parquet -> $HOME/data/gsm8k/train.parquet" in line
    assert "reward.reward_manager.name dapo -> naive" in line and "; and 21 more)" in line
    assert "NNODES=4 PPO_MINI_BATCH_SIZE=16 PROJECT_NAME=verl-qwen3" in line and line.endswith(f"bash {NEW}`")
    assert "0 files would change, 1 manual action" in proc.stderr

    written = run_cli(*RUN, "--allow-dirty", tmp_path)  # a writing run leaves the old path: it is reported again
    assert written.returncode == 0 and script.read_text() == SCRIPT and "VM103" in written.stderr
    lint = run_cli("lint", "--to", "v0.9.0", script)
    assert lint.returncode == 1 and "VM103" in lint.stderr and "reward.reward_manager.name dapo -> naive" in lint.stderr
    # The lint reported a missing path as VM006 before: a selection naming it still matches.
    assert run_cli("lint", "--to", "v0.9.0", "--ignore", "VM006", script).returncode == 0

    report = json.loads(run_cli(*RUN, "--check", "--output-format", "json", tmp_path).stdout)
    [finding] = report["files"][0]["findings"]
    assert (finding["code"], finding["severity"], finding["kind"], finding["prs"]) == \
        ("VM103", "manual", "script-move-differs", [6126])
    assert report["summary"]["manual_actions"] == 1 and report["summary"]["edits_by_kind"] == {}


def test_unsafe_fixes_make_the_move_say_what_differs_and_a_second_run_changes_nothing(tmp_path):
    script = tmp_path / "run.sh"
    script.write_text(SCRIPT)
    proc = run_cli(*RUN, "--unsafe-fixes", "--allow-dirty", tmp_path)
    assert proc.returncode == 0, proc.stderr
    text = script.read_text()
    assert f"TRAIN_BATCH_SIZE=32 bash {NEW} trainer.total_epochs=1" in text and OLD not in text
    assert "VM104" in proc.stderr and "reward.reward_manager.name dapo -> naive" in proc.stderr
    again = run_cli(*RUN, "--unsafe-fixes", "--check", tmp_path)
    assert script.read_text() == text and "VM104" not in again.stderr and "VM103" not in again.stderr
    assert "0 files would change" in again.stderr
