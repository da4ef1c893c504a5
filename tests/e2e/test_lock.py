"""The run lock: a second writing run on the same tree fails fast (exit 2) instead of interleaving;
stale locks of dead runs are taken over; dry runs take no lock; a killed run's temp files go."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import git
import pytest

from migrator.lock import LOCK_NAME, LockHeld, LockInfo, lock_roots, run_lock
from tests.helpers import HANG_GUARD

OLD = b"python3 -m verl.trainer.main_ppo actor_rollout_ref.rollout.update_weights_bucket_megabytes=512\n"
NEW = b"python3 -m verl.trainer.main_ppo actor_rollout_ref.rollout.checkpoint_engine.update_weights_bucket_megabytes=512\n"


def cli(*args, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "migrator", "--to", "v0.8.0", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=HANG_GUARD)


def tree(tmp_path: Path) -> Path:
    root = tmp_path / "scripts"
    (root / "sub").mkdir(parents=True)
    (root / "run.sh").write_bytes(OLD)
    (root / "sub" / "deep.sh").write_bytes(OLD)
    return root


@pytest.fixture
def holder(tmp_path):
    """Start a process that holds the lock of a directory until the test ends."""
    procs = []

    def start(directory: Path) -> subprocess.Popen:
        code = textwrap.dedent(f"""
            import sys, time
            from migrator.lock import run_lock
            with run_lock([{str(directory)!r}]):
                print("held", flush=True)
                time.sleep(3600)  # until the test kills it: a run that waited for the lock would never end
        """)
        proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
        procs.append(proc)
        assert proc.stdout.readline().strip() == "held"
        return proc

    yield start
    for proc in procs:
        proc.kill()
        proc.wait()


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def write_lock(directory: Path, pid: int, host: str | None = None) -> Path:
    info = LockInfo(pid, host or socket.gethostname(), "2026-01-01 00:00:00 UTC", time.time() - 3600)
    path = directory / LOCK_NAME
    path.write_bytes(info.dumps())
    return path


def test_second_run_fails_fast_and_writes_nothing(tmp_path, holder):
    root = tree(tmp_path)
    proc = holder(root)
    out = cli(root)  # returns at all only if it does not wait: the holder keeps the lock until the end
    assert out.returncode == 2, out.stderr
    assert f"error: another verl-migrate run (pid {proc.pid}) is working on {root} since " in out.stderr
    assert "Traceback" not in out.stderr
    assert (root / "run.sh").read_bytes() == OLD
    assert (root / LOCK_NAME).exists()  # the holder's lock is not ours to remove


def test_lock_holds_json_with_pid_host_and_start_time(tmp_path):
    root = tree(tmp_path)
    with run_lock([str(root)]) as me:
        data = json.loads((root / LOCK_NAME).read_bytes())
        assert data["pid"] == os.getpid() == me.pid
        assert data["host"] == socket.gethostname()
        assert data["started"].endswith("UTC")
    assert not (root / LOCK_NAME).exists()


def test_lock_is_removed_on_errors(tmp_path):
    root = tree(tmp_path)
    with pytest.raises(RuntimeError):
        with run_lock([str(root)]):
            raise RuntimeError("boom")
    assert not (root / LOCK_NAME).exists()
    assert [p.name for p in root.iterdir() if p.name.startswith(".verl-migrate")] == []


def test_lock_is_removed_after_a_refused_run(tmp_path):
    repo = git.Repo.init(tmp_path / "repo")
    script = Path(repo.working_tree_dir) / "run.sh"
    script.write_bytes(OLD)  # untracked: the git guard refuses it
    out = cli(repo.working_tree_dir)
    assert out.returncode == 2 and "uncommitted changes" in out.stderr
    assert not (Path(repo.working_tree_dir) / LOCK_NAME).exists()


def test_successful_run_removes_its_lock(tmp_path):
    root = tree(tmp_path)
    out = cli(root)
    assert out.returncode == 0, out.stderr
    assert (root / "run.sh").read_bytes() == NEW
    assert not (root / LOCK_NAME).exists()


def test_stale_lock_of_a_dead_pid_is_taken_over_with_a_note(tmp_path):
    root = tree(tmp_path)
    pid = dead_pid()
    write_lock(root, pid)
    out = cli(root)
    assert out.returncode == 0, out.stderr
    assert f"taking over the lock of a verl-migrate run that died (pid {pid}" in out.stderr
    assert (root / "run.sh").read_bytes() == NEW
    assert not (root / LOCK_NAME).exists()


def test_lock_from_another_host_is_not_guessed_stale(tmp_path):
    root = tree(tmp_path)
    write_lock(root, dead_pid(), host="some-other-host")
    out = cli(root)
    assert out.returncode == 2
    assert "pid" in out.stderr and "some-other-host" in out.stderr and "delete" in out.stderr
    assert (root / "run.sh").read_bytes() == OLD


def test_unreadable_old_lock_is_taken_over(tmp_path):
    root = tree(tmp_path)
    lock = root / LOCK_NAME
    lock.write_bytes(b"")  # a crash between O_EXCL create and write, on a file system without links
    os.utime(lock, (time.time() - 60, time.time() - 60))
    out = cli(root)
    assert out.returncode == 0, out.stderr
    assert "unreadable stale lock" in out.stderr
    assert (root / "run.sh").read_bytes() == NEW


@pytest.mark.parametrize("flag", ["--check", "--diff"])
def test_dry_runs_take_no_lock(tmp_path, holder, flag):
    root = tree(tmp_path)
    holder(root)
    out = cli(flag, root)
    assert out.returncode in (0, 1), out.stderr
    assert "another verl-migrate run" not in out.stderr
    if flag == "--check":
        assert out.returncode == 1


def test_git_work_tree_is_locked_at_its_toplevel(tmp_path, holder):
    repo = git.Repo.init(tmp_path / "repo")
    top = Path(repo.working_tree_dir)
    (top / "a").mkdir()
    (top / "a" / "run.sh").write_bytes(OLD)
    (top / "b").mkdir()
    assert lock_roots([str(top / "a"), str(top / "b")]) == [str(top.resolve())]
    proc = holder(top / "b")  # locks the toplevel too
    out = cli("--allow-dirty", top / "a" / "run.sh")
    assert out.returncode == 2
    assert f"(pid {proc.pid}) is working on {top.resolve()}" in out.stderr


def test_outside_git_each_directory_is_a_root_and_nested_roots_collapse(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    (a / "inner").mkdir(parents=True)
    b.mkdir()
    (b / "x.sh").write_bytes(OLD)
    assert lock_roots([str(a), str(a / "inner"), str(b / "x.sh")]) == [str(a.resolve()), str(b.resolve())]


def test_run_inside_a_locked_parent_directory_is_refused(tmp_path, holder):
    root = tree(tmp_path)
    proc = holder(root)
    out = cli(root / "sub")
    assert out.returncode == 2
    assert f"(pid {proc.pid}) is working on {root}" in out.stderr
    assert (root / "sub" / "deep.sh").read_bytes() == OLD


def test_library_callers_get_lock_held(tmp_path, holder):
    root = tree(tmp_path)
    holder(root)
    with pytest.raises(LockHeld, match="another verl-migrate run"):
        with run_lock([str(root)]):
            pass


# -- stale temp files ---------------------------------------------------------------------------

def test_next_run_removes_only_our_stale_temp_files(tmp_path, holder):
    root = tree(tmp_path)
    old = time.time() - 600
    stale = [root / ".verl-migrate-run.sh.ab_cd123.tmp", root / "sub" / ".verl-migrate-deep.sh.Zq9xY8w7.tmp",
             root / ".verl-migrate-lock.123.456.part"]
    decoys = [root / ".verl-migrate-notes.tmp", root / "x.verl-migrate-run.sh.abcdefgh.tmp",
              root / ".verl-migrate-run.sh.abcdefgh.tmp.bak", root / ".verl-migrate-run.sh.abc.tmp",
              root / "sub" / "keep.tmp"]
    for p in stale + decoys:
        p.write_bytes(b"partial")
        os.utime(p, (old, old))
    fresh = root / ".verl-migrate-run.sh.fresh123.tmp"  # newer than our lock: not ours to judge
    fresh.write_bytes(b"x")
    future = time.time() + 600
    os.utime(fresh, (future, future))
    out = cli(root)
    assert out.returncode == 0, out.stderr
    assert "removed 3 temp files left by an interrupted run" in out.stderr
    assert [p for p in stale if p.exists()] == []
    assert all(p.read_bytes() == b"partial" for p in decoys)
    assert fresh.exists()


def test_temp_files_under_another_live_runs_lock_are_kept(tmp_path, holder):
    root = tree(tmp_path)
    holder(root / "sub")
    theirs = root / "sub" / ".verl-migrate-deep.sh.abcdefgh.tmp"
    theirs.write_bytes(b"in flight")
    os.utime(theirs, (time.time() - 60, time.time() - 60))
    out = cli(root / "run.sh")
    assert out.returncode == 0, out.stderr
    with run_lock([str(root / "run.sh")]) as me:
        from migrator.lock import stale_temp_files

        assert list(stale_temp_files([str(root)], time.time(), me)) == []
    assert theirs.exists()


def test_symlinked_temp_lookalike_is_not_followed(tmp_path):
    root = tree(tmp_path)
    outside = tmp_path / "outside.txt"
    outside.write_bytes(b"precious")
    link = root / ".verl-migrate-run.sh.abcdefgh.tmp"
    link.symlink_to(outside)
    out = cli(root)
    assert out.returncode == 0, out.stderr
    assert link.is_symlink() and outside.read_bytes() == b"precious"


def test_a_killed_runs_lock_temp_file_is_removed_by_the_next_run(tmp_path):
    """SIGKILL between writing the lock's temp file and linking it leaves `.verl-migrate-lock.<pid>.<ns>.part`."""
    root = tree(tmp_path)
    part = root / f".verl-migrate-lock.{dead_pid()}.123456789.part"
    part.write_bytes(LockInfo.mine().dumps())
    os.utime(part, (time.time() - 60, time.time() - 60))
    out = cli(root)
    assert out.returncode == 0, out.stderr
    assert not part.exists() and "temp file left by an interrupted run" in out.stderr
    assert (root / "run.sh").read_bytes() == NEW


# -- what counts as a lock ----------------------------------------------------------------------

ANOTHER_UID = 54321
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="planting a file as another user needs root (chown)")


def test_a_fifo_named_like_the_lock_in_the_root_is_refused_without_blocking(tmp_path):
    root = tree(tmp_path)
    os.mkfifo(root / LOCK_NAME)
    out = cli(root)  # cli() times out (a test failure) if the run opens the FIFO and waits for a writer
    assert out.returncode == 2, out.stderr
    assert f"error: {root / LOCK_NAME} is a FIFO, not a lock file; remove it" in out.stderr
    assert (root / "run.sh").read_bytes() == OLD
    assert "Traceback" not in out.stderr


def test_a_fifo_named_like_the_lock_in_a_parent_directory_stops_nothing(tmp_path):
    root = tree(tmp_path)
    os.mkfifo(tmp_path / LOCK_NAME)
    out = cli(root / "sub")
    assert out.returncode == 0, out.stderr
    assert (root / "sub" / "deep.sh").read_bytes() == NEW
    assert not (root / "sub" / LOCK_NAME).exists()


@needs_root
def test_a_lock_planted_by_another_user_in_a_shared_parent_stops_no_run(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    root = tree(shared)
    planted = write_lock(shared, 1)  # pid 1 is alive, and root's: only the owner gives it away
    os.chown(planted, ANOTHER_UID, ANOTHER_UID)
    out = cli(root)
    assert out.returncode == 0, out.stderr
    assert (root / "run.sh").read_bytes() == NEW
    assert planted.exists()


@needs_root
def test_a_lock_of_another_user_in_the_root_is_not_honoured(tmp_path):
    root = tree(tmp_path)
    planted = write_lock(root, 1)
    os.chown(planted, ANOTHER_UID, ANOTHER_UID)
    out = cli(root)
    assert out.returncode == 0, out.stderr
    assert f"note: ignoring {planted}: owned by uid {ANOTHER_UID}, not a lock of yours" in out.stderr
    assert (root / "run.sh").read_bytes() == NEW
    assert not planted.exists()


def test_a_lock_in_a_parent_is_honoured_only_when_it_is_a_live_run_of_ours(tmp_path, holder):
    root = tree(tmp_path)
    write_lock(tmp_path, dead_pid())  # a dead run's lock above the root: not in the way
    out = cli(root / "sub")
    assert out.returncode == 0, out.stderr
    assert (root / "sub" / "deep.sh").read_bytes() == NEW


def test_a_stale_lock_whose_pid_now_belongs_to_a_newer_process_is_taken_over(tmp_path):
    root = tree(tmp_path)
    newer = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        write_lock(root, newer.pid)  # written "an hour ago", by a run that had this pid then
        out = cli(root)
    finally:
        newer.kill()
        newer.wait()
    assert out.returncode == 0, out.stderr
    assert f"taking over the lock of a verl-migrate run that died (pid {newer.pid}" in out.stderr
    assert (root / "run.sh").read_bytes() == NEW


def test_a_live_process_that_started_before_the_lock_still_holds_it(tmp_path):
    root = tree(tmp_path)
    info = LockInfo(os.getpid(), socket.gethostname(), "now", time.time())  # this test process, alive since before
    (root / LOCK_NAME).write_bytes(info.dumps())
    out = cli(root)
    assert out.returncode == 2, out.stderr
    assert f"another verl-migrate run (pid {os.getpid()}) is working on {root}" in out.stderr
    assert (root / "run.sh").read_bytes() == OLD


@pytest.mark.parametrize("pid", ["1" + "0" * 30, "1e400", "-5", "true", "\"12\"", "1.5", "[1]"])
def test_a_lock_with_a_field_out_of_range_is_an_unreadable_lock_not_a_traceback(tmp_path, pid):
    root = tree(tmp_path)
    lock = root / LOCK_NAME
    lock.write_text(f'{{"pid": {pid}, "host": "{socket.gethostname()}", "started": "x", "started_epoch": 1}}')
    os.utime(lock, (time.time() - 60, time.time() - 60))
    out = cli(root)
    assert out.returncode == 0, out.stderr
    assert "Traceback" not in out.stderr
    assert f"note: removing unreadable stale lock {lock}" in out.stderr
    assert (root / "run.sh").read_bytes() == NEW


@pytest.mark.parametrize("epoch", ["1e400", "-1e400", "NaN", "\"1\"", "1e300"])
def test_a_lock_with_a_start_time_out_of_range_is_unreadable(epoch):
    data = f'{{"pid": 5, "host": "h", "started": "x", "started_epoch": {epoch}}}'.encode()
    assert LockInfo.loads(data) is None
    assert LockInfo.loads(b'{"pid": 5, "host": "h", "started": "x", "started_epoch": 1.5}') == LockInfo(5, "h", "x", 1.5)
