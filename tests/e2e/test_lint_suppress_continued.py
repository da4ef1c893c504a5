"""`# verl-migrate: ignore ...` silences a finding on any line of a `\\`-continued command: on the command's
last line, or on a comment line right above it (a comment after a `\\` would end the command: VM002).
Through the CLI."""

from __future__ import annotations

import json

from tests.helpers import run_cli

SETTINGS = ("actor_rollout_ref.rollout.name=sglang actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=2 "
            "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=2 critic.ppo_micro_batch_size_per_gpu=2")


def command(last_line_comment: str = "", above: str = "") -> str:
    """A launch whose middle line has a typo (VM007)."""
    return (above + f"python3 -m verl.trainer.main_ppo {SETTINGS} \\\n"
            "    actor_rollout_ref.actor.ppo_epoch=2 \\\n"
            f"    trainer.nnodes=1{last_line_comment}\n")


def findings(tmp_path, text):
    (tmp_path / "run.sh").write_text("#!/bin/bash\n" + text)
    proc = run_cli("lint", "--to", "v0.9.0", "--output-format", "json", ".", cwd=tmp_path)
    assert proc.returncode in (0, 1), proc.stderr
    return [(f["line"], f["code"]) for f in json.loads(proc.stdout)]


def test_a_middle_line_finding_is_reported_without_a_marker(tmp_path):
    assert findings(tmp_path, command()) == [(3, "VM007")]


def test_a_marker_on_the_last_line_covers_the_whole_command(tmp_path):
    assert findings(tmp_path, command("  # verl-migrate: ignore VM007")) == []
    assert findings(tmp_path, command("  # verl-migrate: ignore[VM007]")) == []
    assert findings(tmp_path, command("  # verl-migrate: skip")) == []
    assert findings(tmp_path, command("  # verl-migrate: ignore VM005")) == [(3, "VM007")]  # other codes only


def test_a_marker_on_the_line_above_covers_the_next_command_only(tmp_path):
    text = command(above="# verl-migrate: ignore VM007\n") + command()
    assert findings(tmp_path, text) == [(7, "VM007")]
    # With a line between, the marker is no longer about the command.
    assert findings(tmp_path, command(above="# verl-migrate: ignore VM007\n\n")) == [(5, "VM007")]
