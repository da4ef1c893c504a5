"""Broken mapping tables fail with `file:line: entry: problem`, exit 2 and no traceback; valid
history (a key that leaves and comes back across releases) composes instead of failing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from migrator.mapping import TableError, compose, load_builtin
from migrator.mapping.load import ReleaseTable, TableSet, load_table

SCRIPT = b"python3 -m verl.trainer.main_ppo a.b=1\n"


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "migrator", *args], cwd=cwd, capture_output=True, timeout=120)


def _tableset(tmp_path: Path, per_release: dict[str, str]) -> TableSet:
    releases = ("r0", *per_release)
    tables = {}
    for release, body in per_release.items():
        path = tmp_path / f"{release}.yaml"
        path.write_text(f"release: {release}\nentries:\n{body}")
        tables[release] = load_table(path, release=release)
    return TableSet("t", releases, tables)


def test_key_that_leaves_and_comes_back_composes_to_no_change(tmp_path):
    tables = _tableset(tmp_path, {
        "r1": "- {kind: key-rename, old: a.x, new: b.x, pr: 1}\n",
        "r2": "- {kind: key-rename, old: b.x, new: a.x, pr: 2}\n",
    })
    maps = compose(tables, "r0", "r2")
    assert maps.key("a.x") is None
    assert maps.key("b.x").new == "a.x"
    assert compose(tables, "r0", "r1").key("a.x").new == "b.x"
    assert compose(tables, "r1", "r2").key("b.x").new == "a.x"


@pytest.mark.parametrize("to", ["v0.6.0", "v0.8.0", "main"])
def test_builtin_tables_compose_over_the_whole_history(to):
    maps = compose(load_builtin(), None, to)
    # verl moved the profiler keys to actor_rollout_ref.profiler in v0.5.0 and back per role in v0.6.0.
    assert maps.key("actor_rollout_ref.actor.profiler.all_ranks") is None
