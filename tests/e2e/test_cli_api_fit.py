"""The real CLI, in a subprocess, on a user's file that uses `RolloutSkip` as v0.8.0 had it: the import is
moved to v0.9.0's module, and each use the new class does not support is a located manual step (VM129)."""

from __future__ import annotations

import json

from tests.helpers import run_cli

SOURCE = """\
from verl.utils.rollout_skip import RolloutSkip


class Trainer:
    def init_workers(self, config, rollout_wg):
        self.rollout_skip = RolloutSkip(config, rollout_wg)
        self.rollout_skip.wrap_generate_sequences()
"""


def test_a_moved_class_without_the_method_the_file_calls_is_reported_at_the_call(tmp_path):
    user = tmp_path / "trainer.py"
    user.write_text(SOURCE)
    proc = run_cli("--from", "v0.8.0", "--to", "v0.9.0", "--output-format", "json", tmp_path)
    assert proc.returncode in (0, 1), proc.stderr
    assert user.read_text() == SOURCE.replace("verl.utils.rollout_skip", "verl.utils.skip.rollout_skip")
    [report] = json.loads(proc.stdout)["files"]
    [finding] = report["findings"]
    assert (finding["line"], finding["col"], finding["code"], finding["severity"]) == (7, 27, "VM129", "manual")
    assert "verl.utils.skip.rollout_skip.RolloutSkip at v0.9.0 has no wrap_generate_sequences" in finding["message"]
    assert "wrap_generate_sequences are gone" in finding["hint"]
