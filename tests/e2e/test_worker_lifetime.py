"""Workers cannot outlive or stall the run: Ctrl-C and SIGTERM end it (exit 130, 143) even with a worker
stopped by SIGSTOP, remove its lock and leave no worker behind; workers die with a SIGKILLed main process,
even while on a slow file."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

from migrator.lock import LOCK_NAME
from tests.helpers import HANG_GUARD
from tests.helpers.users import NOBODY, as_nobody

pytestmark = pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs /proc")

OLD = b"python3 -m verl.trainer.main_ppo actor_rollout_ref.rollout.update_weights_bucket_megabytes=1\n"


def _children(pid: int) -> list[int]:
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def _state(pid: int) -> str | None:
    """The process's state letter (R, S, T stopped, Z zombie), None when it is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


def _cpu_ticks(pid: int) -> int:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0
    return int(fields[11]) + int(fields[12])


def _gone(pids, seconds: float) -> list[int]:
    """The pids still alive (not gone, not a zombie) after waiting up to `seconds`."""
    deadline = time.monotonic() + seconds
    while True:
        alive = [pid for pid in pids if _state(pid) not in (None, "Z", "X")]
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.05)


def _tree(root: Path, files: int) -> None:
    body = b"#!/bin/bash\n" + OLD * 40
    for i in range(files):
        (root / f"d{i % 20}").mkdir(parents=True, exist_ok=True)
        (root / f"d{i % 20}" / f"s{i}.sh").write_bytes(body)


def _working_worker(proc: subprocess.Popen) -> int | None:
    """A worker of `proc` that has started working (a Python child with CPU time), or None if the run ended."""
    started = time.monotonic()
    while proc.poll() is None and time.monotonic() - started < HANG_GUARD:
        for child in _children(proc.pid):
            if _cpu_ticks(child) >= 5 and Path(f"/proc/{child}/cmdline").read_bytes().startswith(
                    sys.executable.encode()):
                return child
        time.sleep(0.01)
    return None


@pytest.mark.parametrize(("stop", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_ends_the_run_even_with_a_stopped_worker(tmp_path, stop, code):
    _tree(tmp_path, 3000)
    before = {p: p.read_bytes() for p in tmp_path.rglob("*.sh")}
    proc = subprocess.Popen([sys.executable, "-m", "migrator", "--to", "v0.8.0", "-q", "-j", "2", str(tmp_path)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    victim = None
    try:
        victim = _working_worker(proc)
        assert victim is not None, "the run ended before a worker worked: nothing tested"
        workers = _children(proc.pid)
        os.kill(victim, signal.SIGSTOP)
        os.kill(proc.pid, stop)
        try:
            stdout, stderr = proc.communicate(timeout=HANG_GUARD)
        except subprocess.TimeoutExpired:
            pytest.fail("the main process waits for the stopped worker")
        assert proc.returncode == code, stderr
        assert "Traceback" not in stdout + stderr
        assert _gone(workers, 5) == [], "workers outlived the run"
        assert not (tmp_path / LOCK_NAME).exists(), "the lock stayed behind"
        assert {p: p.read_bytes() for p in tmp_path.rglob("*.sh")} == before  # stopped before any write
    finally:
        if victim is not None and _state(victim) is not None:
            os.kill(victim, signal.SIGCONT)
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()


def test_ctrl_c_of_a_run_without_workers_exits_130(tmp_path):
    _tree(tmp_path, 600)
    proc = subprocess.Popen([sys.executable, "-m", "migrator", "--check", "--to", "v0.8.0", "-j", "1", str(tmp_path)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    while _cpu_ticks(proc.pid) < 30 and proc.poll() is None:  # well into the run (tables loaded)
        time.sleep(0.01)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=HANG_GUARD)
    assert proc.returncode == 130, stderr  # 1 is `--check`'s "files would change"
    assert "Traceback" not in stderr and "interrupted" in stderr


# A work whose every file takes ten minutes: a worker is always mid-file.
SLOW_RUN = textwrap.dedent("""
    import os, sys, time
    from migrator import parallel
    from migrator.discover import Candidate

    if sys.argv[1] == "watch":  # no parent-death signal: the worker's thread that watches its parent
        parallel._parent_death_signal = lambda: None

    class Slow:
        serial_below, chunk = 1, 1

        def by_name(self, candidate):
            return None

        def run(self, candidate):
            # One write(2) per line: print() makes two (the pid, then the newline) when PYTHONUNBUFFERED is
            # set, and two workers' halves then interleave on the shared pipe: a line "123456", then an empty one.
            os.write(1, b"%d\\n" % os.getpid())
            time.sleep(600)

        def expand(self, candidate, outcome):
            return outcome

        def lost(self, candidate, reason):
            return reason

    for _ in parallel.process_files([Candidate(str(i), str(i)) for i in range(4)], Slow(), jobs=2):
        pass
""")


@pytest.mark.parametrize("how", ["signal", "watch"])
def test_workers_die_with_a_sigkilled_main_process_even_mid_file(tmp_path, how):
    proc = subprocess.Popen([sys.executable, "-c", SLOW_RUN, how], stdout=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        workers = [int(proc.stdout.readline()) for _ in range(2)]
        assert all(_state(pid) not in (None, "Z") for pid in workers)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        assert _gone(workers, 5) == [], "workers outlived the main process by more than 5 s"
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


@pytest.mark.skipif(not hasattr(os, "fork") or os.geteuid() != 0, reason="needs root to become uid 65534")
def test_jobs_stay_within_a_real_process_limit(core_mappings):
    """As nobody with RLIMIT_NPROC a few tasks above what nobody runs, `-j 16` runs within the limit (a
    fork past it raised BlockingIOError, a traceback and exit 1)."""
    import ctypes  # noqa: F401 - loaded before dropping privileges: the interpreter's files are out of reach
    import multiprocessing.popen_fork  # noqa: F401 - (likewise)
    import resource

    from migrator import parallel, proclimits
    from migrator.discover import Candidate
    from migrator.fileprocess import RewriteWork
    from migrator.rewrite.shell import syntax

    syntax._parser()
    tree = Path(tempfile.mkdtemp(prefix="verl-migrate-nproc-"))  # nobody cannot reach pytest's tmp_path
    os.chmod(tree, 0o755)
    candidates = []
    for i in range(3 * RewriteWork.serial_below):
        (tree / f"s{i:04}.sh").write_bytes(OLD)
        candidates.append(Candidate(str(tree / f"s{i:04}.sh"), f"s{i:04}.sh"))

    def work() -> dict:
        limit = proclimits._tasks_of_user(NOBODY) + 3
        resource.setrlimit(resource.RLIMIT_NPROC, (limit, limit))
        notes: list[str] = []
        results = list(parallel.process_files(candidates, RewriteWork(core_mappings, None), jobs=16,
                                              note=notes.append))
        return {"statuses": sorted({r.status for _, r in results}), "count": len(results), "notes": notes}

    try:
        out = as_nobody(work)
    finally:
        shutil.rmtree(tree)
    assert "exception" not in out, out
    assert out["count"] == len(candidates) and out["statuses"] == ["changed"]
    assert len(out["notes"]) == 1 and out["notes"][0].startswith("note: -j 16 lowered to 1:"), out["notes"]
