"""Replace a file in one rename: a temp file beside it, fsynced, given the mode, then `os.replace`.

A reader (or a run killed at any moment) sees the old bytes or the new ones, never a torn file.
Temp files are named `.verl-migrate-<name>.<random>.tmp`, the pattern a later run's cleanup removes.
"""

from __future__ import annotations

import os
import stat
import tempfile

TEMP_PREFIX = ".verl-migrate-"


def replace_atomically(path: str, content: bytes, mode: int, owner: tuple[int, int] | None = None,
                       sync_directory: bool = True, attributes_of: str | None = None) -> None:
    """`mode` may include setuid/setgid/sticky. `owner`: keep it when we may. `attributes_of`: copy
    that file's extended attributes (user.*, ACLs, ...). `sync_directory=False`: the caller fsyncs the
    directory later (`sync_directories`), once for all the files it replaced there."""
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=TEMP_PREFIX + os.path.basename(path)[:50] + ".", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(content)
            fh.flush()
            os.fsync(fh.fileno())
        # chown clears setuid/setgid (and file capabilities), so: chown, then attributes, then chmod.
        if owner is not None:
            try:
                os.chown(tmp, *owner)
            except OSError:
                pass  # not permitted for non-root users: the file then belongs to whoever ran us
            mode = _without_borrowed_ids(mode, os.stat(tmp), owner)
        if attributes_of is not None:
            copy_extended_attributes(attributes_of, tmp)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    if sync_directory:
        sync_directories([directory])


def _without_borrowed_ids(mode: int, st: os.stat_result, owner: tuple[int, int]) -> int:
    """setuid/setgid only where the owner/group was kept (as `cp -p` does): a setuid file must not
    become setuid to whoever ran us."""
    if st.st_uid != owner[0]:
        mode &= ~stat.S_ISUID
    if st.st_gid != owner[1]:
        mode &= ~stat.S_ISGID
    return mode


def copy_extended_attributes(source: str, target: str) -> None:
    """Best effort: each attribute the file system and our privileges allow (ENOTSUP, EPERM are skipped)."""
    if not hasattr(os, "listxattr"):
        return
    try:
        names = os.listxattr(source, follow_symlinks=False)
    except OSError:
        return
    for name in names:
        try:
            os.setxattr(target, name, os.getxattr(source, name, follow_symlinks=False), follow_symlinks=False)
        except OSError:
            pass


def sync_directories(directories) -> None:
    """Make the renames in these directories durable (best effort: not every file system allows it)."""
    for directory in dict.fromkeys(directories):
        try:
            dir_fd = os.open(directory, os.O_RDONLY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)
        except OSError:
            pass
