"""The tables kept between runs: two processes of one run saving at the same moment keep both additions."""

from __future__ import annotations

import multiprocessing
import os
import time

import pytest

from migrator import cache
from migrator.verdict.memo import DiskTable

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the run's workers are forked")


def _save_after(table_name: str, key: str, barrier, slow_store) -> None:
    table = DiskTable(table_name)
    table.table[key] = key.upper()
    if slow_store:
        store = cache.store_pickle

        def slowly(name, value):
            time.sleep(0.3)  # both workers have read the old file by now, unless one waits for the other
            return store(name, value)

        cache.store_pickle = slowly
    barrier.wait()
    table.save()


def test_workers_saving_together_keep_each_others_additions(tmp_path, monkeypatch):
    monkeypatch.setenv("VERL_MIGRATE_CACHE_DIR", str(tmp_path / "cache"))
    context = multiprocessing.get_context("fork")
    barrier = context.Barrier(2)
    workers = [context.Process(target=_save_after, args=("together", key, barrier, True)) for key in ("a", "b")]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(30)
        assert worker.exitcode == 0
    assert DiskTable("together").table == {"a": "A", "b": "B"}


def _save_one(table_name: str) -> None:
    table = DiskTable(table_name)
    table.table["k"] = "v"
    table.save()


def test_a_foreign_lock_file_is_not_waited_for(tmp_path, monkeypatch):
    """A lock file others may write (or another user's) could hold every run: the save goes on unlocked."""
    import fcntl

    monkeypatch.setenv("VERL_MIGRATE_CACHE_DIR", str(tmp_path / "cache"))
    lock = cache.directory() / f"{DiskTable('shared')._name()}.lock"
    lock.write_bytes(b"")
    lock.chmod(0o666)
    with open(lock, "rb") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # someone else holds it, and never lets go
        worker = multiprocessing.get_context("fork").Process(target=_save_one, args=("shared",))
        worker.start()
        worker.join(20)
        if worker.exitcode is None:
            worker.kill()
        assert worker.exitcode == 0
    assert DiskTable("shared").table == {"k": "v"}
