"""The one cache directory, and the only code that reads or writes it.

Every cache of the package lives here: the composed tables (`tablecache`), the facts each process reads
(`derived`), Hydra's parses, verdicts and reviews (`verdict.memo`), composed configs and the materialized
config trees (`verdict.compose`, `verdict.store`). The directory is `$VERL_MIGRATE_CACHE_DIR`, else
`$XDG_CACHE_HOME/verl-migrate`, else `~/.cache/verl-migrate`; `VERL_MIGRATE_NO_CACHE=1` turns every cache
off. There is no fallback into a shared temp directory: when the directory cannot be used, the run works
without a cache (a materialized config tree then goes to a private directory of this process).

Cached pickles are code: unpickling one runs whatever it says. So nothing is read unless the file and every
directory from it up to the cache root are owned by the current user and writable by no one else, checked
on the open descriptors themselves (no path is looked up twice, so nothing can be swapped in between). A
root that fails the check is not used at all, and `root_problem()` says why, once per run (the CLI prints
it). A missing, corrupt or foreign entry only costs the time to compute it again: it never breaks a run.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
import sys
import time
from pathlib import Path

from migrator import __version__

KEEP_ENTRIES = 16
FACTS_PREFIX = "facts-"
_DIR_MODE = 0o700
_FILE_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
_CAN_CHECK = hasattr(os, "getuid") and os.open in getattr(os, "supports_dir_fd", set())


def configured_root() -> Path | None:
    """Where the cache lives by the environment, or None when `VERL_MIGRATE_NO_CACHE` turns it off."""
    if os.environ.get("VERL_MIGRATE_NO_CACHE", "") not in ("", "0"):
        return None
    explicit = os.environ.get("VERL_MIGRATE_CACHE_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return Path(xdg) / "verl-migrate" if xdg else Path.home() / ".cache" / "verl-migrate"


_checked: dict[tuple, tuple[Path | None, str | None]] = {}


def _settle_root() -> tuple[Path | None, str | None]:
    """(the usable root, None) or (None, why not); once per process and environment."""
    root = configured_root()
    key = (root, os.getuid() if hasattr(os, "getuid") else None)
    if key not in _checked:
        _checked[key] = (None, None) if root is None else _usable(root)
    return _checked[key]


def _usable(root: Path) -> tuple[Path | None, str | None]:
    try:
        root.mkdir(mode=_DIR_MODE, parents=True, exist_ok=True)
        fd = os.open(root, _DIR_FLAGS)
    except OSError as exc:
        return None, f"cannot use the cache directory {root}: {exc.strerror or exc}"
    try:
        problem = _foreign(os.fstat(fd), directory=True)
    finally:
        os.close(fd)
    if problem:
        return None, f"cache directory {root} is {problem}: not used (cached entries are code)"
    return root, None


def _foreign(st: os.stat_result, directory: bool) -> str | None:
    """Why a file or directory is not ours alone, or None."""
    if not _CAN_CHECK:
        return None
    if directory != stat.S_ISDIR(st.st_mode) or not (directory or stat.S_ISREG(st.st_mode)):
        return "not a directory" if directory else "not a regular file"
    if st.st_uid != os.getuid():
        return f"owned by uid {st.st_uid}"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"writable by others (mode {stat.S_IMODE(st.st_mode):o}; chmod go-w fixes it)"
    return None


def root() -> Path | None:
    """The cache directory, when it may be used: None when off, unwritable or not ours alone."""
    return _settle_root()[0]


def root_problem() -> str | None:
    """Why the configured cache directory is not used (printed once by the CLI), or None."""
    return _settle_root()[1]


def read(relpath: str) -> bytes | None:
    """The bytes of `<root>/<relpath>` when it and every directory up to the root are ours alone, else
    None (absent, foreign, unreadable, or the cache is off)."""
    base = root()
    if base is None:
        return None
    parts = relpath.split("/")
    try:
        fd = os.open(base, _DIR_FLAGS)
    except OSError:
        return None
    try:
        if _foreign(os.fstat(fd), directory=True):
            return None
        for part in parts[:-1]:
            sub = os.open(part, _DIR_FLAGS | getattr(os, "O_NOFOLLOW", 0), dir_fd=fd)
            os.close(fd)
            fd = sub
            if _foreign(os.fstat(fd), directory=True):
                return None
        file_fd = os.open(parts[-1], _FILE_FLAGS, dir_fd=fd)
        try:
            st = os.fstat(file_fd)
            if _foreign(st, directory=False):
                return None
            chunks = []
            while chunk := os.read(file_fd, max(st.st_size + 1, 1 << 16)):
                chunks.append(chunk)
            return b"".join(chunks)
        finally:
            os.close(file_fd)
    except OSError:
        return None
    finally:
        os.close(fd)


def load_pickle(relpath: str):
    """The unpickled entry at `relpath`, or None (see `read`; a corrupt pickle is a miss too)."""
    import pickle

    data = read(relpath)
    if data is None:
        return None
    try:
        return pickle.loads(data)
    except Exception:  # noqa: BLE001 - truncated, or from another Python: compute again
        return None


def directory(relpath: str = "") -> Path | None:
    """`<root>/<relpath>` as a directory of ours (made 0700 when missing), or None when it cannot be."""
    base = root()
    if base is None:
        return None
    path = base
    for part in filter(None, relpath.split("/")):
        path = path / part
        try:
            path.mkdir(mode=_DIR_MODE, exist_ok=True)
            if _foreign(os.lstat(path), directory=True):
                return None
        except OSError:
            return None
    return path


def write(relpath: str, data: bytes) -> Path | None:
    """Write `<root>/<relpath>` atomically (a temp file, then a rename); the path, or None when the cache
    is off or the write failed. The temp file never outlives a failure."""
    import tempfile

    head, _, name = relpath.rpartition("/")
    parent = directory(head)
    if parent is None:
        return None
    try:
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=parent)
    except OSError:
        return None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, parent / name)
        return parent / name
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if not isinstance(exc, Exception):
            raise
        return None


@contextlib.contextmanager
def locked(relpath: str):
    """Hold an exclusive lock on `<root>/<relpath>.lock` while the body runs. The worker processes of a
    run each merge what they added into the same file (`verdict.memo.DiskTable.save`), at about the same
    moment, at the end of the run: unlocked, both read the old file and the second write drops the
    first's additions, so a cold cache took four runs to fill. Without a usable lock (no `fcntl`, a
    foreign or unwritable lock file, the cache off) the body runs unlocked: a lost addition is only
    computed again."""
    try:
        import fcntl  # POSIX only
    except ImportError:
        yield
        return
    fd = _lock_fd(relpath)
    try:
        if fd is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)  # released when the descriptor closes
        yield
    finally:
        if fd is not None:
            os.close(fd)


def _lock_fd(relpath: str) -> int | None:
    head, _, name = relpath.rpartition("/")
    parent = directory(head)
    if parent is None:
        return None
    try:
        flags = os.O_RDWR | os.O_CREAT
        for optional in ("O_NOFOLLOW", "O_NONBLOCK", "O_CLOEXEC"):
            flags |= getattr(os, optional, 0)
        fd = os.open(parent / f"{name}.lock", flags, 0o600)
    except OSError:
        return None
    if _foreign(os.fstat(fd), directory=False):  # another user's file could hold us forever
        os.close(fd)
        return None
    return fd


def store_pickle(relpath: str, value) -> Path | None:
    import pickle

    try:
        data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # noqa: BLE001 - an unpicklable value only costs speed
        return None
    return write(relpath, data)


def entries(pattern: str, relpath: str = "") -> list[Path]:
    """The files of the cache directory `relpath` whose names match `pattern`, newest first."""
    parent = directory(relpath)
    if parent is None:
        return []
    found = []
    for path in parent.glob(pattern):
        try:
            found.append((path.lstat().st_mtime, path))
        except OSError:
            continue
    return [path for _, path in sorted(found, key=lambda item: item[0], reverse=True)]


def remove(path: Path) -> None:
    """Remove a cache entry: a file, or a directory of files (a table's shards and their locks)."""
    try:
        if stat.S_ISDIR(os.lstat(path).st_mode):
            for inside in path.iterdir():
                inside.unlink()
            path.rmdir()
        else:
            path.unlink()
    except OSError:
        pass


def touch(relpath: str) -> None:
    base = root()
    if base is not None:
        try:
            os.utime(base / relpath)
        except OSError:
            pass


def load(key: str, prefix: str):
    """The cached value stored under `key`, or None (absent, corrupt, not ours, or the cache is off)."""
    value = load_pickle(f"{prefix}{key}.pickle")
    if not (isinstance(value, tuple) and len(value) == 2 and value[0] == key):
        return None
    return value[1]


def store(key: str, value, prefix: str, keep: int = KEEP_ENTRIES) -> None:
    """Write the entry atomically and keep only the newest `keep` of its kind; failures are ignored."""
    if store_pickle(f"{prefix}{key}.pickle", (key, value)) is None:
        return
    for old in entries(f"{prefix}*.pickle")[keep:]:
        remove(old)


def derived(tag: str, inputs: list[Path], compute):
    """`compute()`, a value read from `inputs` (files), from the cache while their stat signatures are
    unchanged. For the facts each process reads (config keys, module facts, entry points): parsed from
    text they took ~60 ms of every worker of a run, unpickled a tenth of that. `tag` names the value; no
    tag may start with another (`facts-<tag>-*` files are pruned by tag)."""
    key = _stat_key(tag, inputs)
    prefix = f"{FACTS_PREFIX}{tag}-"
    cached = load(key, prefix) if key is not None else None
    if cached is not None:
        touch(f"{prefix}{key}.pickle")
        return cached
    value = compute()
    if key is not None:
        store(key, value, prefix, keep=2)
        _forget_unused_facts()
    return value


# A facts entry read is touched, so its age says when it was last used: an entry no run has used for this
# long goes (its tag may be gone with an older version of this package, which no prune by tag would reach).
UNUSED_FACTS_SECONDS = 30 * 24 * 3600


def _forget_unused_facts() -> None:
    horizon = time.time() - UNUSED_FACTS_SECONDS
    for entry in entries(f"{FACTS_PREFIX}*.pickle"):
        try:
            if entry.lstat().st_mtime < horizon:
                entry.unlink()
        except OSError:
            pass


def _stat_key(tag: str, inputs: list[Path]) -> str | None:
    digest = hashlib.sha256(repr((__version__, sys.version_info[:2], tag)).encode())
    try:
        add_stat_signatures(digest, inputs)
    except OSError:
        return None
    return digest.hexdigest()


def add_stat_signatures(digest, paths) -> None:
    """Feed each file's path and stat signature (size, mtime, ctime, inode) to `digest`: an edit changes
    one of them, and the files need not be read. Raises OSError for a file that cannot be stat'ed."""
    for path in paths:
        st = os.stat(path)
        digest.update(f"{path}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_ctime_ns}\0{st.st_ino}\0".encode())


_scratch: dict[int, Path] = {}


def private_directory() -> Path:
    """A directory of this process alone (mkdtemp: mode 0700, an unguessable name), removed at exit: where
    a materialized config tree goes when the cache is off or not ours."""
    pid = os.getpid()
    if pid not in _scratch:
        import atexit
        import shutil
        import tempfile
        from multiprocessing import util

        path = Path(tempfile.mkdtemp(prefix="verl-migrate-"))
        _scratch[pid] = path

        def cleanup(path=path, pid=pid):
            if os.getpid() == pid:
                shutil.rmtree(path, ignore_errors=True)

        atexit.register(cleanup)
        util.Finalize(None, cleanup, exitpriority=0)  # a pool worker skips atexit
    return _scratch[pid]
