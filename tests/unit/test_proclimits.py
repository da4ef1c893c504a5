"""The room the system's process limits leave: RLIMIT_NPROC over the user's tasks, the pids cgroup (v2 and
v1's hierarchy) over its own and its ancestors' counts."""

from __future__ import annotations

from migrator import proclimits


def _proc(root, cgroup_line: str, tasks: dict[int, tuple[int, int]]):
    (root / "self").mkdir(parents=True)
    (root / "self" / "cgroup").write_text(cgroup_line)
    for pid, (uid, threads) in tasks.items():
        (root / str(pid)).mkdir()
        (root / str(pid) / "status").write_text(f"Name:\tx\nUid:\t{uid}\t{uid}\t{uid}\t{uid}\nThreads:\t{threads}\n")


def test_the_smallest_pids_limit_of_the_cgroup_and_its_ancestors(tmp_path, monkeypatch):
    proc, cgroups = tmp_path / "proc", tmp_path / "cgroup"
    _proc(proc, "0::/user.slice/job\n", {})
    for relative, limit, current in (("", "max", 900), ("user.slice", "100", 60), ("user.slice/job", "50", 5)):
        (cgroups / relative).mkdir(parents=True, exist_ok=True)
        (cgroups / relative / "pids.max").write_text(f"{limit}\n")
        (cgroups / relative / "pids.current").write_text(f"{current}\n")
    monkeypatch.setattr(proclimits, "PROC", proc)
    monkeypatch.setattr(proclimits, "CGROUP_ROOT", cgroups)
    assert proclimits._cgroup_room() == 40  # the parent's 100 - 60, not the job's 50 - 5


def test_cgroup_v1_pids_hierarchy(tmp_path, monkeypatch):
    proc, cgroups = tmp_path / "proc", tmp_path / "cgroup"
    _proc(proc, "4:memory:/x\n8:pids:/docker/abc\n0::/\n", {})
    (cgroups / "pids" / "docker" / "abc").mkdir(parents=True)
    (cgroups / "pids" / "docker" / "abc" / "pids.max").write_text("32\n")
    (cgroups / "pids" / "docker" / "abc" / "pids.current").write_text("30\n")
    monkeypatch.setattr(proclimits, "PROC", proc)
    monkeypatch.setattr(proclimits, "CGROUP_ROOT", cgroups)
    assert proclimits._cgroup_room() == 2


def test_rlimit_nproc_counts_the_users_threads_and_does_not_bind_root(tmp_path, monkeypatch):
    import resource

    proc = tmp_path / "proc"
    _proc(proc, "0::/\n", {10: (1000, 3), 11: (1000, 1), 12: (0, 50)})
    (proc / "loadavg").write_text("0.50 0.40 0.30 2/54 999\n")
    monkeypatch.setattr(proclimits, "PROC", proc)
    monkeypatch.setattr(resource, "getrlimit", lambda which: (10, 10))
    monkeypatch.setattr(proclimits.os, "getuid", lambda: 1000)
    assert proclimits._nproc_room() == 6
    monkeypatch.setattr(proclimits.os, "getuid", lambda: 0)
    assert proclimits._nproc_room() is None
    # A limit far above every task of the system needs no count of the user's own.
    monkeypatch.setattr(proclimits.os, "getuid", lambda: 1000)
    monkeypatch.setattr(resource, "getrlimit", lambda which: (54 + proclimits.PLENTY, 54 + proclimits.PLENTY))
    monkeypatch.setattr(proclimits, "_tasks_of_user", lambda uid: 1 / 0)
    assert proclimits._nproc_room() == proclimits.PLENTY


def test_no_limit_found_is_none(tmp_path, monkeypatch):
    monkeypatch.setattr(proclimits, "PROC", tmp_path / "nothing")
    monkeypatch.setattr(proclimits, "CGROUP_ROOT", tmp_path / "nothing")
    monkeypatch.setattr(proclimits.os, "getuid", lambda: 0)
    assert proclimits.spare_processes() is None
