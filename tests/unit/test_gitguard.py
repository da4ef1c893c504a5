"""The git guard in real repositories made in tmp_path: dirty files are refused and listed."""

from __future__ import annotations

import git
import pytest

from tests.helpers import CORE_TABLE, run_cli

CORE = ["--from", "main", "--to", "main", "--table", str(CORE_TABLE)]
OLD = b"python3 -m verl.trainer.main_ppo actor_rollout_ref.rollout.update_weights_bucket_megabytes=1\n"


@pytest.fixture
def repo(tmp_path):
    repo = git.Repo.init(tmp_path / "repo")
    with repo.config_writer() as cfg:
        cfg.set_value("user", "name", "t")
        cfg.set_value("user", "email", "t@example.com")
    root = tmp_path / "repo"
    (root / "clean.sh").write_bytes(OLD)
    (root / "dirty.sh").write_bytes(b"# v1\n" + OLD)
    (root / "other.sh").write_bytes(b"echo unrelated\n")
    repo.index.add(["clean.sh", "dirty.sh", "other.sh"])
    repo.index.commit("scripts")
    return repo


def test_clean_tree_is_written(repo):
    root = repo.working_tree_dir
    proc = run_cli(*CORE, root)
    assert proc.returncode == 0, proc.stderr
    assert b"checkpoint_engine" in open(f"{root}/clean.sh", "rb").read()


def test_dirty_file_is_refused_and_listed(repo):
    root = repo.working_tree_dir
    with open(f"{root}/dirty.sh", "ab") as fh:
        fh.write(b"# local edit\n")
    proc = run_cli(*CORE, root)
    assert proc.returncode == 2
    assert "uncommitted changes" in proc.stderr and "dirty.sh" in proc.stderr and "clean.sh" not in proc.stderr
    assert b"checkpoint_engine" not in open(f"{root}/clean.sh", "rb").read()  # nothing written at all


def test_dirty_file_that_needs_no_edit_does_not_block(repo):
    root = repo.working_tree_dir
    with open(f"{root}/other.sh", "ab") as fh:
        fh.write(b"# local edit\n")
    assert run_cli(*CORE, root).returncode == 0


def test_allow_dirty(repo):
    root = repo.working_tree_dir
    with open(f"{root}/dirty.sh", "ab") as fh:
        fh.write(b"# local edit\n")
    proc = run_cli(*CORE, "--allow-dirty", root)
    assert proc.returncode == 0
    assert open(f"{root}/dirty.sh", "rb").read().endswith(b"# local edit\n")
    assert b"checkpoint_engine" in open(f"{root}/dirty.sh", "rb").read()


def test_staged_only_changes_are_dirty(repo):
    root = repo.working_tree_dir
    with open(f"{root}/dirty.sh", "ab") as fh:
        fh.write(b"# staged edit\n")
    repo.index.add(["dirty.sh"])
    proc = run_cli(*CORE, root)
    assert proc.returncode == 2 and "dirty.sh" in proc.stderr


def test_untracked_file_is_dirty(repo):
    root = repo.working_tree_dir
    with open(f"{root}/new.sh", "wb") as fh:
        fh.write(OLD)
    proc = run_cli(*CORE, root)
    assert proc.returncode == 2 and "new.sh" in proc.stderr


def test_check_and_diff_ignore_the_guard(repo):
    root = repo.working_tree_dir
    with open(f"{root}/dirty.sh", "ab") as fh:
        fh.write(b"# local edit\n")
    assert run_cli(*CORE, "--check", root).returncode == 1
    assert run_cli(*CORE, "--diff", root).returncode == 0


def test_gitignored_files_are_not_visited(repo):
    root = repo.working_tree_dir
    with open(f"{root}/.gitignore", "w") as fh:
        fh.write("build/\n")
    import os

    os.mkdir(f"{root}/build")
    with open(f"{root}/build/gen.sh", "wb") as fh:
        fh.write(OLD)
    repo.index.add([".gitignore"])
    repo.index.commit("ignore")
    proc = run_cli(*CORE, "--check", "-v", root)
    assert "build/gen.sh" not in proc.stderr and "build/gen.sh" not in proc.stdout
    assert "2 files would change" in proc.stderr  # clean.sh and dirty.sh only


def test_detached_head(repo):
    repo.git.checkout(repo.head.commit.hexsha)
    assert run_cli(*CORE, repo.working_tree_dir).returncode == 0


def test_outside_git_just_runs(tmp_path):
    (tmp_path / "a.sh").write_bytes(OLD)
    assert run_cli(*CORE, tmp_path).returncode == 0
    assert b"checkpoint_engine" in (tmp_path / "a.sh").read_bytes()
