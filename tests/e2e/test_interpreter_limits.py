"""Files that would take the interpreter down (a C stack overflow in libcst, the recursion limit, Python's
int-string limit, JSON nested past the decoder's recursion) through the real CLI: each is skipped with its
reason or migrated, every other file is migrated, the exit code is the documented one, and no lock or temp
file remains."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.helpers import run_cli

OLD_KEY = "actor_rollout_ref.rollout.update_weights_bucket_megabytes"
NEW_KEY = "actor_rollout_ref.rollout.checkpoint_engine.update_weights_bucket_megabytes"
SCRIPT = f"#!/bin/bash\npython3 -m verl.trainer.main_ppo {OLD_KEY}=512\n"
OLD_IMPORT = "import verl.utils.reward_score.math\n"


def leftovers(root: Path) -> list[str]:
    return [name for _, _, names in os.walk(root) for name in names if name.startswith(".verl-migrate")]


def migrate(root: Path, *flags):
    (root / "ordinary.sh").write_text(SCRIPT)
    return run_cli("--to", "v0.8.0", *flags, root)


@pytest.mark.parametrize("name, body", [
    ("minuses.py", OLD_IMPORT + "x = " + "-" * 50_000 + "a\n"),  # libcst's native parser: SIGSEGV, exit 139
    ("sum.py", OLD_IMPORT + "x = a" + "+a" * 3_500 + "\n"),  # RecursionError in ast, then minutes in libcst
    ("brackets.py", OLD_IMPORT + "x = " + "(" * 2_000 + "a" + ")" * 2_000 + "\n"),  # SIGSEGV at ~1,280
])
def test_a_python_file_nested_past_the_parsers_is_skipped_and_the_run_goes_on(tmp_path, name, body):
    (tmp_path / name).write_text(body)
    proc = migrate(tmp_path, "-v")
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-2000:])
    assert "Traceback" not in proc.stderr
    assert f"VM203 skipped {tmp_path / name}: nested too deeply to parse safely (about " in proc.stderr
    assert (tmp_path / name).read_text() == body
    assert (tmp_path / "ordinary.sh").read_text() == SCRIPT.replace(OLD_KEY, NEW_KEY)
    assert leftovers(tmp_path) == []


BUCKET = OLD_KEY.rsplit(".", 1)[1]
BANG = '"!python3 -m verl.trainer.main_ppo ' + OLD_KEY + '=1\\n"'


@pytest.mark.parametrize("name, body, outcome", [
    ("digits.yaml", f"actor_rollout_ref:\n  rollout:\n    {BUCKET}: 1\n    seed: {'1' * 5_001}\n", "changed"),
    ("deep.yaml", f"actor_rollout_ref:\n  rollout:\n    {BUCKET}: 1\nx: " + "[" * 600 + "]" * 600 + "\n",
     "VM203 skipped {path}: nested too deeply to check safely (601 levels; at most 200)"),
    ("deep.ipynb", '{"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "source": [' + BANG + ']}], '
                   '"metadata": {"x": ' + "[" * 100_000 + "]" * 100_000 + '}, "nbformat": 4, "nbformat_minor": 5}',
     "VM203 skipped {path}: not a parsable notebook: its JSON is nested too deeply"),
])
def test_data_past_python_s_limits_is_migrated_or_skipped_and_the_run_goes_on(tmp_path, name, body, outcome):
    """Python's int-string limit (4,300 digits), the data check's recursion, the JSON decoder's."""
    (tmp_path / name).write_text(body)
    proc = migrate(tmp_path, "-v")
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-2000:])
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr
    if outcome == "changed":
        assert (tmp_path / name).read_text() != body and f"changed: {tmp_path / name}" in proc.stderr
    else:
        assert outcome.format(path=tmp_path / name) in proc.stderr
        assert (tmp_path / name).read_text() == body
    assert (tmp_path / "ordinary.sh").read_text() == SCRIPT.replace(OLD_KEY, NEW_KEY)
    assert leftovers(tmp_path) == []
