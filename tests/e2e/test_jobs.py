"""-j N: the same results and the same output whatever the number of workers."""

from __future__ import annotations

from collections import Counter

import pytest

from migrator import engine, filekind, parallel
from migrator.engine import RunOptions, run
from migrator.fileprocess import RewriteWork
from migrator.tablecache import composed
from tests.helpers.trees import OLD_SCRIPT, TABLE, make_tree, run_with_table


def _summary(results):
    return [(r.path, r.status, r.reason, r.kind, r.after, [(e.line, e.kind, e.message) for e in r.edits],
             [f.format() for f in r.findings]) for r in results]


def test_pool_and_serial_give_identical_results(tmp_path, monkeypatch):
    make_tree(tmp_path, files=60)
    monkeypatch.setenv("VERL_MIGRATE_NO_CACHE", "1")
    monkeypatch.setattr(RewriteWork, "serial_below", 4)  # force the pool on a small tree
    monkeypatch.setattr(RewriteWork, "chunk", 3)
    used = []
    real_pooled = parallel._pooled
    monkeypatch.setattr(parallel, "_pooled", lambda *a: (used.append(1), (yield from real_pooled(*a)))[1])
    mappings, check = composed("main", "main", (str(TABLE),))
    serial = run(RunOptions([str(tmp_path)], write=False, jobs=1), mappings, prefilter=check)
    assert not used
    pooled = run(RunOptions([str(tmp_path)], write=False, jobs=2), mappings, prefilter=check)
    assert used
    assert _summary(serial) == _summary(pooled)
    assert sum(r.status == "changed" for r in pooled) == 6
    assert [r.path for r in pooled] == [r.path for r in serial]


@pytest.mark.parametrize("mode", [["--check", "-v"], ["--diff"], ["--check", "--output-format", "json"]])
def test_cli_output_identical_for_j1_and_j2(tmp_path, mode):
    make_tree(tmp_path, files=RewriteWork.serial_below + 40)  # big enough for the pool
    one = run_with_table(*mode, "-j", "1", str(tmp_path))
    two = run_with_table(*mode, "-j", "2", str(tmp_path))
    assert one.returncode == two.returncode == (0 if "--diff" in mode else 1)
    assert one.stdout == two.stdout and (one.stdout or "--output-format" not in mode)
    assert one.stderr == two.stderr


def test_cli_rewrite_with_workers_writes_every_file(tmp_path):
    make_tree(tmp_path, files=RewriteWork.serial_below + 40)
    done = run_with_table("--allow-dirty", "-j", "2", str(tmp_path))
    assert done.returncode == 0, done.stderr
    again = run_with_table("--check", "-j", "2", str(tmp_path))
    assert again.returncode == 1, again.stderr  # nothing more to edit, but the manual actions stay
    assert b"0 files would change" in again.stderr and b" 0 manual actions" not in again.stderr


def test_default_jobs_is_the_usable_cpu_count():
    assert parallel.default_jobs() >= 1


def test_the_tables_are_frozen_for_the_run_and_thawed_after(tmp_path, monkeypatch):
    # The collector skips the composed tables during a run (and forked workers do not copy their pages);
    # afterwards nothing stays frozen, so a process that runs the engine again can still collect.
    import gc

    make_tree(tmp_path, files=8)
    monkeypatch.setenv("VERL_MIGRATE_NO_CACHE", "1")
    mappings, check = composed("main", "main", (str(TABLE),))
    seen, thresholds = [], []
    real = RewriteWork.run
    monkeypatch.setattr(RewriteWork, "run",
                        lambda *a: seen.append(gc.get_freeze_count()) or thresholds.append(gc.get_threshold()) or real(*a))
    assert gc.get_freeze_count() == 0
    before = gc.get_threshold()
    run(RunOptions([str(tmp_path)], write=False, jobs=1), mappings, prefilter=check)
    assert seen and min(seen) > 0 and gc.get_freeze_count() == 0
    # young objects are collected less often during the run, as often as before after it
    assert {t[0] for t in thresholds} == {max(before[0], engine.RUN_GC_THRESHOLD)}
    assert gc.get_threshold() == before
    # a caller that froze objects itself keeps them frozen
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        run(RunOptions([str(tmp_path)], write=False, jobs=1), mappings, prefilter=check)
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()


def test_workers_read_each_odd_file_once_and_give_the_serial_results(tmp_path, monkeypatch):
    # Workers and the serial run go through the one read/sniff/kind step: a text file of a kind its name
    # gives, a file of no kind by name (read as far as its head, then on when its `#!` line names a kind),
    # binary, UTF-16, unreadable. Each is read once; the results are the serial run's.
    make_tree(tmp_path / "tree", files=12)
    odd = tmp_path / "tree" / "odd"
    odd.mkdir()
    (odd / "binary.sh").write_bytes(b"#!/bin/bash\n\x00\x01" + OLD_SCRIPT.encode())
    (odd / "utf16.md").write_bytes("trainer.use_legacy_worker\n".encode("utf-16"))
    (odd / ".sh").write_text(OLD_SCRIPT)
    (odd / "noext").write_text("#!/usr/bin/env bash\n" + OLD_SCRIPT)
    (odd / "plain.txt").write_text("see actor_rollout_ref.actor.ppo_micro_batch_size in the docs\n")
    (odd / "empty.py").write_bytes(b"")
    (odd / "crlf.sh").write_bytes(OLD_SCRIPT.replace("\n", "\r\n").encode())
    (odd / "gone.sh").symlink_to(odd / "missing")
    monkeypatch.setenv("VERL_MIGRATE_NO_CACHE", "1")
    monkeypatch.setattr(RewriteWork, "serial_below", 4)
    monkeypatch.setattr(RewriteWork, "chunk", 5)
    log = tmp_path / "reads.log"  # written by the forked workers

    def logged(real):
        def read(path, *rest):
            with open(log, "a") as fh:
                fh.write(f"{path.rsplit('/', 1)[-1]}\n")
            return real(path, *rest)
        return read

    monkeypatch.setattr(filekind, "read_bytes", logged(filekind.read_bytes))
    monkeypatch.setattr(filekind, "read_head_then_rest", logged(filekind.read_head_then_rest))
    mappings, check = composed("main", "main", (str(TABLE),))
    serial = run(RunOptions([str(tmp_path / "tree")], write=False, jobs=1), mappings, prefilter=check)
    log.unlink()
    pooled = run(RunOptions([str(tmp_path / "tree")], write=False, jobs=2), mappings, prefilter=check)
    assert _summary(serial) == _summary(pooled)
    statuses = {r.path.rsplit("/", 1)[-1]: r.status for r in pooled}
    assert statuses["binary.sh"] == "skipped" and statuses["utf16.md"] == "skipped"
    assert statuses["noext"] == "changed" and statuses["crlf.sh"] == "changed"
    reads = Counter(log.read_text().splitlines())
    for name in ("binary.sh", "utf16.md", "noext", "plain.txt", "crlf.sh", "empty.py", ".sh"):
        assert reads[name] == 1, (name, reads[name])
    assert "gone.sh" not in reads  # a broken symlink: discovery settles it
