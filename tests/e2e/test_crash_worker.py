"""A worker process killed mid-run (the OOM killer) must not hang the run: the files of the chunk it
held fail with the signal, the other files are processed and written, the lock is released, exit 3."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from migrator import parallel
from migrator.discover import Candidate
from migrator.fileprocess import RewriteWork
from migrator.lock import LOCK_NAME
from tests.helpers import HANG_GUARD

OLD = b"python3 -m verl.trainer.main_ppo actor_rollout_ref.rollout.update_weights_bucket_megabytes=1\n"


def test_a_killed_worker_fails_its_chunk_and_the_run_goes_on(tmp_path, core_mappings, monkeypatch, deadline):
    files = RewriteWork.serial_below + 3 * RewriteWork.chunk
    candidates = []
    for i in range(files):
        path = tmp_path / ("die.sh" if i == RewriteWork.chunk + 5 else f"s{i:04}.sh")
        path.write_bytes(OLD)
        candidates.append(Candidate(str(path), str(path)))
    real_chunk = parallel._process_chunk

    def chunk_or_die(batch):  # runs in the forked worker: the "OOM killer" strikes on one chunk
        if any(c.path.endswith("die.sh") for c in batch):
            os.kill(os.getpid(), signal.SIGKILL)
        return real_chunk(batch)

    monkeypatch.setattr(parallel, "_process_chunk", chunk_or_die)
    out = list(parallel.process_files(candidates, RewriteWork(core_mappings, None), jobs=2))
    assert [c for c, _ in out] == candidates  # every file, in order
    lost = {c.path for c in candidates[RewriteWork.chunk: 2 * RewriteWork.chunk]}
    for candidate, result in out:
        if candidate.path in lost:
            assert result.status == "failed"
            assert result.reason == "worker process died: killed by signal 9 (SIGKILL)"
        else:
            assert result.status == "changed", result.reason


def _children(pid: int) -> list[int]:
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def _cpu_ticks(pid: int) -> int:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0
    return int(fields[11]) + int(fields[12])  # utime + stime


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs /proc")
def test_the_cli_survives_a_worker_killed_from_outside(tmp_path):
    body = b"#!/bin/bash\n" + OLD * 40
    for i in range(1200):
        (tmp_path / f"d{i % 10}").mkdir(exist_ok=True)
        (tmp_path / f"d{i % 10}" / f"s{i}.sh").write_bytes(body)
    proc = subprocess.Popen([sys.executable, "-m", "migrator", "--to", "v0.8.0", "-q", "-j", "2", str(tmp_path)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    victim, started = None, time.monotonic()
    while victim is None and proc.poll() is None and time.monotonic() - started < 60:
        for child in _children(proc.pid):  # a worker that has started working (not git, not idle)
            if _cpu_ticks(child) >= 10 and Path(f"/proc/{child}/cmdline").read_bytes().startswith(
                    sys.executable.encode()):
                victim = child
                os.kill(child, signal.SIGKILL)
                break
        time.sleep(0.02)
    try:
        stdout, stderr = proc.communicate(timeout=HANG_GUARD)
    except subprocess.TimeoutExpired:
        proc.kill()
        pytest.fail("the run hangs after a worker died")
    assert victim is not None, "the run ended before a worker could be killed"
    assert proc.returncode == 3, stderr
    assert "worker process died: killed by signal 9 (SIGKILL)" in stderr
    assert "Traceback" not in stderr + stdout
    assert not (tmp_path / LOCK_NAME).exists()
    migrated = sum((p.read_bytes() != body) for p in tmp_path.rglob("*.sh"))
    failed = stderr.count("worker process died")
    assert failed >= 1 and migrated + failed == 1200
