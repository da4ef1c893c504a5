"""Code run as another user: the suite runs as root (and root ignores file modes and process limits), so a
forked child drops to `nobody` after the caller has imported everything it needs (the interpreter's own
files under /root are out of nobody's reach)."""

from __future__ import annotations

import json
import os

NOBODY = 65534


def as_nobody(work, home: str | None = None) -> dict:
    """`work()` (a JSON-able dict) in a forked child running as nobody; what it raised comes back as
    {"exception": "Type: message"}."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        try:
            os.close(read_fd)
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            if home is not None:
                os.environ["HOME"] = home
            try:
                out = work()
            except BaseException as exc:  # noqa: BLE001 - reported to the parent as a failure
                out = {"exception": f"{type(exc).__name__}: {exc}"}
            os.write(write_fd, json.dumps(out).encode())
        finally:
            os._exit(0)
    os.close(write_fd)
    chunks = []
    while chunk := os.read(read_fd, 65536):
        chunks.append(chunk)
    os.close(read_fd)
    os.waitpid(pid, 0)
    return json.loads(b"".join(chunks) or b"{}")
