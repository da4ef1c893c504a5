"""Reliability round two, YAML: each test pins a defect found by review, failing before its fix."""

from __future__ import annotations

import pytest
import yaml

from rewriters_support import run

BUCKET = "update_weights_bucket_megabytes"


# -- 15: duplicate keys ----------------------------------------------------------------------------------
@pytest.mark.parametrize("source, key, line", [
    (f"actor_rollout_ref:\n  rollout:\n    {BUCKET}: 1\nactor_rollout_ref:\n  x: 1\n", "actor_rollout_ref", 4),
    (f"actor_rollout_ref:\n  rollout:\n    {BUCKET}: 1\n  rollout:\n    y: 2\n", "actor_rollout_ref.rollout", 4),
    (f"actor_rollout_ref:\n  rollout:\n    {BUCKET}: 1\n    {BUCKET}: 2\n",
     f"actor_rollout_ref.rollout.{BUCKET}", 4),
    ("steps:\n  - run: echo\n    run: echo again\n", "steps[0].run", 3),
])
def test_duplicate_keys_are_a_clear_skip_reason(source, key, line):
    result = run(source, "c.yaml")
    assert result.status == "skipped", (result.status, result.reason)
    assert result.reason == f"duplicate key {key} at line {line}"


# -- 11: line endings of inserted lines --------------------------------------------------------------------
@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
@pytest.mark.parametrize("final", [True, False])
def test_inserted_lines_keep_the_files_line_ending_and_its_missing_final_newline(newline, final):
    lines = ["actor_rollout_ref:", "  rollout:", f"    {BUCKET}: 1", "    name: vllm"]
    source = newline.join(lines) + (newline if final else "")
    result = run(source, "c.yaml")
    assert result.status == "changed", (result.status, result.reason)
    expected = ["actor_rollout_ref:", "  rollout:", "    name: vllm", "    checkpoint_engine:", f"      {BUCKET}: 1"]
    assert result.after.decode() == newline.join(expected) + (newline if final else "")
    assert yaml.safe_load(result.after)["actor_rollout_ref"]["rollout"]["checkpoint_engine"][BUCKET] == 1


def test_insertion_in_the_middle_of_a_cr_only_file_uses_cr():
    source = f"actor_rollout_ref:\r  rollout:\r    {BUCKET}: 1\r    name: vllm\rtrainer:\r  x: 1"
    result = run(source, "c.yaml")
    assert b"\n" not in result.after and result.after.endswith(b"  x: 1"), result.after


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_moving_or_removing_the_last_key_keeps_the_missing_final_newline(newline):
    source = newline.join(["actor_rollout_ref:", "  rollout:", "    name: vllm", f"    {BUCKET}: 1"])
    result = run(source, "c.yaml")
    expected = ["actor_rollout_ref:", "  rollout:", "    name: vllm", "    checkpoint_engine:", f"      {BUCKET}: 1"]
    assert result.after.decode() == newline.join(expected)
    source = newline.join(["trainer:", "  x: 1", "  use_legacy_worker_impl: auto"])
    result = run(source, "c.yaml")
    assert result.after.decode() == newline.join(["trainer:", "  x: 1"])
