"""How many more processes the system lets this user start: the bound on `-j` besides the work itself.

Two limits make a fork fail with EAGAIN (BlockingIOError): RLIMIT_NPROC, which counts every task (thread)
of the real user and does not bind root, and the pids controller of the process's cgroup (v2), which
counts every task in the cgroup and each of its ancestors. None means no limit was found.
"""

from __future__ import annotations

import os
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")
PROC = Path("/proc")
PLENTY = 1024  # room for this many more is more than any -j needs: the user's own tasks are not counted


def spare_processes() -> int | None:
    """The fewest processes any limit still allows, or None when none is known to bind."""
    rooms = [room for room in (_nproc_room(), _cgroup_room()) if room is not None]
    return max(0, min(rooms)) if rooms else None


def _nproc_room() -> int | None:
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_NPROC)
    except (ImportError, AttributeError, OSError, ValueError):
        return None
    if soft == resource.RLIM_INFINITY or not hasattr(os, "getuid") or os.getuid() == 0:
        return None  # the kernel does not hold root to it
    everyone = _tasks_of_everyone()
    if everyone is not None and soft - everyone >= PLENTY:
        return soft - everyone  # room enough even if every task were ours: no need to count ours
    used = _tasks_of_user(os.getuid())
    return None if used is None else soft - used


def _tasks_of_everyone() -> int | None:
    """Every task (thread) of the system, from /proc/loadavg's `running/total`: a bound on the user's."""
    try:
        return int((PROC / "loadavg").read_text().split()[3].split("/")[1])
    except (OSError, IndexError, ValueError):
        return None


def _tasks_of_user(uid: int) -> int | None:
    """Threads of every process whose real user is `uid` (what RLIMIT_NPROC counts), from /proc."""
    try:
        entries = [entry for entry in os.scandir(PROC) if entry.name.isdigit()]
    except OSError:
        return None
    total = 0
    for entry in entries:
        try:
            status = Path(entry.path, "status").read_text()
        except OSError:
            continue  # gone meanwhile
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        try:
            if int(fields["Uid"].split()[0]) == uid:
                total += int(fields.get("Threads", "1"))
        except (KeyError, ValueError, IndexError):
            continue
    return total


def _cgroup_room() -> int | None:
    """pids.max - pids.current of this process's pids cgroup (v2, or v1's pids hierarchy) and each of its
    ancestors, the smallest; None without a limit."""
    try:
        lines = (PROC / "self" / "cgroup").read_text().splitlines()
    except OSError:
        return None
    rooms = []
    for line in lines:
        number, _, rest = line.partition(":")
        controllers, _, relative = rest.partition(":")
        if number == "0" and controllers == "":
            top = CGROUP_ROOT
        elif "pids" in controllers.split(","):
            top = CGROUP_ROOT / "pids"
        else:
            continue
        rooms += _rooms_up_to(top, top / relative.lstrip("/"))
    return min(rooms) if rooms else None


def _rooms_up_to(top: Path, directory: Path) -> list[int]:
    rooms = []
    while True:
        try:
            limit = (directory / "pids.max").read_text().strip()
            if limit != "max":
                rooms.append(int(limit) - int((directory / "pids.current").read_text()))
        except (OSError, ValueError):
            pass
        if directory == top or top not in directory.parents:
            return rooms
        directory = directory.parent
