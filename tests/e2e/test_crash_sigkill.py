"""SIGKILL a real run (its whole process group, workers included) at several moments over a tree of
a few thousand files: every file is always either exactly as it was or fully migrated, and the next
run finishes the job, takes over the dead run's lock and leaves no temp files behind."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from migrator.lock import LOCK_NAME, LOCK_PART_RE, TEMP_FILE_RE
from tests.helpers import HANG_GUARD

FILES = 1500
ARGS = ["--to", "v0.8.0", "-q", "-j", "4"]


def make_tree(root: Path) -> None:
    for i in range(FILES):
        directory = root / f"d{i % 25}"
        directory.mkdir(parents=True, exist_ok=True)
        if i % 3 == 0:  # nothing to migrate
            body = b"#!/bin/bash\necho plain %d\n" % i
        else:
            body = (b"#!/bin/bash\r\n" if i % 7 == 0 else b"#!/bin/bash\n") + (
                b"set -x\npython3 -m verl.trainer.main_ppo \\\n"
                b"    actor_rollout_ref.rollout.update_weights_bucket_megabytes=%d \\\n"
                b"    trainer.total_epochs=1\n"
                b"bash examples/grpo_trainer/run_qwen3_30b_a3b_mindspeed.sh\n# %s\n" % (i, b"pad" * (i % 500)))
        path = directory / f"s{i}.sh"
        path.write_bytes(body)
        os.chmod(path, 0o755 if i % 2 else 0o640)


def snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    out = {}
    for dirpath, _, names in os.walk(root):
        for name in names:
            full = Path(dirpath) / name
            out[str(full.relative_to(root))] = (full.read_bytes(), full.stat().st_mode & 0o7777)
    return out


def start(root: Path, log: Path) -> subprocess.Popen:
    # stderr goes to a file, never to a pipe nobody reads while the test watches the tree: a report larger
    # than the pipe's buffer (a manual action per file) would block the run before it exits.
    with open(log, "wb") as err:
        return subprocess.Popen([sys.executable, "-m", "migrator", *ARGS, str(root)], stdout=subprocess.DEVNULL,
                                stderr=err, start_new_session=True)


def kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def replaced(root: Path, inodes: dict[str, int]) -> int:
    """How many files have a new inode (os.replace by a run) since `inodes` was taken."""
    count = 0
    for rel, ino in inodes.items():
        try:
            if os.stat(root / rel).st_ino != ino:
                count += 1
        except FileNotFoundError:
            count += 1
    return count


def check_every_file(root: Path, before: dict, after: dict) -> dict[str, int]:
    """Each file is byte-for-byte (and mode-for-mode) the original or the migrated one."""
    now = snapshot(root)
    leftovers = sorted(k for k in now if k not in before)
    # A kill may land while a file's temp copy or the lock's own temp file (`_create`) exists; the next
    # run removes both (the final snapshot below proves it).
    assert all(TEMP_FILE_RE.match(os.path.basename(k)) or LOCK_PART_RE.match(os.path.basename(k)) or k == LOCK_NAME
               for k in leftovers), leftovers
    assert set(before) <= set(now), "a file disappeared"
    counts = {"original": 0, "migrated": 0, "temp files": len(leftovers) - (LOCK_NAME in leftovers)}
    for rel, expected_before in before.items():
        got = now[rel]
        if got == expected_before:
            counts["original"] += 1
        else:
            assert got == after[rel], f"{rel} is neither the original nor the migrated file"
            counts["migrated"] += 1
    return counts


@pytest.mark.skipif(not hasattr(os, "killpg"), reason="needs process groups")
def test_sigkill_at_any_moment_never_tears_a_file(tmp_path):
    pristine = tmp_path / "pristine"
    make_tree(pristine)
    before = snapshot(pristine)
    reference = tmp_path / "reference"
    shutil.copytree(pristine, reference)
    clean = subprocess.run([sys.executable, "-m", "migrator", *ARGS, str(reference)], capture_output=True,
                           timeout=HANG_GUARD)
    assert clean.returncode == 0, clean.stderr
    # How long a run takes with the caches the first one filled, as every killed run below has them.
    timed = tmp_path / "timed"
    shutil.copytree(pristine, timed)
    started = time.monotonic()
    subprocess.run([sys.executable, "-m", "migrator", *ARGS, str(timed)], capture_output=True, timeout=HANG_GUARD)
    clean_seconds = time.monotonic() - started
    after = snapshot(reference)
    changeable = sum(1 for k in before if before[k] != after[k])
    assert changeable == FILES - FILES // 3

    # Kill moments: during start-up, while files are being read and parsed, and at three points
    # of the write phase (first replaced file, a third and half of what is left); each run resumes
    # the work of the killed one. On a loaded machine a whole write phase can pass between two looks at
    # the tree: then the sequence runs again on a fresh copy (every attempt checks every file).
    for attempt in range(5):
        victim = tmp_path / f"victim{attempt}"
        shutil.copytree(pristine, victim)
        history = _kill_at_each_moment(victim, before, after, changeable, clean_seconds)
        final = subprocess.run([sys.executable, "-m", "migrator", *ARGS, str(victim)], capture_output=True,
                               timeout=HANG_GUARD)
        assert final.returncode == 0, final.stderr
        assert b"Traceback" not in final.stderr
        assert snapshot(victim) == after, "the resumed run must finish exactly what a clean run does"
        if any(0 < c["migrated"] < changeable for _, _, c in history):
            break
    # Some kill must have landed inside the write phase for this test to mean anything.
    assert any(0 < c["migrated"] < changeable for _, _, c in history), history
    print(history)


def _kill_at_each_moment(victim: Path, before: dict, after: dict, changeable: int, clean_seconds: float) -> list:
    # "processing" is half a warm clean run's time: a fixed 0.6 s outlasted the whole run on a fast machine,
    # and then no kill was left for the write phase.
    triggers = [("startup", 0.05, None), ("processing", min(0.6, 0.5 * clean_seconds), None), ("first write", None, 1),
                ("a third written", None, 1 / 3), ("half the rest written", None, 1 / 2)]
    history, migrated = [], 0
    for label, delay, fraction in triggers:
        inodes = {rel: os.stat(victim / rel).st_ino for rel in before}
        writes = None
        if fraction is not None:
            writes = 1 if fraction == 1 else max(1, int((changeable - migrated) * fraction))
        log = victim.parent / f"{victim.name}-{label.replace(' ', '-')}.stderr"
        proc = start(victim, log)
        if delay is not None:
            time.sleep(delay)
        else:
            while replaced(victim, inodes) < writes and proc.poll() is None:
                pass
        finished = proc.poll() is not None
        kill_group(proc)
        counts = check_every_file(victim, before, after)
        history.append((label, finished, counts))
        migrated = counts["migrated"]
        assert b"Traceback" not in log.read_bytes()
    return history


@pytest.mark.skipif(not hasattr(os, "killpg") or shutil.which("pgrep") is None, reason="needs process groups")
def test_sigkill_of_the_parent_alone_leaves_no_workers_and_no_writes(tmp_path):
    """Workers only compute (the parent writes), and they exit when the parent is gone."""
    root = tmp_path / "tree"
    make_tree(root)
    before = snapshot(root)
    proc = start(root, tmp_path / "run.stderr")
    workers: list[str] = []
    # Two processes besides the parent, and its lock taken: a child seen before the lock (the `git` it runs
    # first) left the next run no lock to take over, and the test failed by its timing alone.
    while (len(workers) < 2 or not (root / LOCK_NAME).exists()) and proc.poll() is None:
        time.sleep(0.02)
        workers = [pid for pid in subprocess.run(["pgrep", "-g", str(proc.pid)], capture_output=True,
                                                 text=True).stdout.split() if pid != str(proc.pid)]
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    try:
        for _ in range(600):  # 30 s: workers get SIGKILL from the kernel when their parent dies
            left = subprocess.run(["pgrep", "-g", str(proc.pid)], capture_output=True, text=True).stdout.split()
            if not left:
                break
            time.sleep(0.05)
        assert left == [], "worker processes outlived their parent"
    finally:
        kill_group(proc)
    assert len(workers) >= 2, "the run never started workers; the test proves nothing"
    now = snapshot(root)
    assert {k: v for k, v in now.items() if k != LOCK_NAME} == before  # killed before its write phase
    final = subprocess.run([sys.executable, "-m", "migrator", *ARGS, str(root)], capture_output=True, timeout=HANG_GUARD)
    assert final.returncode == 0 and b"taking over the lock" in final.stderr, final.stderr
