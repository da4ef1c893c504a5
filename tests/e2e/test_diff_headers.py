"""`--diff` is a patch that `git apply` and `patch -p1` take, however the paths were spelt: relative,
`./relative` or absolute (headers once read `a/./my_scripts/...` and `a//abs/path/...`)."""

from __future__ import annotations

import subprocess

import pytest

from tests.helpers import run_cli
from tests.helpers.repos import CORE, NEW_SCRIPT, OLD_SCRIPT, committed_repo


def applies(patch: str, cwd) -> None:
    for command in (["git", "apply", "--check", "-"], ["patch", "-p1", "--dry-run", "--batch"]):
        proc = subprocess.run(command, cwd=cwd, input=patch, capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, (command, proc.stdout, proc.stderr, patch)


@pytest.mark.parametrize("spelling", ["relative", "dot", "absolute"])
def test_a_diff_applies_with_git_apply_and_patch_p1(tmp_path, spelling):
    repo = committed_repo(tmp_path / "repo", {"my_scripts/run.sh": OLD_SCRIPT})
    path = {"relative": "my_scripts", "dot": "./my_scripts", "absolute": str(repo / "my_scripts")}[spelling]
    proc = run_cli(*CORE, "--diff", path, cwd=repo)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("--- a/my_scripts/run.sh\n+++ b/my_scripts/run.sh\n")
    applies(proc.stdout, repo)
    subprocess.run(["patch", "-p1", "--batch", "--quiet"], cwd=repo, input=proc.stdout, text=True, check=True)
    assert (repo / "my_scripts" / "run.sh").read_bytes() == NEW_SCRIPT.read_bytes()


def test_a_file_outside_the_current_directory_is_named_from_the_root(tmp_path):
    repo = committed_repo(tmp_path / "repo", {"my_scripts/run.sh": OLD_SCRIPT})
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for path in (repo / "my_scripts", "../repo/my_scripts"):
        proc = run_cli(*CORE, "--diff", path, cwd=elsewhere)
        assert proc.returncode == 0, proc.stderr
        name = str(repo / "my_scripts" / "run.sh").lstrip("/")
        assert proc.stdout.startswith(f"--- a/{name}\n+++ b/{name}\n")  # as `git diff --no-index` names it
        proc = subprocess.run(["patch", "-p1", "--dry-run", "--batch", "-d", "/"], input=proc.stdout,
                              capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize("folder, script", [
    ("my scripts", "run grpo.sh"),  # spaces: git ends the header name with a tab so patch reads it whole
    ("my_scripts", "tab\there.sh"),  # a tab, a quote, a backslash: git C-quotes the name
    ("my_scripts", 'say "hi"\\x.sh'),
    ("mes scripts", "lancé.sh"),  # not ASCII: quoted with octal escapes, as git's core.quotePath does
])
def test_a_diff_of_names_with_spaces_and_special_bytes_applies(tmp_path, folder, script):
    repo = committed_repo(tmp_path / "repo", {f"{folder}/{script}": OLD_SCRIPT})
    proc = run_cli(*CORE, "--diff", folder, cwd=repo)
    assert proc.returncode == 0, proc.stderr
    git_diff = git_names(repo, f"{folder}/{script}")
    assert proc.stdout.splitlines()[:2] == git_diff  # the header lines `git diff` writes for that file
    applies(proc.stdout, repo)
    subprocess.run(["git", "apply", "-"], cwd=repo, input=proc.stdout, text=True, check=True, timeout=60)
    assert (repo / folder / script).read_bytes() == NEW_SCRIPT.read_bytes()


def git_names(repo, name) -> list[str]:
    """The `---`/`+++` lines git itself writes for a change to `name`."""
    target = repo / name
    kept = target.read_bytes()
    target.write_bytes(kept + b"# changed\n")
    try:
        out = subprocess.run(["git", "diff", "--", name], cwd=repo, capture_output=True, text=True, check=True,
                             timeout=60).stdout
    finally:
        target.write_bytes(kept)
    return [line for line in out.splitlines() if line.startswith(("--- ", "+++ "))]
