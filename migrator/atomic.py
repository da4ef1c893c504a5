"""Replace a file in one rename: a temp file beside it, fsynced, given the mode, then `os.replace`.

A reader (or a run killed at any moment) sees the old bytes or the new ones, never a torn file.
Temp files are named `.verl-migrate-<name>.<random>.tmp`, the pattern a later run's cleanup removes.
"""

from __future__ import annotations

import os
import tempfile

TEMP_PREFIX = ".verl-migrate-"


def replace_atomically(path: str, content: bytes, mode: int, owner: tuple[int, int] | None = None,
                       sync_directory: bool = True) -> None:
    """`sync_directory=False`: the caller fsyncs the directory later (`sync_directories`), once for
    all the files it replaced there."""
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=TEMP_PREFIX + os.path.basename(path)[:50] + ".", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(content)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        if owner is not None:
            try:
                os.chown(tmp, *owner)
            except OSError:
                pass  # not permitted for non-root users: the file then belongs to whoever ran us
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    if sync_directory:
        sync_directories([directory])


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
