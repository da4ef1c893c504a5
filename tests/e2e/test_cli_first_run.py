"""The first run must not mislead: a mistyped subcommand or path is a usage error (exit 2, nothing
written), not a silent rewrite or a green "1 skipped"; the help shows the options most runs use."""

from __future__ import annotations

import os

import pytest

from tests.helpers import run_cli
from tests.helpers.repos import CORE, NEW_SCRIPT, OLD_SCRIPT, committed_repo, snapshot


@pytest.fixture
def project(tmp_path):
    return committed_repo(tmp_path / "project", {"my_scripts/run.sh": OLD_SCRIPT, "lint/run.sh": OLD_SCRIPT})


@pytest.mark.parametrize(("typo", "meant"), [("lnt", "lint"), ("shim", "shims"), ("release-note", "release-notes"),
                                             ("mappigns", "mappings")])
def test_a_mistyped_subcommand_is_refused_and_nothing_is_written(project, typo, meant):
    before = snapshot(project)
    proc = run_cli(typo, "my_scripts", *CORE, cwd=project)
    assert proc.returncode == 2, proc.stderr
    assert f"No such command '{typo}'. Did you mean '{meant}'?" in proc.stderr
    assert snapshot(project) == before


def test_a_word_that_is_no_path_and_no_command_is_refused(project):
    before = snapshot(project)
    proc = run_cli("upgrade", "my_scripts", *CORE, cwd=project)
    assert proc.returncode == 2 and "No such command 'upgrade'" in proc.stderr
    assert snapshot(project) == before


def test_an_existing_path_spelled_like_a_typo_is_migrated(tmp_path):
    repo = committed_repo(tmp_path / "p", {"lnt/run.sh": OLD_SCRIPT})
    proc = run_cli("lnt", *CORE, cwd=repo)
    assert proc.returncode == 0, proc.stderr
    assert (repo / "lnt" / "run.sh").read_bytes() == NEW_SCRIPT.read_bytes()


def test_a_directory_named_like_a_subcommand_needs_migrate(project):
    as_lint = run_cli("lint", "lint", cwd=project)  # the subcommand wins: lint runs on the directory
    assert as_lint.returncode in (0, 1) and "script" in as_lint.stderr
    assert (project / "lint" / "run.sh").read_bytes() == OLD_SCRIPT.read_bytes()
    proc = run_cli("migrate", "lint", *CORE, cwd=project)
    assert proc.returncode == 0, proc.stderr
    assert (project / "lint" / "run.sh").read_bytes() == NEW_SCRIPT.read_bytes()


@pytest.mark.parametrize("mode", [[], ["--check"], ["--diff"], ["--output-format", "json"]])
def test_a_missing_path_exits_2_naming_it_and_writes_nothing(project, mode):
    before = snapshot(project)
    proc = run_cli(*CORE, *mode, "my_scripts", "my_scirpts/run.sh", cwd=project)
    assert proc.returncode == 2, proc.stderr
    assert "error: my_scirpts/run.sh: no such file or directory" in proc.stderr
    assert snapshot(project) == before


def test_lint_with_a_missing_path_exits_2_naming_it(project):
    proc = run_cli("lint", "my_scripts/run.sh", "my_scripts/rnu.sh", cwd=project)
    assert proc.returncode == 2 and "error: my_scripts/rnu.sh: no such file or directory" in proc.stderr


def test_a_fifo_is_reported_as_what_it_is(project):
    os.mkfifo(project / "pipe")
    for command in ([], ["lint"]):
        proc = run_cli(*command, "pipe", cwd=project, input="")
        assert proc.returncode == 2
        assert "error: pipe: not a regular file or directory: FIFO" in proc.stderr
        assert "no such file" not in proc.stderr


def test_top_level_help_shows_the_migrate_options():
    proc = run_cli("--help")
    assert proc.returncode == 0
    for option in ("--to REV", "--from REV", "--check", "--diff", "--output-format", "--allow-dirty", "--exclude"):
        assert option in proc.stdout
    assert "verl-migrate migrate --help" in proc.stdout and "Commands:" in proc.stdout


def test_lint_to_says_check_against():
    proc = run_cli("lint", "--help")
    assert "release to check against" in proc.stdout and "migrate to" not in proc.stdout


@pytest.mark.parametrize(("given", "suggested"), [("0.9.0", "v0.9.0"), ("v0.8", "v0.8.0"), ("mian", "main"),
                                                  ("v0.3.0", "v0.3.0.post1"), ("v0.6.2", "v0.6.1")])
def test_an_unknown_release_names_the_known_ones_and_the_closest(tmp_path, given, suggested):
    for command in ([], ["lint"]):
        proc = run_cli(*command, "--to", given, tmp_path)
        assert proc.returncode == 2
        assert f"unknown release '{given}'" in proc.stderr and "v0.7.1" in proc.stderr
        assert f"did you mean '{suggested}'?" in proc.stderr


def test_a_socket_and_a_device_are_reported_as_what_they_are(tmp_path):
    import socket

    listener = socket.socket(socket.AF_UNIX)
    try:
        listener.bind(str(tmp_path / "sock"))
        proc = run_cli("--check", "sock", os.devnull, cwd=tmp_path)
    finally:
        listener.close()
    assert proc.returncode == 2
    assert "error: sock: not a regular file or directory: socket" in proc.stderr
    assert f"error: {os.devnull}: not a regular file or directory: character device" in proc.stderr
