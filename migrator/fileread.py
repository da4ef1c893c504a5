"""Reading a file's bytes as cheaply as the OS allows: every run reads every text file of the tree."""

from __future__ import annotations

import os

_READ_FLAGS = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)


def read_head_then_rest(path: str, head_size: int, wants_rest) -> bytes:
    """The file's first `head_size` bytes, and all of it when `wants_rest(head)` says so: a file whose name
    gives no kind is read only as far as its `#!` line and a binary check need, from one descriptor."""
    fd = os.open(path, _READ_FLAGS)
    try:
        head = os.read(fd, head_size)
        while len(head) < head_size and (more := os.read(fd, head_size - len(head))):
            head += more  # a short read is not the end of the file
        if len(head) < head_size or not wants_rest(head):  # all of it already, or the rest is not wanted
            return head
        return _read_on(fd, head)
    finally:
        os.close(fd)


def read_bytes(path: str) -> bytes:
    """A file's bytes, with one `read` call for the usual file: a run reads every text file of the tree,
    and `open()`'s buffered file object cost more than the read itself (13 us against 8 us a file)."""
    fd = os.open(path, _READ_FLAGS)
    try:
        size = os.fstat(fd).st_size
        data = os.read(fd, size + 1)
        if len(data) == size:  # asked for one byte more than it has and did not get it: its end
            return data
        # It grew or shrank since the fstat, or the read came back short (Linux gives at most ~2 GiB a
        # call; some network file systems less): read on to the end.
        return _read_on(fd, data)
    finally:
        os.close(fd)


def _read_on(fd: int, start: bytes) -> bytes:
    """`start` and the rest of the file, to its end."""
    parts = [start]
    while chunk := os.read(fd, 1 << 20):
        parts.append(chunk)
    return b"".join(parts)
