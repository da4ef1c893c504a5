"""The CLI's stderr as a person at a terminal sees it (a pseudo-terminal) or as a pipe gets it."""

from __future__ import annotations

import os
import pty
import subprocess
import sys

from tests.helpers import HANG_GUARD


def cli_stderr(*args, tty: bool, env: dict | None = None) -> bytes:
    """`python -m migrator ARGS`'s stderr, with stderr a pseudo-terminal (tty=True) or a pipe."""
    full_env = {**os.environ, **(env or {})}
    cmd = [sys.executable, "-m", "migrator", *map(str, args)]
    if not tty:
        return subprocess.run(cmd, capture_output=True, env=full_env, timeout=HANG_GUARD).stderr
    master, slave = pty.openpty()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=slave, env=full_env)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    proc.communicate(timeout=HANG_GUARD)
    os.close(master)
    return b"".join(chunks)
