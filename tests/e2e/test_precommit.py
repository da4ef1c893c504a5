"""The shipped pre-commit hooks on an ordinary `git commit`, through real pre-commit.

The hooks run as `repo: local` hooks with `language: system` built from .pre-commit-hooks.yaml (the same
entry, args and file types; `verl-migrate` becomes `python -m migrator`), so the test needs no network:
`language: python` would pip-install this repository into pre-commit's own environment. The opt-in
`VERL_MIGRATE_NETWORK_TESTS=1` test runs `pre-commit try-repo` on this checkout as shipped (~30 s).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.helpers import FIXTURES, HANG_GUARD, REPO
from tests.helpers.repos import CORE, NEW_SCRIPT, OLD_SCRIPT, committed_repo, git

REPO = REPO
SHIPPED = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
LINT = FIXTURES / "lint"


def local_hook(hook_id: str, args: list[str]) -> dict:
    hook = next(h for h in SHIPPED if h["id"] == hook_id)
    assert hook["entry"].startswith("verl-migrate")
    entry = hook["entry"].replace("verl-migrate", f"{sys.executable} -m migrator", 1)
    return {**hook, "entry": entry, "language": "system", "args": args}


def env_for(repo: Path) -> dict[str, str]:
    return {**os.environ, "PRE_COMMIT_HOME": str(repo.parent / "pre-commit-home"), "PYTHONPATH": str(REPO),
            "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@example.com", "VERL_MIGRATE_NO_CACHE": "1"}


def install_hooks(repo: Path, *hooks: dict) -> None:
    config = {"repos": [{"repo": "local", "hooks": list(hooks)}]}
    (repo / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    git(repo, "add", ".pre-commit-config.yaml")
    git(repo, "commit", "-q", "--no-verify", "-m", "pre-commit config")
    proc = subprocess.run([sys.executable, "-m", "pre_commit", "install"], cwd=repo, env=env_for(repo),
                          capture_output=True, text=True, timeout=HANG_GUARD)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def commit(repo: Path, message: str) -> subprocess.CompletedProcess:
    """`git commit` with its hook output (git sends it to stderr) in stdout."""
    return subprocess.run(["git", "commit", "-m", message], cwd=repo, env=env_for(repo), stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=HANG_GUARD)


def head_files(repo: Path) -> set[str]:
    return set(git(repo, "ls-tree", "-r", "--name-only", "HEAD").split())


def test_the_rewrite_hook_fixes_staged_files_and_the_second_commit_passes(tmp_path):
    repo = committed_repo(tmp_path / "project", {"README.md": b"project\n"})
    install_hooks(repo, local_hook("verl-migrate", CORE))
    (repo / "scripts").mkdir()
    (repo / "scripts" / "run.sh").write_bytes(OLD_SCRIPT.read_bytes())
    (repo / "scripts" / "notes.txt").write_text("not staged, not touched\n")
    git(repo, "add", "scripts/run.sh")

    first = commit(repo, "add run.sh")
    assert first.returncode == 1, first.stdout
    assert "files were modified by this hook" in first.stdout
    assert "refusing" not in first.stdout
    assert (repo / "scripts" / "run.sh").read_bytes() == NEW_SCRIPT.read_bytes()
    assert "scripts/run.sh" not in head_files(repo)
    # `git diff` shows exactly the hook's edits: the index still has what was staged.
    assert git(repo, "show", ":scripts/run.sh").encode() == OLD_SCRIPT.read_bytes()

    git(repo, "add", "scripts/run.sh")
    second = commit(repo, "add run.sh")
    assert second.returncode == 0, second.stdout
    assert "scripts/run.sh" in head_files(repo)
    assert git(repo, "show", "HEAD:scripts/run.sh").encode() == NEW_SCRIPT.read_bytes()


def test_the_rewrite_hook_passes_a_commit_with_nothing_to_migrate(tmp_path):
    repo = committed_repo(tmp_path / "project", {"README.md": b"project\n"})
    install_hooks(repo, local_hook("verl-migrate", CORE))
    (repo / "run.sh").write_bytes(NEW_SCRIPT.read_bytes())
    git(repo, "add", "run.sh")
    proc = commit(repo, "add run.sh")
    assert proc.returncode == 0, proc.stdout
    assert "verl-migrate" in proc.stdout and "Passed" in proc.stdout


def test_the_rewrite_hook_still_refuses_unstaged_files_outside_a_commit(tmp_path):
    """`pre-commit run --files` stashes nothing: a file with unstaged edits is not written."""
    repo = committed_repo(tmp_path / "project", {"run.sh": NEW_SCRIPT})
    install_hooks(repo, local_hook("verl-migrate", CORE))
    (repo / "run.sh").write_bytes(OLD_SCRIPT.read_bytes())  # an unstaged edit
    proc = subprocess.run([sys.executable, "-m", "pre_commit", "run", "verl-migrate", "--files", "run.sh"],
                          cwd=repo, env=env_for(repo), capture_output=True, text=True, timeout=HANG_GUARD)
    assert proc.returncode == 1
    assert "refusing to overwrite files with unstaged or untracked changes" in proc.stdout
    assert (repo / "run.sh").read_bytes() == OLD_SCRIPT.read_bytes()


def test_the_lint_hook_blocks_a_broken_script_and_passes_a_good_one(tmp_path):
    repo = committed_repo(tmp_path / "project", {"README.md": b"project\n"})
    install_hooks(repo, local_hook("verl-migrate-lint", []))
    (repo / "broken.sh").write_bytes((LINT / "vm002_lost_continuation.sh").read_bytes())
    git(repo, "add", "broken.sh")
    blocked = commit(repo, "broken")
    assert blocked.returncode == 1 and "VM002" in blocked.stdout
    git(repo, "rm", "-q", "--cached", "broken.sh")
    (repo / "broken.sh").unlink()
    (repo / "good.sh").write_text("#!/usr/bin/env bash\necho hello\n")
    git(repo, "add", "good.sh")
    passed = commit(repo, "good")
    assert passed.returncode == 0, passed.stdout


@pytest.mark.skipif(os.environ.get("VERL_MIGRATE_NETWORK_TESTS") != "1",
                    reason="pip-installs this checkout from PyPI into pre-commit's environment (~30 s, network)")
def test_try_repo_runs_the_shipped_hook(tmp_path):
    repo = committed_repo(tmp_path / "project", {"README.md": b"project\n"})
    (repo / "x.sh").write_bytes(OLD_SCRIPT.read_bytes())
    git(repo, "add", "x.sh")
    proc = subprocess.run([sys.executable, "-m", "pre_commit", "try-repo", str(REPO), "verl-migrate", "--files",
                           "x.sh"], cwd=repo, env=env_for(repo), capture_output=True, text=True, timeout=HANG_GUARD)
    assert proc.returncode == 1 and "files were modified by this hook" in proc.stdout, proc.stdout + proc.stderr
    assert "refusing" not in proc.stdout


def test_allow_staged_writes_staged_files_and_refuses_unstaged_and_untracked(tmp_path):
    from tests.helpers import run_cli

    repo = committed_repo(tmp_path / "project", {"unstaged.sh": NEW_SCRIPT})
    for name in ("staged.sh", "unstaged.sh", "untracked.sh"):
        (repo / name).write_bytes(OLD_SCRIPT.read_bytes())
    git(repo, "add", "staged.sh")
    refused = run_cli(*CORE, "--allow-staged", repo, cwd=repo)
    assert refused.returncode == 2
    listed = {line.strip() for line in refused.stderr.splitlines() if line.startswith("  ")}
    assert {os.path.basename(p) for p in listed} == {"unstaged.sh (modified)", "untracked.sh (untracked)"}
    assert all((repo / n).read_bytes() == OLD_SCRIPT.read_bytes() for n in ("staged.sh", "unstaged.sh", "untracked.sh"))
    staged_only = run_cli(*CORE, "--allow-staged", repo / "staged.sh", cwd=repo)
    assert staged_only.returncode == 0, staged_only.stderr
    assert (repo / "staged.sh").read_bytes() == NEW_SCRIPT.read_bytes()
