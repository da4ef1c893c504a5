"""One writing run per tree: a lock file in the tree's root, and removal of a dead run's temp files.

The lock is `.verl-migrate.lock` in each root (the git toplevel of a PATH inside a work tree, else
the directory given, or a file's directory). It holds JSON (pid, host, start time), appears
atomically with its content (hard link of a finished temp file, O_EXCL where links fail) and is
removed on exit, errors included. Dry runs take no lock.

A lock is only a regular file owned by the current user whose fields are valid, and it is read without
ever blocking or following a symlink (a FIFO of that name stops nothing). It stops the run
(`LockHeld`) when it names a live process of the current user on this host that started before the
lock did (a pid the system gave to another process since is stale), or another host (which we cannot
judge). Anything else in the root is taken over with a note; in a directory above the root it is
ignored, so a file planted in a shared parent directory stops no one.

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

from migrator.discover import FILE_TYPES, git_toplevel

LOCK_NAME = ".verl-migrate.lock"
# Exactly what atomic.replace_atomically creates: mkstemp(prefix=".verl-migrate-<name[:50]>.", suffix=".tmp").
TEMP_FILE_RE = re.compile(r"\.verl-migrate-.{0,50}\.[A-Za-z0-9_]{8}\.tmp\Z", re.DOTALL)
# What _create below writes before linking it to the lock name.
LOCK_PART_RE = re.compile(r"\.verl-migrate-lock\.[0-9]+\.[0-9]+\.part\Z")
PRUNED = frozenset({".git", ".hg", ".svn", "node_modules"})
# Errors creating the lock that mean "this tree cannot be written now": run without a lock there.
UNWRITABLE = frozenset({errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOSPC, errno.EDQUOT, errno.EIO})
LOCK_BYTES = 4096  # a lock we wrote is ~100 bytes; more is not ours
MAX_PID = 2 ** 31 - 1  # pid_t; Linux's pid_max is at most 2**22
MAX_FIELD = 255  # characters of host and start time
# A process that started this much after a lock's start time cannot have written it: its pid was reused.
# (/proc gives the start in clock ticks after a boot time in whole seconds.)
START_SLACK = 5.0


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
        """The lock's fields, or None unless each is what `dumps` writes (a pid in range, finite times)."""
        try:
            raw = json.loads(data)
        except (ValueError, RecursionError):
            return None
        if not isinstance(raw, dict):
            return None
        pid, host, started, epoch = (raw.get(k) for k in ("pid", "host", "started", "started_epoch"))
        if type(pid) is not int or not 0 < pid <= MAX_PID:
            return None
        if not (isinstance(host, str) and isinstance(started, str)) or max(len(host), len(started)) > MAX_FIELD:
            return None
        if type(epoch) not in (int, float) or not 0 <= epoch < 2 ** 40:  # NaN and infinities fail too
            return None
        return cls(pid, host, started, float(epoch))


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
    if not 0 < pid <= MAX_PID:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by someone else
    except OverflowError:
        return False
    return _not_a_zombie(pid)


def _not_a_zombie(pid: int) -> bool:
    fields = _proc_stat(pid)
    return fields is None or fields[0] != b"Z"


def _proc_stat(pid: int) -> list[bytes] | None:
    """The fields of /proc/PID/stat after the command name (state first), or None without /proc."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None


def _boot_time() -> float | None:
    try:
        with open("/proc/stat", "rb") as fh:
            for line in fh:
                if line.startswith(b"btime "):
                    return float(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return None


def process_start(pid: int) -> float | None:
    """When process `pid` started (seconds since the epoch), where /proc tells; else None."""
    fields, boot = _proc_stat(pid), _boot_time()
    if fields is None or boot is None:
        return None
    try:
        return boot + int(fields[19]) / os.sysconf("SC_CLK_TCK")  # field 22 of the line, starttime
    except (IndexError, ValueError, OSError):
        return None


def _process_owner(pid: int) -> int | None:
    try:
        return os.stat(f"/proc/{pid}").st_uid
    except OSError:
        return None


def holds(info: "LockInfo") -> bool:
    """Whether the run a lock of this host names can still be running: its pid is a live process of the
    current user that started before the lock was written (not a later process that got the pid)."""
    if not pid_alive(info.pid):
        return False
    owner = _process_owner(info.pid)
    if owner is not None and owner != os.geteuid():
        return False
    if owner is None:  # no /proc: kill(pid, 0) is refused for another user's process
        try:
            os.kill(info.pid, 0)
        except OSError:
            return False
    started = process_start(info.pid)
    return started is None or started <= info.started_epoch + START_SLACK


def _kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "symlink"
    if stat.S_ISDIR(mode):
        return "directory"
    return next((name for is_type, name in FILE_TYPES if is_type(mode)), "special file")


@dataclass(frozen=True)
class Found:
    """What sits at a lock's path: a regular file's owner, age and first bytes, or the kind of
    anything else (`kind` is "" for a regular file)."""

    kind: str
    uid: int = -1
    mtime: float = 0.0
    data: bytes = b""


def _inspect(path: str) -> Found | None:
    """What is at `path`, None when nothing is. Never blocks (O_NONBLOCK: a FIFO), never follows a
    symlink (O_NOFOLLOW), never opens anything but a regular file. OSError when it cannot be read."""
    try:
        st = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    if not stat.S_ISREG(st.st_mode):
        return Found(_kind(st.st_mode))
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NOCTTY)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # swapped for a symlink since the lstat
            return Found("symlink")
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return Found(_kind(st.st_mode))
        return Found("", st.st_uid, st.st_mtime, os.read(fd, LOCK_BYTES + 1))
    finally:
        os.close(fd)


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


def _lock_at(path: str) -> LockInfo | None:
    """The lock at `path` when it is one (a regular file of the current user with valid fields);
    None for anything else. OSError when it cannot be read."""
    found = _inspect(path)
    if found is None or found.kind or found.uid != os.geteuid() or len(found.data) > LOCK_BYTES:
        return None
    return LockInfo.loads(found.data)


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
            found = _inspect(path)
        except OSError as exc:
            raise LockHeld(f"{path} exists and cannot be read ({exc.strerror}): another verl-migrate run "
                           f"may be working on {root}; if none is, delete it") from None
        if found is None:
            continue  # released meanwhile
        if found.kind:  # the name is taken by something we must not remove or open
            raise LockHeld(f"{path} is a {found.kind}, not a lock file; remove it to run verl-migrate on {root}")
        other = LockInfo.loads(found.data) if len(found.data) <= LOCK_BYTES else None
        if found.uid != os.geteuid():
            note(f"note: ignoring {path}: owned by uid {found.uid}, not a lock of yours")
        elif other is None:
            if time.time() - found.mtime < 10:  # an O_EXCL lock being written right now
                raise LockHeld(f"another verl-migrate run is starting on {root} (lock file {path})")
            note(f"note: removing unreadable stale lock {path}")
        elif other.host != me.host:
            raise LockHeld(f"another verl-migrate run (pid {other.pid} on host {other.host}) is working on "
                           f"{root} since {other.started}; if it is gone, delete {path}")
        elif other.pid != me.pid and holds(other):
            raise LockHeld(f"another verl-migrate run (pid {other.pid}) is working on {root} since {other.started}")
        else:
            note(f"note: taking over the lock of a verl-migrate run that died (pid {other.pid}, "
                 f"since {other.started}) on {root}")
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
        except OSError as exc:
            if exc.errno in UNWRITABLE:  # another user's file in a sticky directory, a read-only tree
                note(f"note: cannot remove {path} ({exc.strerror}); running without a lock there")
                return None
            raise
    raise LockHeld(f"could not take the lock {path}: other runs keep creating it")


def live_lock(directory: str, me: LockInfo) -> LockInfo | None:
    """The lock in `directory` when it is one (`_lock_at`) of another run of ours that may be live:
    on this host, `holds`; on another host, we cannot tell."""
    try:
        other = _lock_at(os.path.join(directory, LOCK_NAME))
    except OSError:  # not a directory, or not ours to read: nothing we can judge
        return None
    if other is None or other == me:
        return None
    if other.host != me.host or holds(other):
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
        mine = _lock_at(path)
    except OSError:
        return
    if mine == me:  # never remove a lock someone took over
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
