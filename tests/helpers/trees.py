"""Generated trees for the run-level tests: a small mixed tree, and the CLI over the tree tests' own table."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.helpers import FIXTURES, HANG_GUARD

TABLE = FIXTURES / "perf" / "table.yaml"
OLD_SCRIPT = """#!/usr/bin/env bash
train_tp=2
python3 -m verl.trainer.main_ppo \\
    actor_rollout_ref.actor.ppo_micro_batch_size=4 \\
    actor_rollout_ref.actor.tensor_model_parallel_size=$train_tp \\
    trainer.use_legacy_worker=True
"""
NEW_SCRIPT = """#!/usr/bin/env bash
python3 -m verl.trainer.main_ppo \\
    trainer.total_epochs=3 \\
    data.train_batch_size=8
"""


def make_tree(root: Path, files: int = 40, old_every: int = 7) -> Path:
    """`files` files in a few directories: scripts (some with old keys), Python, JSON, Markdown."""
    for i in range(files):
        directory = root / f"team{i % 3}" / f"project{i % 5}"
        directory.mkdir(parents=True, exist_ok=True)
        kind = i % 4
        if kind == 0:
            (directory / f"run_{i}.sh").write_text(OLD_SCRIPT if i % old_every == 0 else NEW_SCRIPT)
        elif kind == 1:
            (directory / f"launch_{i}").write_text(OLD_SCRIPT if i % old_every == 1 else NEW_SCRIPT)
        elif kind == 2:
            (directory / f"data_{i}.json").write_text('{"actor_rollout_ref.actor.ppo_micro_batch_size": 1}')
        else:
            (directory / f"mod_{i}.py").write_text("x = 'trainer.use_legacy_worker'\n")
    return root


def run_with_table(*args: str, env: dict | None = None, table: Path = TABLE, **kwargs) -> subprocess.CompletedProcess:
    """The CLI over `table` alone (`--from main --to main`), output as bytes."""
    full_env = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "-m", "migrator", "--from", "main", "--to", "main", "--table", str(table),
                           *args], capture_output=True, env=full_env, timeout=HANG_GUARD, **kwargs)
