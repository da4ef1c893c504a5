"""Edge cases the property tests and the fuzzer generate, pinned as plain examples."""

from __future__ import annotations

import subprocess
import sys

import pytest

from migrator.cli.common import load_mappings
from migrator.fileprocess import FileResult, process_file
from migrator.report import unified_diff
from tests.helpers import HANG_GUARD

MAPPINGS = load_mappings(None, "v0.8.0", ())
REMOVED = b"critic.kl_ctrl.type"


@pytest.mark.parametrize("source, expected", [
    (b"python3 -m verl.trainer.main_ppo \\\n    ~critic.kl_ctrl.type \\\n    ~critic.kl_ctrl.type\n", b"python3 -m verl.trainer.main_ppo\n"),
    (b"python3 -m verl.trainer.main_ppo \\\n  a.b=1 \\\n  critic.kl_ctrl.type=1 \\\n  critic.kl_ctrl.type=2 \\\n  critic.kl_ctrl.type=3\n"
     b"echo next\n", b"python3 -m verl.trainer.main_ppo \\\n  a.b=1\necho next\n"),
    (b"python3 -m verl.trainer.main_ppo \\\r\n  a.b=1 \\\r\n  critic.kl_ctrl.type=1 \\\r\n  critic.kl_ctrl.type=2\r\necho next\r\n",
     b"python3 -m verl.trainer.main_ppo \\\r\n  a.b=1\r\necho next\r\n"),
    (b"python3 -m verl.trainer.main_ppo \\\n  critic.kl_ctrl.type=1 \\\n  critic.kl_ctrl.type=2 \\\n  a.b=1\n", b"python3 -m verl.trainer.main_ppo \\\n  a.b=1\n"),
    (b"ARGS=(\n  critic.kl_ctrl.type=1\n  critic.kl_ctrl.type=2\n)\n", b"ARGS=(\n)\n"),
])
def test_consecutive_removed_arguments_go_in_one_run(source, expected):
    first = process_file("run.sh", "run.sh", MAPPINGS, data=source)
    assert first.status == "changed" and first.after == expected
    assert process_file("run.sh", "run.sh", MAPPINGS, data=first.after).status == "unchanged"


def test_diff_of_a_file_with_a_lone_cr_applies_with_patch(tmp_path):
    before = b"echo a\rb\npython3 -m verl.trainer.main_ppo actor_rollout_ref.rollout.update_weights_bucket_megabytes=1\necho c\n"
    after = before.replace(b"rollout.update", b"rollout.checkpoint_engine.update")
    diff = unified_diff(FileResult("s.sh", "changed", before=before, after=after))
    assert b"No newline" not in diff
    (tmp_path / "s.sh").write_bytes(before)
    proc = subprocess.run(["patch", "-p1", "--binary", "--quiet"], input=diff, cwd=tmp_path, capture_output=True)
    if proc.returncode == 127:
        pytest.skip("no patch(1)")
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "s.sh").read_bytes() == after


def test_bash_syntax_error_reason_names_the_line(tmp_path):
    script = tmp_path / "broken.sh"
    script.write_bytes(b"#!/bin/bash\n\nif then\npython3 -m verl.trainer.main_ppo critic.kl_ctrl.type=1\n")
    out = subprocess.run([sys.executable, "-m", "migrator", "--to", "v0.8.0", str(script)], capture_output=True,
                         text=True, timeout=HANG_GUARD)
    assert "does not pass `bash -n` before any edit: line 3: syntax error near unexpected token `then'" in out.stderr


SGLANG = b"examples/grpo_trainer/run_qwen2_5_vl-7b-sglang.sh"
# the built-in move's presets (the old script's backend and hard-coded values), in table order
SGLANG_PRESETS = (b"INFER_BACKEND=sglang EXPERIMENT_NAME=qwen2_5_vl_7b_function_rm PROJECT_NAME=verl_grpo_example_geo3k"
                  b" ROLLOUT_GPU_MEM_UTIL=0.85 ROLLOUT_TP=1")
SGLANG_NEW = SGLANG_PRESETS + b" bash examples/grpo_trainer/run_qwen2_5_vl_7b_fsdp.sh"
UNSAFE = load_mappings(None, "v0.8.0", ())
UNSAFE.unsafe_fixes = True
assert not MAPPINGS.unsafe_fixes  # a mappings object of its own


@pytest.mark.parametrize("source, expected", [
    # tree-sitter-bash parses these two lines as one command: a preset before `A=1` on the line above
    # would not reach the script.
    (b"A=1 B=\nbash " + SGLANG + b"\n", b"A=1 B=\n" + SGLANG_NEW + b"\n"),
    # `B=\<newline>bash` is `B=bash`: the script itself is the command, and the preset goes before it.
    (b"A= B=\\\nbash " + SGLANG + b"\n", b"A= B=\\\nbash " + SGLANG_PRESETS + b" " + SGLANG_NEW.split(b" ")[-1] + b"\n"),
    (b"EXTRA=\nbash " + SGLANG + b"\n", b"EXTRA=\n" + SGLANG_NEW + b"\n"),
    (b"bash " + SGLANG + b" x\n", SGLANG_NEW + b" x\n"),
])
def test_env_presets_land_on_the_command_that_runs_the_script(source, expected):
    # The new script is not proven to train what the old one trained (facts/script-moves.yaml): the move and
    # its presets are made with --unsafe-fixes only.
    result = process_file("run.sh", "run.sh", UNSAFE, data=source)
    assert result.after == expected


@pytest.mark.parametrize("source", [
    # Removing a key in command-name or script position would promote the next word (`key= A=B` would
    # become the assignment `A=B`; `nohup key= x.sh` would start running x.sh).
    b"ASCEND_RT=1\ncritic.kl_ctrl.type= VLLM_ATTENTION_BACKEND=XFORMERS\n",
    b"nohup critic.kl_ctrl.type= " + SGLANG + b" &\n",
])
def test_a_key_in_command_position_is_reported_not_removed(source):
    result = process_file("run.sh", "run.sh", MAPPINGS, data=source)
    assert result.status == "unchanged"
    assert any("critic.kl_ctrl.type was removed; delete it by hand" in f.message for f in result.findings)


@pytest.mark.parametrize("source, expected", [
    # The trailing run starts at the node right before it, not at the last *argument* sibling, which
    # would delete an expansion or comment between them.
    (b"python3 -m verl.trainer.main_ppo ${EXTRA:-a.b=4} ~critic.kl_ctrl.type\n", b"python3 -m verl.trainer.main_ppo ${EXTRA:-a.b=4}\n"),
    (b"python3 -m verl.trainer.main_ppo keep=1 critic.kl_ctrl.type=1 ${X} critic.kl_ctrl.type=2\n", b"python3 -m verl.trainer.main_ppo keep=1 ${X}\n"),
    (b"python3 -m verl.trainer.main_ppo \\\n  a.b=1 \\\n  $EXTRA \\\n  critic.kl_ctrl.type=1 \\\n  critic.kl_ctrl.type=2\necho next\n",
     b"python3 -m verl.trainer.main_ppo \\\n  a.b=1 \\\n  $EXTRA\necho next\n"),
    (b"ARGS=(\n  a.b=1\n  # note\n  critic.kl_ctrl.type=1\n)\n", b"ARGS=(\n  a.b=1\n  # note\n)\n"),
])
def test_removing_trailing_arguments_keeps_expansions_and_comments_before_them(source, expected):
    result = process_file("run.sh", "run.sh", MAPPINGS, data=source)
    assert result.after == expected


@pytest.mark.parametrize("cookie", [b"# -*- coding: latin-9x -*-\n", b"#!/usr/bin/env python\n# vim: set fileencoding=nope :\n"])
def test_python_file_with_a_bad_coding_cookie_is_skipped_not_an_internal_error(cookie):
    # tokenize's SyntaxError must not escape libcst as an "internal error".
    source = cookie + b"x = 'actor_rollout_ref.rollout.update_weights_bucket_megabytes=1'\n"
    result = process_file("train.py", "train.py", MAPPINGS, data=source)
    assert result.status == "skipped" and result.reason.startswith("not parsable as Python: "), result


@pytest.mark.parametrize("source", [
    # A command *named* by an override: deleting its removed words would leave another word as the
    # command, one per run, so they are reported and nothing is edited.
    b"(~critic.kl_ctrl.type critic.kl_ctrl.type=)\n",
    b"critic.kl_ctrl.type= critic.kl_ctrl.type=\n",
    # A `\\` list that lost a `\\`: the next line is a new command named by an override.
    b"python3 -m verl.trainer.main_ppo \\\n    a.b=1\n    critic.kl_ctrl.type=2 \\\n    critic.kl_ctrl.type=3\n",
])
def test_command_named_by_an_override_is_reported_not_edited(source):
    result = process_file("run.sh", "run.sh", MAPPINGS, data=source)
    assert result.status == "unchanged", result.after
    assert sum("delete it by hand" in f.message for f in result.findings) == 2


@pytest.mark.parametrize("source, expected", [
    # Two removed array elements sharing a line both claim the blank between them: one edit removes
    # both, so one run is enough.
    (b"S=(\ncritic.kl_ctrl.type= critic.kl_ctrl.type=)\n", b"S=(\n)\n"),
    (b"S=(critic.kl_ctrl.type=1 critic.kl_ctrl.type=2)\n", b"S=()\n"),
    (b"S=(a.b=1 critic.kl_ctrl.type=1 critic.kl_ctrl.type=2 c.d=1)\n", b"S=(a.b=1 c.d=1)\n"),
])
def test_removed_neighbours_on_one_line_go_in_one_run(source, expected):
    first = process_file("run.sh", "run.sh", MAPPINGS, data=source)
    assert first.after == expected
    assert process_file("run.sh", "run.sh", MAPPINGS, data=first.after).status == "unchanged"


def test_names_a_moved_module_no_longer_holds_stay_and_are_manual_steps():
    """verl.utils.rollout_skip moved to verl.utils.skip.rollout_skip (#6097) without wrap_generate_sequences and
    read_dumped_data, and the old module is gone: their imports stay (the new module would not have them either)
    and each is a manual step, not left with no word."""
    mappings = load_mappings("v0.8.0", "v0.9.0", ())
    source = (b"from verl.utils.rollout_skip import RolloutSkip, wrap_generate_sequences\n"
              b"from verl.utils.rollout_skip import read_dumped_data\n")
    result = process_file("skip.py", "skip.py", mappings, data=source)
    assert result.after == (b"from verl.utils.skip.rollout_skip import RolloutSkip\n"
                            b"from verl.utils.rollout_skip import wrap_generate_sequences\n"
                            b"from verl.utils.rollout_skip import read_dumped_data\n")
    assert sorted((f.code, f.line) for f in result.findings if f.code == "VM125") == [("VM125", 1), ("VM125", 2)]
