"""The progress line: on for a person at a terminal, off with -q, JSON output, or stderr not a TTY."""

from __future__ import annotations

import re

import pytest

from tests.helpers.terminal import cli_stderr
from tests.helpers.trees import TABLE, make_tree


def _run(tree, *args, tty: bool) -> bytes:
    """The CLI's stderr over the tree tests' table, with stderr a pseudo-terminal (tty=True) or a pipe."""
    env = {"VERL_MIGRATE_PROGRESS_DELAY": "0", "VERL_MIGRATE_NO_CACHE": "1", "TERM": "xterm"}
    return cli_stderr("--from", "main", "--to", "main", "--table", TABLE, *args, tree, tty=tty, env=env)


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


def test_a_terminal_sees_total_percent_rate_and_eta(tmp_path):
    # Long enough for an ETA: none is shown before the run has shown its pace (migrator.progress.RateEstimate).
    tree = make_tree(tmp_path / "tree", files=3000)
    err = _run(tree, "--check", "-j", "1", tty=True).decode()
    lines = re.findall(r"\r\x1b\[K(\d+/\d+ files \(\d+%\), \d+ would change, \d+ files/s, ETA \S+)", err)
    assert lines, err[-2000:]
    done, total = map(int, re.match(r"(\d+)/(\d+)", lines[-1]).groups())
    assert total == 3000 and 0 < done <= total
    assert err.rstrip().endswith("0 failed")


def test_lint_shows_the_same_progress_line_on_a_terminal(tree):
    # The suite's shared cache: a cold Hydra composition per run is not what this test is about.
    env = {"VERL_MIGRATE_PROGRESS_DELAY": "0", "TERM": "xterm"}
    err = cli_stderr("lint", "--to", "main", "--table", TABLE, tree, tty=True, env=env)
    assert b"\r\x1b[K" in err and b"files/s" in err and b"with findings" in err
    assert re.search(rb"\r\x1b\[K\d+/40 files \(\d+%\)", err), err[-2000:]
    assert err.rstrip().endswith(b"(verl main)")  # the line is erased before the summary
    for quiet in (["--output-format", "json"], []):
        plain = cli_stderr("lint", "--to", "main", "--table", TABLE, *quiet, tree, tty=bool(quiet), env=env)
        assert b"files/s" not in plain and b"\x1b[K" not in plain
