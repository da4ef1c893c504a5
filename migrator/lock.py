"""One writing run per tree: a lock file in the tree's root, and removal of a dead run's temp files.

The lock is `.verl-migrate.lock` in each root (the git toplevel of a PATH inside a work tree, else
the directory given, or a file's directory). It holds JSON (pid, host, start time), appears
atomically with its content (hard link of a finished temp file, O_EXCL where links fail) and is
removed on exit, errors included. A lock left by a dead process on this host is taken over with a
note; a live one (or one from another host) stops the run with `LockHeld`. Dry runs take no lock.

Once a run holds its roots, any `.verl-migrate-*.tmp` file under them that predates the lock is
debris of a killed run (`engine.write_atomic` names its temp files so) and is removed.
"""

from __future__ import annotations

import errno
import json
import os
import re
import socket
import stat
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone

from migrator.discover import git_toplevel

LOCK_NAME = ".verl-migrate.lock"
# Exactly what atomic.replace_atomically creates: mkstemp(prefix=".verl-migrate-<name[:50]>.", suffix=".tmp").
TEMP_FILE_RE = re.compile(r"\.verl-migrate-.{0,50}\.[A-Za-z0-9_]{8}\.tmp\Z", re.DOTALL)
# What _create below writes before linking it to the lock name.
LOCK_PART_RE = re.compile(r"\.verl-migrate-lock\.[0-9]+\.[0-9]+\.part\Z")
PRUNED = frozenset({".git", ".hg", ".svn", "node_modules"})
# Errors creating the lock that mean "this tree cannot be written now": run without a lock there.
UNWRITABLE = frozenset({errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOSPC, errno.EDQUOT, errno.EIO})


class LockHeld(Exception):
    """Another live run works on the same tree; str() is the message a person reads."""


@dataclass(frozen=True)
class LockInfo:
    pid: int
    host: str
    started: str  # ISO 8601, UTC
    started_epoch: float

    @classmethod
    def mine(cls) -> "LockInfo":
        now = time.time()
        stamp = datetime.fromtimestamp(now, timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
        return cls(os.getpid(), socket.gethostname(), stamp, now)

    def dumps(self) -> bytes:
        return json.dumps({"pid": self.pid, "host": self.host, "started": self.started,
                           "started_epoch": self.started_epoch}).encode() + b"\n"

    @classmethod
    def loads(cls, data: bytes) -> "LockInfo | None":
        try:
            raw = json.loads(data)
            return cls(int(raw["pid"]), str(raw["host"]), str(raw["started"]), float(raw["started_epoch"]))
        except (ValueError, KeyError, TypeError):
            return None


def lock_roots(paths: list[str]) -> list[str]:
    """The directories to lock for `paths`: git toplevels inside work trees, else the directory given
    (a file's own directory). Sorted, without duplicates or roots nested in another one."""
    roots = set()
    for given in paths:
        directory = given if os.path.isdir(given) else os.path.dirname(os.path.abspath(given))
        if not os.path.isdir(directory):
            continue
        roots.add(os.path.realpath(git_toplevel(directory) or directory))
    ordered = sorted(roots)
    return [r for r in ordered if not any(r != o and r.startswith(o.rstrip(os.sep) + os.sep) for o in ordered)]


def pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by someone else
    return _not_a_zombie(pid)


def _not_a_zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            state = fh.read().rsplit(b")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state != b"Z"


def _create(path: str, content: bytes) -> bool:
    """Create `path` holding `content`, atomically and only if absent. False when it exists."""
    directory = os.path.dirname(path)
    tmp = os.path.join(directory, f".verl-migrate-lock.{os.getpid()}.{time.monotonic_ns()}.part")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except OSError:
        fd = None
    if fd is not None:
        try:
            os.write(fd, content)
            os.fsync(fd)
            os.close(fd)
            try:
                os.link(tmp, path)  # atomic, fails if present: the lock never exists half-written
                return True
            except FileExistsError:
                return False
            except OSError as exc:
                if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EXDEV, errno.EMLINK):
                    raise
        finally:
            try:
                os.unlink(tmp)
            except OSError:
                pass
    try:  # no hard links here (some network and FUSE file systems): O_EXCL, then write
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        return False
    try:
        os.write(fd, content)
    finally:
        os.close(fd)
    return True


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as fh:
            return fh.read(4096)
    except FileNotFoundError:
        return None


def _acquire(root: str, me: LockInfo, note: Callable[[str], None]) -> str | None:
    """Take the lock of `root`; returns its path, or None when the root is not writable."""
    path = os.path.join(root, LOCK_NAME)
    for _ in range(3):
        try:
            if _create(path, me.dumps()):
                return path
        except OSError as exc:
            if exc.errno in UNWRITABLE:  # the writes will fail the same way, each one reported
                note(f"note: cannot create {path} ({exc.strerror}); running without a lock there")
                return None
            raise
        try:
            data = _read(path)
        except OSError as exc:
            raise LockHeld(f"{path} exists and cannot be read ({exc.strerror}): another verl-migrate run "
                           f"may be working on {root}; if none is, delete it") from None
        if data is None:
            continue  # released meanwhile
        other = LockInfo.loads(data)
        if other is None:
            try:
                age = time.time() - os.lstat(path).st_mtime
            except FileNotFoundError:
                continue
            if age < 10:  # an O_EXCL lock being written right now
                raise LockHeld(f"another verl-migrate run is starting on {root} (lock file {path})")
            note(f"note: removing unreadable stale lock {path}")
        elif other.host != me.host:
            raise LockHeld(f"another verl-migrate run (pid {other.pid} on host {other.host}) is working on "
                           f"{root} since {other.started}; if it is gone, delete {path}")
        elif pid_alive(other.pid) and other.pid != me.pid:
            raise LockHeld(f"another verl-migrate run (pid {other.pid}) is working on {root} since {other.started}")
        else:
            note(f"note: taking over the lock of a verl-migrate run that died (pid {other.pid}, "
                 f"since {other.started}) on {root}")
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
    raise LockHeld(f"could not take the lock {path}: other runs keep creating it")


def live_lock(directory: str, me: LockInfo) -> LockInfo | None:
    """The lock in `directory` when it belongs to another live run (or another host)."""
    try:
        data = _read(os.path.join(directory, LOCK_NAME))
    except OSError:  # not a directory, or not ours to read: nothing we can judge
        return None
    other = LockInfo.loads(data) if data else None
    if other is None or other == me:
        return None
    if other.host != me.host or pid_alive(other.pid):
        return other
    return None


def _refuse_if_an_ancestor_is_locked(root: str, me: LockInfo) -> None:
    """A run on /t and one on /t/sub (outside git) lock different roots; the later one sees the
    earlier one's lock above it and stops. (The earlier one skips the other's temp files.)"""
    parent = os.path.dirname(root)
    while parent and parent != root:
        other = live_lock(parent, me)
        if other is not None:
            raise LockHeld(f"another verl-migrate run (pid {other.pid}) is working on {parent} since {other.started}")
        root, parent = parent, os.path.dirname(parent)


def _release(path: str, me: LockInfo) -> None:
    try:
        data = _read(path)
    except OSError:
        return
    if data is not None and LockInfo.loads(data) == me:  # never remove a lock someone took over
        try:
            os.unlink(path)
        except OSError:
            pass


@contextmanager
def run_lock(paths: list[str], note: Callable[[str], None] = lambda message: None) -> Iterator[LockInfo]:
    """Hold the locks of every root of `paths` for the duration; yields this run's `LockInfo`."""
    me = LockInfo.mine()
    held: list[str] = []
    try:
        roots = lock_roots(paths)
        for root in roots:
            path = _acquire(root, me, note)
            if path is not None:
                held.append(path)
        for root in roots:
            _refuse_if_an_ancestor_is_locked(root, me)
        yield me
    finally:
        for path in reversed(held):
            _release(path, me)


def stale_temp_files(paths: list[str], older_than: float, me: LockInfo | None = None) -> Iterator[str]:
    """Temp files of `engine.write_atomic` under `paths` last modified before `older_than`, outside
    directories that another live run has locked."""
    seen: set[str] = set()
    for given in paths:
        if os.path.isdir(given) and not os.path.islink(given):
            walk = os.walk(given, followlinks=False)
        else:
            directory = os.path.dirname(given) or "."
            try:
                walk = iter([(directory, [], os.listdir(directory))])
            except OSError:
                continue
        for dirpath, dirnames, filenames in walk:
            dirnames[:] = [d for d in dirnames if d not in PRUNED
                           and not (me is not None and live_lock(os.path.join(dirpath, d), me))]
            for name in filenames:
                if not (TEMP_FILE_RE.match(name) or LOCK_PART_RE.match(name)):
                    continue
                full = os.path.join(dirpath, name)
                if full in seen:
                    continue
                seen.add(full)
                try:
                    st = os.lstat(full)
                except OSError:
                    continue
                if stat.S_ISREG(st.st_mode) and st.st_mtime < older_than:
                    yield full


def remove_stale_temp_files(paths: list[str], me: LockInfo, note: Callable[[str], None]) -> int:
    """Remove a killed run's temp files (call only while holding the lock); returns how many."""
    removed = 0
    for full in stale_temp_files(paths, me.started_epoch, me):
        try:
            os.unlink(full)
            removed += 1
        except OSError as exc:
            note(f"note: cannot remove stale temp file {full}: {exc.strerror}")
    if removed:
        note(f"note: removed {removed} temp file{'s' if removed != 1 else ''} left by an interrupted run")
    return removed
