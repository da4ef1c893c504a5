"""Permissions, tested as a non-root user: we run as root here (and root ignores file modes), so a
forked child drops to `nobody` (uid 65534) after importing everything, then runs the engine. An
unreadable file is skipped, a read-only file or directory fails cleanly with a reason and stays
intact, and every other file is still migrated."""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from pathlib import Path

import pytest

from migrator.cli.common import load_mappings
from migrator.engine import RunOptions, run
from tests.helpers.users import NOBODY, as_nobody

OLD = b"python3 -m verl.trainer.main_ppo actor_rollout_ref.rollout.update_weights_bucket_megabytes=512\n"
NEW = b"python3 -m verl.trainer.main_ppo actor_rollout_ref.rollout.checkpoint_engine.update_weights_bucket_megabytes=512\n"

pytestmark = pytest.mark.skipif(not hasattr(os, "fork") or os.geteuid() != 0,
                                reason="needs root to switch to uid 65534 (as non-root, modes are real anyway)")


def run_as_nobody(paths: list[str], home: str) -> dict:
    """Fork, drop to nobody, run a writing engine run; return statuses, reasons and notes."""
    mappings = load_mappings(None, "v0.8.0", ())
    import mmap  # noqa: F401 - everything is loaded before dropping privileges: as nobody,

    import git  # noqa: F401 - the interpreter's own files under /root are out of reach

    import migrator.discover  # noqa: F401
    import migrator.gitguard  # noqa: F401
    import migrator.lock  # noqa: F401
    import migrator.parallel  # noqa: F401
    import migrator.prefilter  # noqa: F401
    from migrator.rewrite.shell import syntax

    syntax._parser()

    def work() -> dict:
        notes: list[str] = []
        results = run(RunOptions(paths), mappings, on_note=notes.append)
        return {"results": {r.path: [r.status, r.reason] for r in results}, "notes": notes}

    return as_nobody(work, home)


@pytest.fixture
def shared_dir():
    """A directory nobody can reach (pytest's tmp_path sits under a 0700 directory)."""
    base = tempfile.mkdtemp(prefix="verl-migrate-perms-")
    os.chmod(base, 0o755)
    yield Path(base)
    for dirpath, dirnames, _ in os.walk(base):
        for name in dirnames:
            os.chmod(os.path.join(dirpath, name), 0o755)
    shutil.rmtree(base)


def owned(path: Path, data: bytes | None = None, mode: int = 0o644) -> Path:
    if data is None:
        path.mkdir()
    else:
        path.write_bytes(data)
    os.chown(path, NOBODY, NOBODY)
    os.chmod(path, mode)
    return path


def test_unreadable_and_read_only_files_and_directories(shared_dir):
    root = owned(shared_dir / "tree", mode=0o755)
    ok = owned(root / "ok.sh", OLD)
    unreadable = owned(root / "unreadable.sh", OLD, 0o000)
    read_only = owned(root / "read_only.sh", OLD, 0o444)
    ro_dir = owned(root / "ro_dir", mode=0o755)
    in_ro_dir = owned(ro_dir / "inside.sh", OLD)
    os.chmod(ro_dir, 0o555)
    closed_dir = owned(root / "closed", mode=0o755)
    owned(closed_dir / "hidden.sh", OLD)
    os.chmod(closed_dir, 0o000)

    out = run_as_nobody([str(root)], str(root))
    assert "exception" not in out, out
    results = out["results"]
    assert ok.read_bytes() == NEW and results[str(ok)][0] == "changed"
    assert results[str(unreadable)] == ["skipped", "unreadable: Permission denied"]
    assert results[str(read_only)][0] == "failed" and "read-only" in results[str(read_only)][1]
    assert results[str(in_ro_dir)] == ["failed", "could not write: Permission denied"]
    assert results[str(closed_dir)] == ["skipped", "cannot read directory: Permission denied"]
    os.chmod(unreadable, 0o644)
    for path in (unreadable, read_only, in_ro_dir):
        assert path.read_bytes() == OLD
    assert stat.S_IMODE(read_only.stat().st_mode) == 0o444
    assert [n for n in os.listdir(ro_dir) if n.startswith(".verl-migrate")] == []
    assert not (root / ".verl-migrate.lock").exists()


def test_unwritable_root_runs_without_a_lock_and_says_so(shared_dir):
    root = owned(shared_dir / "tree", mode=0o755)
    sub = owned(root / "sub", mode=0o755)
    script = owned(sub / "run.sh", OLD)
    os.chmod(root, 0o555)
    out = run_as_nobody([str(root)], str(sub))
    assert "exception" not in out, out
    assert out["results"][str(script)][0] == "changed" and script.read_bytes() == NEW
    assert any("running without a lock" in note for note in out["notes"])
