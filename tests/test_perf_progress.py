"""The progress line: on for a person at a terminal, off with -q, JSON output, or stderr not a TTY."""

from __future__ import annotations

import os
import pty
import subprocess
import sys

import pytest
from perf_helpers import TABLE, make_tree


def _run(tree, *args, tty: bool) -> bytes:
    """The CLI's stderr, with stderr a pseudo-terminal (tty=True) or a pipe."""
    env = {**os.environ, "VERL_MIGRATE_PROGRESS_DELAY": "0", "VERL_MIGRATE_NO_CACHE": "1", "TERM": "xterm"}
    cmd = [sys.executable, "-m", "migrator", "--from", "main", "--to", "main", "--table", str(TABLE), *args, str(tree)]
    if not tty:
        return subprocess.run(cmd, capture_output=True, env=env, timeout=120).stderr
    master, slave = pty.openpty()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=slave, env=env)
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
    proc.communicate(timeout=120)
    os.close(master)
    return b"".join(chunks)


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    return make_tree(tmp_path_factory.mktemp("tree"), files=40)


def test_progress_shown_on_a_terminal(tree):
    err = _run(tree, "--check", tty=True)
    assert b"\r\x1b[K" in err and b"files/s" in err and b"would change" in err
    assert err.rstrip().endswith(b"0 failed")  # the line is erased before the summary


@pytest.mark.parametrize("args", [["--check", "-q"], ["--check", "--output-format", "json"]])
def test_progress_off_when_asked_for_quiet_or_json(tree, args):
    err = _run(tree, *args, tty=True)
    assert b"files/s" not in err


def test_progress_off_when_stderr_is_not_a_terminal(tree):
    err = _run(tree, "--check", tty=False)
    assert b"files/s" not in err and b"\x1b[K" not in err
    assert b"would change" in err
