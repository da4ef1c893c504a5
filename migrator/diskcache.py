"""The cache directory and its pickled entries, shared by the table cache (`tablecache`) and the facts
each process reads (`derived`). Imports nothing of the package but its version: the facts' readers,
deep in `mapping`, use it too. A missing, corrupt, foreign or unwritable entry only costs the time to
compute it again: it never breaks a run.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import sys
import tempfile
import time
from pathlib import Path

from migrator import __version__

KEEP_ENTRIES = 16
FACTS_PREFIX = "facts-"


def cache_dir() -> Path | None:
    if os.environ.get("VERL_MIGRATE_NO_CACHE", "") not in ("", "0"):
        return None
    explicit = os.environ.get("VERL_MIGRATE_CACHE_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return Path(xdg) / "verl-migrate" if xdg else Path.home() / ".cache" / "verl-migrate"


def load(key: str, prefix: str):
    """The cached value for `key`, or None (absent, corrupt, not ours, or the cache is off)."""
    directory = cache_dir()
    if directory is None:
        return None
    path = directory / f"{prefix}{key}.pickle"
    try:
        with open(path, "rb") as fh:
            if hasattr(os, "getuid") and os.fstat(fh.fileno()).st_uid != os.getuid():
                return None  # never unpickle a file someone else wrote
            value = pickle.load(fh)
    except Exception:  # noqa: BLE001 - any unreadable or corrupt entry is a miss
        return None
    if not (isinstance(value, tuple) and len(value) == 2 and value[0] == key):
        return None
    return value[1]


def store(key: str, value, prefix: str, keep: int = KEEP_ENTRIES) -> None:
    """Write the entry atomically and keep only the newest `keep` of its kind; failures are ignored."""
    directory = cache_dir()
    if directory is None:
        return
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=directory)
        try:
            with os.fdopen(fd, "wb") as fh:
                pickle.dump((key, value), fh, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, directory / f"{prefix}{key}.pickle")
        except BaseException:
            os.unlink(tmp)
            raise
        entries = sorted(directory.glob(f"{prefix}*.pickle"), key=lambda p: p.stat().st_mtime, reverse=True)
        for old in entries[keep:]:
            old.unlink()
    except Exception:  # noqa: BLE001 - an unwritable cache only costs speed
        pass


def derived(tag: str, inputs: list[Path], compute):
    """`compute()`, a value read from `inputs` (files), from the cache while their stat signatures are
    unchanged. For the facts each process reads (config keys, module facts, entry points): parsed from
    text they took ~60 ms of every worker of a run, unpickled a tenth of that. `tag` names the value; no
    tag may start with another (`facts-<tag>-*` files are pruned by tag)."""
    key = _stat_key(tag, inputs)
    prefix = f"{FACTS_PREFIX}{tag}-"
    cached = load(key, prefix) if key is not None else None
    if cached is not None:
        _touch(key, prefix)
        return cached
    value = compute()
    if key is not None:
        store(key, value, prefix, keep=2)
        _forget_unused_facts()
    return value


# A facts entry read is touched, so its age says when it was last used: an entry no run has used for this
# long goes (its tag may be gone with an older version of this package, which no prune by tag would reach).
UNUSED_FACTS_SECONDS = 30 * 24 * 3600


def _touch(key: str, prefix: str) -> None:
    directory = cache_dir()
    if directory is None:
        return
    try:
        os.utime(directory / f"{prefix}{key}.pickle")
    except OSError:
        pass


def _forget_unused_facts() -> None:
    directory = cache_dir()
    if directory is None:
        return
    try:
        horizon = time.time() - UNUSED_FACTS_SECONDS
        for entry in directory.glob(f"{FACTS_PREFIX}*.pickle"):
            if entry.stat().st_mtime < horizon:
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
