"""Every `$ verl-migrate ...` sample in the README is that command's output, run as the README says: from
`examples/` (a copy of it), on the example tree it ships. In a sample, a line `...` stands for any lines
and `[...]` for any text within a line (a blank line: a diff's one-space context line); everything else must
be printed as written (stdout, then stderr). The samples that need a clone of verl (`verl.git`,
`verl-v0.9.0`) run when VERL_MIGRATE_VERL_GIT names one."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess

import pytest

from tests.helpers import REPO, run_cli

README = REPO / "README.md"
EXAMPLES = REPO / "examples"
VERL_GIT = os.environ.get("VERL_MIGRATE_VERL_GIT")
NEEDS_VERL = ("verl.git", "verl-v0.9.0")


def console_samples() -> list[tuple[str, list[str]]]:
    """(command, its documented output lines) for every `$ ` line of the README's console blocks."""
    samples, inside, current = [], False, None
    for line in README.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            inside = line == "```console"
            current = None
            continue
        if not inside:
            continue
        if line.startswith("$ "):
            current = (line[2:], [])
            samples.append(current)
        elif current is not None:
            current[1].append(line)
    return samples


def pattern(lines: list[str]) -> re.Pattern:
    parts = []
    for line in lines:
        if line == "...":
            parts.append(r"(?:[^\n]*\n)*?")
        elif not line:  # a diff's blank context line is one space, which the README does not keep
            parts.append(r" ?\n")
        else:
            parts.append(".*".join(re.escape(piece) for piece in line.split("[...]")) + r"\n")
    return re.compile("".join(parts))


SAMPLES = console_samples()


def test_the_readme_has_its_samples():
    commands = [command for command, _ in SAMPLES]
    assert len(commands) >= 9, commands
    assert all(command.startswith(("verl-migrate ", "bash ")) for command in commands), commands


@pytest.fixture(scope="module")
def examples(tmp_path_factory):
    """A copy of examples/ (a sample may write there), with verl's clone beside it when one is given."""
    folder = tmp_path_factory.mktemp("readme") / "examples"
    shutil.copytree(EXAMPLES, folder)
    if VERL_GIT:
        os.symlink(VERL_GIT, folder / "verl.git")
        subprocess.run(["git", "-c", "advice.detachedHead=false", "clone", "-q", "-b", "v0.9.0", VERL_GIT, str(folder / "verl-v0.9.0")], check=True)
    return folder


@pytest.mark.parametrize("command, documented", SAMPLES, ids=[c for c, _ in SAMPLES])
def test_a_readme_sample_is_the_commands_output(examples, command, documented):
    words = shlex.split(command)[1:]
    if any(name in words or any(w.startswith(name + "/") for w in words) for name in NEEDS_VERL) and not VERL_GIT:
        pytest.skip("needs a clone of verl: set VERL_MIGRATE_VERL_GIT")
    if command.startswith("bash "):  # a shim the sample before installed: what it prints, then verl's script
        proc = subprocess.run(["bash", *words], cwd=examples, capture_output=True, text=True)
        printed = proc.stderr
    else:
        proc = run_cli(*words, cwd=examples, env={"NO_COLOR": "1"})
        assert proc.returncode in (0, 1), proc.stderr
        printed = proc.stdout + proc.stderr
    assert pattern(documented).fullmatch(printed), f"{command}\n--- printed:\n{printed}"


def test_the_readme_check_sample_exits_as_it_says(examples):
    said = re.search(r"`verl-migrate (--check[^`]*)` exits `(\d)`", README.read_text("utf-8"))
    assert said is not None
    proc = run_cli(*shlex.split(said.group(1)), cwd=examples)
    assert proc.returncode == int(said.group(2)), proc.stderr
