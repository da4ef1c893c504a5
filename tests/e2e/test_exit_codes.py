"""Exit codes that keep CI honest: `--check` fails while work is left (a file would change, a manual action
remains, a file could not be migrated), passes once nothing is; `--help` and docs/usage.md say so."""

from __future__ import annotations

import json

from tests.helpers import REPO, run_cli
from tests.helpers.repos import CORE

REMOVED_SCRIPT = "bash examples/ppo_trainer/run_deepseek_megatron.sh\n"  # a manual action; nothing to edit
BROKEN = "python3 -m verl.trainer.main_ppo critic.model.fsdp_config.param_offload=True\nif then (\n"


def test_check_fails_while_a_manual_action_remains_though_no_file_would_change(tmp_path):
    (tmp_path / "run.sh").write_text(REMOVED_SCRIPT)
    proc = run_cli(*CORE, "--check", tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert "0 files would change, 1 manual action" in proc.stderr.splitlines()[-1]
    code = next(f["code"] for r in json.loads(run_cli(*CORE, "--check", "--output-format", "json", tmp_path).stdout)
                ["files"] for f in r["findings"])
    assert run_cli(*CORE, "--check", "--ignore", code, tmp_path).returncode == 0  # what the report leaves out
    assert run_cli(*CORE, tmp_path).returncode == 0  # a writing run did its work


def test_check_fails_on_a_script_skipped_because_it_fails_bash_n(tmp_path):
    (tmp_path / "run.sh").write_text(BROKEN)
    proc = run_cli("--check", tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert "does not pass `bash -n`" in proc.stderr and "1 skipped" in proc.stderr.splitlines()[-1]


def test_check_passes_a_tree_with_nothing_left_to_do(tmp_path):
    (tmp_path / "model.bin").write_bytes(b"\x00\x01")  # not a kind verl-migrate rewrites: nothing to act on
    (tmp_path / "run.sh").write_text("python3 -m verl.trainer.main_ppo trainer.total_epochs=3\n")
    proc = run_cli("--check", tmp_path)
    assert proc.returncode == 0, proc.stderr


def test_the_exit_codes_are_documented_in_help_and_usage():
    for command in ([], ["migrate"]):
        out = run_cli(*command, "--help").stdout
        assert "Exit status:" in out and "a manual action remains" in out and "130  stopped by Ctrl-C" in out
    usage = (REPO / "docs" / "usage.md").read_text()
    assert "| 130, 143 |" in usage and "a manual action that remains" in usage and "fails `bash -n`" in usage
