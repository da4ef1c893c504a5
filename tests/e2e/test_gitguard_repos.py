"""The git guard on real repositories: dirty files are refused and listed (exit 2, nothing written),
`--allow-dirty` writes them, and staged changes, a detached HEAD, files outside any repository and
files inside a submodule are each judged by the repository they belong to."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import git
import pytest

from migrator.gitguard import dirty_files
from tests.helpers import HANG_GUARD

OLD = b"python3 -m verl.trainer.main_ppo actor_rollout_ref.rollout.update_weights_bucket_megabytes=512\n"
NEW = b"python3 -m verl.trainer.main_ppo actor_rollout_ref.rollout.checkpoint_engine.update_weights_bucket_megabytes=512\n"


def cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "migrator", "--to", "v0.8.0", *map(str, args)],
                          capture_output=True, text=True, timeout=HANG_GUARD)


def make_repo(path: Path, files: dict[str, bytes]) -> git.Repo:
    repo = git.Repo.init(path)
    with repo.config_writer() as cw:
        cw.set_value("user", "name", "t")
        cw.set_value("user", "email", "t@example.com")
    for name, data in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_bytes(data)
    repo.index.add(list(files))
    repo.index.commit("initial")
    return repo


@pytest.fixture
def repo(tmp_path) -> git.Repo:
    return make_repo(tmp_path / "repo", {"clean.sh": OLD, "dirty.sh": OLD, "staged.sh": OLD, "sub/deep.sh": OLD})


def top(repo: git.Repo) -> Path:
    return Path(repo.working_tree_dir)


def test_clean_repository_is_written(repo):
    out = cli(top(repo))
    assert out.returncode == 0, out.stderr
    assert all((top(repo) / n).read_bytes() == NEW for n in ("clean.sh", "dirty.sh", "staged.sh", "sub/deep.sh"))


def test_dirty_untracked_and_staged_files_are_refused_and_listed(repo):
    root = top(repo)
    (root / "dirty.sh").write_bytes(OLD + b"# local edit\n")
    (root / "staged.sh").write_bytes(OLD + b"# staged edit\n")
    repo.index.add(["staged.sh"])
    (root / "untracked.sh").write_bytes(OLD)
    out = cli(root)
    assert out.returncode == 2
    assert out.stderr.splitlines()[0] == (
        "error: refusing to overwrite files with uncommitted changes; commit or stash them, or pass --allow-dirty "
        "(or --allow-staged, when their changes are all staged):")
    listed = [line.strip() for line in out.stderr.splitlines() if line.startswith("  ")]
    assert listed == [f"{root / 'dirty.sh'} (modified)", f"{root / 'staged.sh'} (staged)",
                      f"{root / 'untracked.sh'} (untracked)"]
    assert (root / "clean.sh").read_bytes() == OLD  # nothing is written when anything is refused
    assert (root / "dirty.sh").read_bytes() == OLD + b"# local edit\n"
    assert "Traceback" not in out.stderr


def test_staged_only_change_counts_as_dirty(repo):
    root = top(repo)
    (root / "staged.sh").write_bytes(OLD + b"# staged\n")
    repo.index.add(["staged.sh"])  # work tree == index, index != HEAD
    assert dirty_files([str(root / "staged.sh"), str(root / "clean.sh")]) == [str(root / "staged.sh")]


def test_allow_dirty_writes_them(repo):
    root = top(repo)
    (root / "dirty.sh").write_bytes(OLD + b"# local edit\n")
    out = cli("--allow-dirty", root)
    assert out.returncode == 0, out.stderr
    assert (root / "dirty.sh").read_bytes() == NEW + b"# local edit\n"


def test_dirty_file_that_needs_no_change_does_not_block(repo):
    root = top(repo)
    (root / "notes.sh").write_bytes(b"echo untracked but nothing to migrate\n")
    out = cli(root)
    assert out.returncode == 0, out.stderr
    assert (root / "clean.sh").read_bytes() == NEW


def test_dry_runs_never_consult_the_guard(repo):
    root = top(repo)
    (root / "dirty.sh").write_bytes(OLD + b"# local edit\n")
    out = cli("--check", root)
    assert out.returncode == 1 and "refusing" not in out.stderr


def test_detached_head(repo):
    root = top(repo)
    repo.git.checkout("--detach", "HEAD")
    assert repo.head.is_detached
    out = cli(root)
    assert out.returncode == 0, out.stderr
    assert (root / "clean.sh").read_bytes() == NEW


def test_detached_head_with_a_dirty_file(repo):
    root = top(repo)
    repo.git.checkout("--detach", "HEAD")
    (root / "dirty.sh").write_bytes(OLD + b"# x\n")
    out = cli(root)
    assert out.returncode == 2 and str(root / "dirty.sh") in out.stderr


def test_repository_without_commits(tmp_path):
    repo = git.Repo.init(tmp_path / "fresh")
    (tmp_path / "fresh" / "run.sh").write_bytes(OLD)
    out = cli(tmp_path / "fresh")
    assert out.returncode == 2 and str(tmp_path / "fresh" / "run.sh") in out.stderr
    assert "Traceback" not in out.stderr
    del repo


def test_file_outside_any_repository_is_written(tmp_path):
    (tmp_path / "loose").mkdir()
    script = tmp_path / "loose" / "run.sh"
    script.write_bytes(OLD)
    assert dirty_files([str(script)]) == []
    out = cli(script)
    assert out.returncode == 0, out.stderr
    assert script.read_bytes() == NEW


def test_file_named_with_spaces_and_unicode_is_listed(repo):
    root = top(repo)
    odd = root / "my run ü.sh"
    odd.write_bytes(OLD)
    out = cli(root)
    assert out.returncode == 2
    assert f"  {odd} (untracked)" in out.stderr.splitlines()


@pytest.fixture
def superproject(tmp_path):
    sub_origin = make_repo(tmp_path / "sub_origin", {"inner.sh": OLD, "other.sh": OLD})
    parent = make_repo(tmp_path / "parent", {"outer.sh": OLD})
    parent.git.execute(["git", "-c", "protocol.file.allow=always", "submodule", "add",
                        sub_origin.working_tree_dir, "vendored"])
    parent.index.commit("add submodule")
    return Path(parent.working_tree_dir)


def test_clean_submodule_files_are_written(superproject):
    out = cli(superproject)
    assert out.returncode == 0, out.stderr
    assert (superproject / "vendored" / "inner.sh").read_bytes() == NEW
    assert (superproject / "outer.sh").read_bytes() == NEW


def test_file_dirty_inside_a_submodule_is_refused(superproject):
    inner = superproject / "vendored" / "inner.sh"
    inner.write_bytes(OLD + b"# edited in the submodule\n")
    assert dirty_files([str(inner), str(superproject / "outer.sh")]) == [str(inner)]
    out = cli(superproject)
    assert out.returncode == 2
    assert f"  {inner} (modified)" in out.stderr.splitlines()
    assert (superproject / "outer.sh").read_bytes() == OLD


def test_untracked_files_with_newline_and_non_utf8_names_are_refused(repo):
    root = top(repo)
    names = [b"new\nline.sh", b"bad\xffname.sh"]
    for name in names:
        with open(bytes(root) + b"/" + name, "wb") as fh:
            fh.write(OLD)
    paths = [str(root / "clean.sh")] + [(bytes(root) + b"/" + n).decode("utf-8", "surrogateescape") for n in names]
    assert dirty_files(paths) == sorted(paths[1:])
    out = cli(root)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert (root / "clean.sh").read_bytes() == OLD



MAGIC_NAMES = [":wip.sh", ":!x.sh", ":(glob)y.sh", ":(icase)Z.sh", "[ab].sh", "*.sh", ":^q.sh"]


def _committed_tree(root: Path, names: list[str]) -> None:
    root.mkdir()
    for name in names:
        (root / name).write_bytes(OLD)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(["git", "-C", str(root), "--literal-pathspecs", "add", "--", *names], check=True)
    subprocess.run(["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@example.com",
                    "commit", "-qm", "initial"], check=True)


@pytest.mark.parametrize("name", MAGIC_NAMES)
def test_a_name_git_would_read_as_pathspec_magic_is_guarded(tmp_path, name):
    root = tmp_path / "magic"
    _committed_tree(root, [name, "clean.sh", "a.sh"])
    (root / name).write_bytes(OLD + b"# my uncommitted edit\n")
    paths = [str(root / n) for n in (name, "clean.sh", "a.sh")]
    assert dirty_files(paths) == [str(root / name)]


def test_the_cli_refuses_dirty_files_with_magic_names(tmp_path):
    root = tmp_path / "magic"
    _committed_tree(root, [":wip.sh", ":(glob)y.sh", "clean.sh"])
    for name in (":wip.sh", ":(glob)y.sh"):
        (root / name).write_bytes(OLD + b"# my uncommitted edit\n")
    out = cli(root)
    assert out.returncode == 2, out.stderr
    for name in (":wip.sh", ":(glob)y.sh"):
        assert f"  {root / name} (modified)\n" in out.stderr
        assert (root / name).read_bytes() == OLD + b"# my uncommitted edit\n"
    assert (root / "clean.sh").read_bytes() == OLD


def test_staging_helps_only_with_allow_staged_and_the_refusal_names_both_flags(repo):
    root = top(repo)
    (root / "staged.sh").write_bytes(OLD + b"# staged edit\n")
    repo.index.add(["staged.sh"])
    refused = cli(root)
    assert refused.returncode == 2
    assert "--allow-dirty" in refused.stderr.splitlines()[0] and "--allow-staged" in refused.stderr.splitlines()[0]
    assert f"  {root / 'staged.sh'} (staged)" in refused.stderr.splitlines()
    (root / "untracked.sh").write_bytes(OLD)
    still = cli("--allow-staged", root)
    assert still.returncode == 2
    assert still.stderr.splitlines()[1:] == [f"  {root / 'untracked.sh'} (untracked)"]
    assert "unstaged or untracked" in still.stderr.splitlines()[0]
    (root / "untracked.sh").unlink()
    assert cli("--allow-staged", root).returncode == 0
    assert (root / "staged.sh").read_bytes() == NEW + b"# staged edit\n"


def test_the_guard_refuses_before_any_file_is_analysed(repo):
    """`--from auto` reads every file; the refusal comes first, as cargo fix's does: no note of what the
    files fit precedes it."""
    root = top(repo)
    (root / "dirty.sh").write_bytes(OLD + b"# local edit\n")
    out = cli("--from", "auto", root)
    assert out.returncode == 2, out.stderr
    assert out.stderr.splitlines()[0].startswith("error: refusing to overwrite files with uncommitted changes")
    assert out.stderr.splitlines()[1:] == [f"  {root / 'dirty.sh'} (modified)"]
    assert (root / "clean.sh").read_bytes() == OLD


@pytest.mark.parametrize("start, read", [("auto", ["dirty.sh"]), ("v0.5.0", [])])
def test_the_guard_fits_only_the_dirty_files(repo, monkeypatch, start, read):
    """Before the refusal, `--from auto` fits the dirty files alone and the VM301 check of an explicit
    --from reads nothing."""
    from click.testing import CliRunner

    from migrator.cli import cli as command
    from migrator.written_for import FitWork

    root = top(repo)
    (root / "dirty.sh").write_bytes(OLD + b"# local edit\n")
    fitted = []
    real = FitWork.run
    monkeypatch.setattr(FitWork, "run", lambda self, candidate: fitted.append(candidate.path) or real(self, candidate))
    result = CliRunner().invoke(command, ["migrate", "--to", "v0.8.0", "--from", start, "-j", "1", str(root)])
    assert result.exit_code == 2, result.output
    assert fitted == [str(root / name) for name in read]


def test_from_auto_dirty_file_needing_no_change_lets_the_run_write(repo):
    root = top(repo)
    (root / "dirty.sh").write_bytes(b"echo my own edit\n")
    out = cli("--from", "auto", root)
    assert out.returncode == 0, out.stderr
    assert b"rollout.checkpoint_engine.update_weights_bucket_megabytes=512" in (root / "clean.sh").read_bytes()
    assert (root / "dirty.sh").read_bytes() == b"echo my own edit\n"
