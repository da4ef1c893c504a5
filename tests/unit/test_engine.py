"""The engine: results as values, atomic writes, what is skipped and why, and validation."""

from __future__ import annotations

import os

from migrator.edits import Edit
from migrator.engine import RunOptions, run, write_atomic
from migrator.fileprocess import apply_edits, process_file

OLD = b"python3 -m verl.trainer.main_ppo actor_rollout_ref.rollout.update_weights_bucket_megabytes=1\n"


def test_apply_edits_keeps_insertions_and_rejects_overlaps():
    src = b"abcdef"
    new, applied, rejected = apply_edits(src, [Edit(2, 4, b"XY", "k", "m"), Edit(2, 2, b">", "k", "m"),
                                               Edit(3, 5, b"!", "k", "m")])
    assert new == b"ab>XYef" and len(applied) == 2 and len(rejected) == 1


def test_binary_and_unknown_files_are_skipped(tmp_path, core_mappings):
    (tmp_path / "w.sh").write_bytes(b"\x00" + OLD)
    (tmp_path / "w.json").write_bytes(OLD)
    (tmp_path / "u16.sh").write_bytes("x".encode("utf-16"))
    results = {r.path: r for r in run(RunOptions([str(tmp_path)], write=False), core_mappings)}
    assert results[str(tmp_path / "w.sh")].reason == "binary file"
    assert results[str(tmp_path / "w.json")].reason == "not a file kind verl-migrate rewrites"
    assert "UTF-16" in results[str(tmp_path / "u16.sh")].reason


def test_shebang_selects_the_shell_rewriter(tmp_path, core_mappings):
    script = tmp_path / "train"
    script.write_bytes(b"#!/usr/bin/env bash\n" + OLD)
    assert process_file(str(script), "train", core_mappings).status == "changed"
    bom = tmp_path / "bom"
    bom.write_bytes(b"\xef\xbb\xbf#!/bin/bash\n" + OLD)
    result = process_file(str(bom), "bom", core_mappings)
    assert result.status == "changed" and result.after.startswith(b"\xef\xbb\xbf#!/bin/bash\n")


def test_symlinks_are_never_written_through(tmp_path, core_mappings):
    outside = tmp_path / "outside.sh"
    outside.write_bytes(OLD)
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "link.sh").symlink_to(outside)
    (tree / "loop.sh").symlink_to(tree / "loop.sh")
    results = {r.path: r for r in run(RunOptions([str(tree)]), core_mappings)}
    assert "outside the tree" in results[str(tree / "link.sh")].reason
    assert "loop" in results[str(tree / "loop.sh")].reason
    assert outside.read_bytes() == OLD and (tree / "link.sh").is_symlink()


def test_write_atomic_keeps_mode_and_leaves_no_temp(tmp_path):
    target = tmp_path / "run.sh"
    target.write_bytes(b"old\n")
    target.chmod(0o741)
    write_atomic(str(target), b"old\n", b"new\n")
    assert target.read_bytes() == b"new\n"
    assert oct(os.stat(target).st_mode & 0o777) == oct(0o741)
    assert sorted(os.listdir(tmp_path)) == ["run.sh"]


def test_write_atomic_refuses_a_file_changed_meanwhile(tmp_path):
    target = tmp_path / "run.sh"
    target.write_bytes(b"changed by the user\n")
    try:
        write_atomic(str(target), b"old\n", b"new\n")
    except Exception as exc:  # noqa: BLE001
        assert "changed on disk" in str(exc)
    else:
        raise AssertionError("expected a refusal")
    assert target.read_bytes() == b"changed by the user\n"


def test_a_rewrite_that_breaks_the_script_is_not_written(tmp_path, core_mappings, monkeypatch):
    from migrator.rewrite import shell

    script = tmp_path / "a.sh"
    script.write_bytes(OLD)
    real_locate = shell.locate

    def broken_locate(source, mappings, path=""):
        located = real_locate(source, mappings, path)
        return type(located)(located.edits + (Edit(0, 0, b"if then (\n", "key-rename", "bad"),), ())

    monkeypatch.setattr(shell, "locate", broken_locate)
    result = process_file(str(script), "a.sh", core_mappings)
    assert result.status == "failed" and "bash -n" in result.reason
    assert script.read_bytes() == OLD


def test_one_failure_does_not_stop_the_run(tmp_path, core_mappings, monkeypatch):
    from migrator.rewrite import shell

    (tmp_path / "a.sh").write_bytes(OLD)
    (tmp_path / "b.sh").write_bytes(OLD)
    real_locate = shell.locate

    def flaky(source, mappings, path=""):
        if path.endswith("a.sh"):
            raise RuntimeError("boom")
        return real_locate(source, mappings, path)

    monkeypatch.setattr(shell, "locate", flaky)
    results = {os.path.basename(r.path): r for r in run(RunOptions([str(tmp_path)]), core_mappings)}
    assert results["a.sh"].status == "failed" and "boom" in results["a.sh"].reason
    assert results["b.sh"].status == "changed"
    assert b"checkpoint_engine" in (tmp_path / "b.sh").read_bytes()


def test_without_bash_a_reparse_must_not_add_errors(monkeypatch):
    from migrator.rewrite import shell
    from migrator.rewrite.shell import validity

    monkeypatch.setattr(validity.shutil, "which", lambda name: None)
    assert shell.validate(b"echo a\n", b"echo b\n") is None
    assert "parse errors" in shell.validate(b"echo a\n", b"echo $(( \n")


def test_bash_n_runs_only_when_an_edit_could_change_what_bash_parses(tmp_path, core_mappings, monkeypatch):
    from migrator.rewrite.shell import validity

    checked = []
    real_bash_n = validity._bash_n
    monkeypatch.setattr(validity, "_bash_n", lambda bash, source: checked.append(source) or real_bash_n(bash, source))
    # A plain key renamed inside its word: proved harmless, no bash -n.
    script = tmp_path / "rename.sh"
    script.write_bytes(OLD)
    assert process_file(str(script), "rename.sh", core_mappings).status == "changed"
    assert checked == []
    # The same rename in a script with a here-document: bash -n decides.
    heredoc = tmp_path / "heredoc.sh"
    heredoc.write_bytes(b"cat <<EOF\nnote\nEOF\n" + OLD)
    result = process_file(str(heredoc), "heredoc.sh", core_mappings)
    assert result.status == "changed" and len(checked) == 1 and checked[0] == result.after


def test_the_git_guard_refuses_before_the_clean_files_are_read(tmp_path, core_mappings, monkeypatch):
    import pytest

    from migrator import fileprocess
    from migrator.engine import DirtyFilesError
    from tests.helpers.repos import committed_repo

    repo = committed_repo(tmp_path / "repo", {f"clean_{i}.sh": OLD for i in range(5)} | {"dirty.sh": OLD})
    (repo / "dirty.sh").write_bytes(OLD + b"# my edit\n")
    (repo / "fine.sh").write_bytes(b"echo untracked, nothing to migrate\n")
    read: list[str] = []
    real = fileprocess.sniff
    monkeypatch.setattr(fileprocess, "sniff", lambda path, *a, **k: read.append(os.path.basename(path))
                        or real(path, *a, **k))
    with pytest.raises(DirtyFilesError) as refused:
        run(RunOptions([str(repo)]), core_mappings)
    assert refused.value.states == {str(repo / "dirty.sh"): "modified"}
    assert sorted(read) == ["dirty.sh", "fine.sh"]  # only the dirty files: none of the clean five
    assert (repo / "dirty.sh").read_bytes() == OLD + b"# my edit\n"
    assert all((repo / f"clean_{i}.sh").read_bytes() == OLD for i in range(5))
