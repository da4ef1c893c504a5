"""A sample of a command's output in the docs is the command's output: the test runs it (in a subprocess,
from the folder it names) and compares line by line, so a sample cannot go stale."""

from __future__ import annotations

import shlex

from tests.helpers import REPO, run_cli

SAMPLE = "$ cd tests/fixtures/lint && verl-migrate lint --output-format concise --to v0.9.0 --table tables.yaml vm00*.sh"


def documented_output(page: str, command: str) -> list[str]:
    """The lines after `command` in its fenced block of `page`, up to the fence that closes it."""
    lines = (REPO / "docs" / page).read_text(encoding="utf-8").splitlines()
    start = lines.index(command) + 1
    return lines[start:lines.index("```", start)]


def test_the_lint_fixture_sample_in_lint_md_is_the_commands_output():
    folder, _, command = SAMPLE.removeprefix("$ cd ").partition(" && verl-migrate ")
    words = shlex.split(command)
    cwd = REPO / folder
    globbed = [w for w in words if "*" in w]
    assert len(globbed) == 1
    words[words.index(globbed[0])] = ""
    files = sorted(p.name for p in cwd.glob(globbed[0]))  # what bash expands it to (C locale order)
    words = [w for w in words if w] + files
    proc = run_cli(*words, cwd=cwd, env={"NO_COLOR": "1"})
    assert proc.returncode == 1, proc.stderr
    # concise: the findings on stdout, the summary on stderr (the sample shows both, in that order)
    assert documented_output("lint.md", SAMPLE) == proc.stdout.splitlines() + proc.stderr.splitlines()
