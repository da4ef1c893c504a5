"""The tables kept between runs: two processes of one run saving at the same moment keep both additions."""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
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
    shared = DiskTable("shared")
    cache.directory(shared._name())
    lock = cache.directory() / f"{shared.shard_file(shared.shard_of('k'))}.lock"
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
    # Control: the same lock, ours alone and held, is waited for (so it is the one the save takes). Another
    # process holds it: a forked worker would inherit this one's descriptor, and the lock with it.
    lock.chmod(0o600)
    holder = subprocess.Popen([sys.executable, "-c", "import fcntl, sys, time; f = open(sys.argv[1], 'rb'); "
                               "fcntl.flock(f, fcntl.LOCK_EX); print(flush=True); time.sleep(60)", str(lock)],
                              stdout=subprocess.PIPE)
    try:
        holder.stdout.readline()
        worker = multiprocessing.get_context("fork").Process(target=_save_one, args=("shared",))
        worker.start()
        worker.join(1)
        waited = worker.exitcode is None
    finally:
        holder.kill()  # lets go (the worker holds a copy of every pipe of this process: no end of input reaches it)
        holder.wait()
    worker.join(20)
    assert waited and worker.exitcode == 0


def test_a_value_is_unpickled_only_when_looked_up_and_a_broken_one_is_a_miss(tmp_path, monkeypatch):
    """A worker looks up a few of a table's thousands of entries: only the shards of its keys are read and
    only the values it asks for unpickled; one that will not unpickle (a truncated write, another Python's)
    costs its own recomputation, not the table."""
    import pickle

    monkeypatch.setenv("VERL_MIGRATE_CACHE_DIR", str(tmp_path / "cache"))
    table = DiskTable("lazy")
    keys = ["kept", "broken", "other"] + [f"k{i}" for i in range(40)]
    table.table.update({key: (key, 1) for key in keys})
    table.save()
    assert len({table.shard_of(key) for key in keys}) > 1
    broken = table.shard_file(table.shard_of("broken"))
    raw = pickle.loads((cache.directory() / broken).read_bytes())
    raw["broken"] = raw["broken"][:-3]  # truncated
    cache.store_pickle(broken, raw)
    loads = []
    real_loads = pickle.loads

    def counting(data, *args, **kwargs):
        loads.append(data)
        return real_loads(data, *args, **kwargs)

    monkeypatch.setattr(pickle, "loads", counting)
    again = DiskTable("lazy").table
    assert loads == []  # no shard is read before a lookup needs it
    assert again["kept"] == ("kept", 1) and again["kept"] is again["kept"] and len(loads) == 2  # its shard, its value
    same_shard = [key for key in keys if table.shard_of(key) == table.shard_of("kept") and key != "kept"]
    assert all(again[key] == (key, 1) for key in same_shard) and len(loads) == 2 + len(same_shard)
    assert again.get("broken") is None and "broken" not in again and len(again) == len(keys) - 1
    assert sorted(again) == sorted(set(keys) - {"broken"})
    again["broken"] = "computed again"
    assert again == {**{key: (key, 1) for key in keys}, "broken": "computed again"}


def test_a_save_writes_only_the_shards_it_added_to(tmp_path, monkeypatch):
    monkeypatch.setenv("VERL_MIGRATE_CACHE_DIR", str(tmp_path / "cache"))
    table = DiskTable("sharded")
    table.table.update({f"k{i}": i for i in range(64)})
    table.save()
    written = sorted(p.name for p in (cache.directory() / table._name()).glob("*.pickle"))
    assert len(written) > 8
    stored = []
    store = cache.store_pickle
    monkeypatch.setattr(cache, "store_pickle", lambda name, value: stored.append(name) or store(name, value))
    again = DiskTable("sharded")
    assert again.table["k1"] == 1
    again.table["new"] = "n"
    again.save()
    again.save()  # nothing added since: nothing written
    assert stored == [again.shard_file(again.shard_of("new"))]
    assert DiskTable("sharded").table == {**{f"k{i}": i for i in range(64)}, "new": "n"}


def test_an_unpicklable_value_is_left_out_of_the_save_and_the_rest_is_kept(tmp_path, monkeypatch):
    monkeypatch.setenv("VERL_MIGRATE_CACHE_DIR", str(tmp_path / "cache"))
    table = DiskTable("mixed")
    table.table.update({"plain": 1, "lambda": lambda: 2})
    table.save()
    assert DiskTable("mixed").table == {"plain": 1}
