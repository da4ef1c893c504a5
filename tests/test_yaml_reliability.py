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

