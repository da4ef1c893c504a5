"""Generated shell stubs, run for real with bash: arguments, stdin, exit codes, env, modes, locations."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest
from tests.helpers import HANG_GUARD, run_cli
from tests.helpers.shims import ARGV_PRINTER, parse_printer, run_stub, shellcheck, write_script

HOSTILE_HINT = "it's gone: $(touch PWNED) `touch PWNED2` \"dq\" %s %d \\n \\\\ ${HOME} ; rm -rf x"
TABLE = """\
release: v0.8.0
entries:
  - kind: path-move
    old: examples/old_dir/run_old.sh
    new: examples/new_dir/sub/run_new.sh
    env: {DEVICE: npu, MODE: a.b}
    args: [trainer.device=npu, +x.y=1]
    pr: 101
  - kind: path-removal
    old: examples/gone.sh
    hint: '%s'
    note: '%s'
    pr: 102
  - kind: path-move
    old: top.sh
    new: examples/new_dir/sub/run_new.sh
    pr: 103
""" % (HOSTILE_HINT.replace("'", "''"), HOSTILE_HINT.replace("'", "''"))

WEIRD_ARGS = ["plain", "with space", "it's", 'dq"x', "$(touch PWNED3)", "`touch PWNED4`", "*", "?", "[a]",
              "line1\nline2", "", "--flag=a b", "\\back\\slash", "tab\there", "~user", "${HOME}"]


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    base = tmp_path_factory.mktemp("shims shell")
    # A table file name with a newline and a command must stay inert in the header comment.
    table = base / "t\ntouch PWNED_HEADER\n.yaml"
    table.write_text(TABLE)
    root = base / "root with spaces" / "verl"
    result = run_cli("shims", "generate", "--to", "v0.8.0", "--table", str(table), "--out", str(root))
    assert result.returncode == 0, result.stderr
    write_script(root / "examples/new_dir/sub/run_new.sh")
    return root


def test_arguments_stdin_and_env_arrive_unchanged(tree, tmp_path):
    result = run_stub(tree / "examples/old_dir/run_old.sh", WEIRD_ARGS, stdin=b"in put\nline 2", cwd=tmp_path)
    argv, env, stdin = parse_printer(result.stdout)
    assert result.returncode == 0
    assert argv == ["trainer.device=npu", "+x.y=1", *WEIRD_ARGS]
    assert env == "ENV DEVICE=npu MODE=a.b"
    assert stdin == "in put\nline 2"
    assert list(tmp_path.iterdir()) == []  # no PWNED files, no glob expansion side effects


@pytest.mark.parametrize("code", [0, 1, 7])
def test_exit_status_propagates(tree, tmp_path, code):
    result = run_stub(tree / "examples/old_dir/run_old.sh", ["x"], cwd=tmp_path, env={"FAKE_EXIT": str(code)})
    assert result.returncode == code


def test_one_warning_line_on_stderr(tree, tmp_path):
    result = run_stub(tree / "examples/old_dir/run_old.sh", [], cwd=tmp_path)
    lines = result.stderr.decode().splitlines()
    assert lines == [
        "verl-migrate: examples/old_dir/run_old.sh is deprecated: it moved to examples/new_dir/sub/run_new.sh "
        "(run with DEVICE=npu MODE=a.b) in verl v0.8.0 (https://github.com/verl-project/verl/pull/101) and this "
        "stub goes away in the release after v0.9.0; run: verl-migrate --to v0.8.0 <your scripts>"]


def test_quiet_mode_drops_the_warning(tree, tmp_path):
    result = run_stub(tree / "examples/old_dir/run_old.sh", ["a"], cwd=tmp_path, env={"VERL_MIGRATE_SHIM": "quiet"})
    assert result.returncode == 0 and result.stderr == b""
    assert parse_printer(result.stdout)[0][-1] == "a"


def test_error_mode_runs_nothing(tree, tmp_path):
    result = run_stub(tree / "examples/old_dir/run_old.sh", ["a"], cwd=tmp_path, env={"VERL_MIGRATE_SHIM": "error"})
    assert result.returncode == 2
    assert result.stdout == b""
    assert result.stderr.decode().startswith("error: verl-migrate: examples/old_dir/run_old.sh is deprecated")


def test_works_from_another_cwd_through_a_symlink_and_via_sh(tree, tmp_path):
    link_dir = tmp_path / "links dir"
    link_dir.mkdir()
    link = link_dir / "my run.sh"
    link.symlink_to(os.path.relpath(tree / "examples/old_dir/run_old.sh", link_dir))
    chained = tmp_path / "chained"
    chained.symlink_to(link)
    for stub, via in ((link, None), (chained, None), (link, ["bash"]), (link, ["sh"])):
        result = run_stub(stub, ["q r"], stdin=b"s", cwd="/", via=via)
        assert result.returncode == 0, result.stderr
        argv, env, stdin = parse_printer(result.stdout)
        assert argv[-1] == "q r" and env == "ENV DEVICE=npu MODE=a.b" and stdin == "s"
        assert result.stderr.decode().count("\n") == 1  # one warning, also when re-run under bash


def test_stub_at_the_root_and_through_a_symlinked_directory(tree, tmp_path):
    assert run_stub(tree / "top.sh", ["z"], cwd=tmp_path).returncode == 0
    alias = tmp_path / "checkout alias"
    alias.symlink_to(tree)
    result = run_stub(alias / "examples/old_dir/run_old.sh", ["z"], cwd=tmp_path)
    assert result.returncode == 0 and parse_printer(result.stdout)[0][-1] == "z"


def test_missing_target_fails_clearly(tmp_path, tree):
    copy = tmp_path / "copy"
    shutil.copytree(tree, copy, symlinks=True)
    (copy / "examples/new_dir/sub/run_new.sh").unlink()
    result = run_stub(copy / "examples/old_dir/run_old.sh", [], cwd=tmp_path)
    assert result.returncode == 127 and b"is missing" in result.stderr


def test_removed_script_prints_the_hostile_hint_inertly_and_exits_2(tree, tmp_path):
    for mode in ("", "quiet", "error"):
        result = run_stub(tree / "examples/gone.sh", ["a"], cwd=tmp_path, env={"VERL_MIGRATE_SHIM": mode})
        assert result.returncode == 2
        assert result.stderr.decode() == (
            "error: verl-migrate: examples/gone.sh was removed in verl v0.8.0 "
            f"(https://github.com/verl-project/verl/pull/102): {HOSTILE_HINT}; "
            "run: verl-migrate --to v0.8.0 <your scripts>\n")
    assert list(tmp_path.iterdir()) == []


def test_hostile_table_file_name_stays_in_the_comment(tree, tmp_path):
    text = (tree / "examples/gone.sh").read_text()
    assert "\ntouch PWNED_HEADER" not in text and "t?touch PWNED_HEADER?.yaml" in text
    run_stub(tree / "examples/gone.sh", [], cwd=tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_header_names_entry_pr_and_removal(tree):
    head = (tree / "examples/old_dir/run_old.sh").read_text().splitlines()[:7]
    assert head[0] == "#!/usr/bin/env bash"
    assert any("From table entry: path-move examples/old_dir/run_old.sh in " in line and "(release v0.8.0)" in line
               and "pull/101" in line for line in head)
    assert any("this shim is removed in the release after v0.9.0" in line for line in head)
    assert os.access(tree / "examples/old_dir/run_old.sh", os.X_OK)


def test_stubs_are_shellcheck_clean(tree):
    stubs = [str(tree / p) for p in ("examples/old_dir/run_old.sh", "examples/gone.sh", "top.sh")]
    result = subprocess.run([shellcheck(), "--severity=style", *stubs], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout


def test_printer_fixture_is_what_we_think(tmp_path):
    script = write_script(tmp_path / "p.sh", ARGV_PRINTER)
    result = subprocess.run(["bash", str(script), "a b", ""], input=b"x", capture_output=True)
    assert parse_printer(result.stdout) == (["a b", ""], "ENV DEVICE=unset MODE=unset", "x")


SOURCEABLE = 'NEW_VAR="set by the new script"\nprintf "new got %s;" "$@"\n'


@pytest.fixture
def sourced_tree(tmp_path):
    table = tmp_path / "t.yaml"
    table.write_text(TABLE)
    root = tmp_path / "verl"
    assert run_cli("shims", "generate", "--to", "v0.8.0", "--table", str(table), "--out", str(root)).returncode == 0
    write_script(root / "examples/new_dir/sub/run_new.sh", SOURCEABLE)
    return root


def _source(stub, *args, env=None):
    """A bash caller that sources `stub` and then goes on: its variables must survive."""
    caller = ('root=mine target=mine message=mine self=mine here=mine link=mine\n'
              f'. "$1" {" ".join(args)}\n'
              'echo " status=$? NEW_VAR=${NEW_VAR-unset} DEVICE=${DEVICE-unset} root=$root target=$target '
              'message=$message self=$self here=$here link=$link after"\n')
    full_env = {k: v for k, v in os.environ.items() if k not in ("DEVICE", "MODE", "VERL_MIGRATE_SHIM")}
    return subprocess.run(["bash", "-c", caller, "caller", str(stub)], capture_output=True, text=True,
                          env={**full_env, **(env or {})}, timeout=HANG_GUARD)


def test_a_sourced_stub_sources_the_new_script_and_returns(sourced_tree):
    result = _source(sourced_tree / "examples/old_dir/run_old.sh", "'a b'", "c")
    assert result.returncode == 0, result.stderr
    assert result.stdout == ("new got trainer.device=npu;new got +x.y=1;new got a b;new got c; status=0 "
                             "NEW_VAR=set by the new script DEVICE=npu root=mine target=mine message=mine "
                             "self=mine here=mine link=mine after\n")
    assert result.stderr.count("\n") == 1 and "is deprecated" in result.stderr


def test_a_sourced_stub_that_fails_returns_its_status(sourced_tree):
    result = _source(sourced_tree / "examples/old_dir/run_old.sh", env={"VERL_MIGRATE_SHIM": "error"})
    assert "status=2 NEW_VAR=unset" in result.stdout and result.stdout.endswith("after\n")
    result = _source(sourced_tree / "examples/gone.sh")
    assert "status=2 NEW_VAR=unset" in result.stdout and result.stdout.endswith("after\n")
    (sourced_tree / "examples/new_dir/sub/run_new.sh").unlink()
    result = _source(sourced_tree / "examples/old_dir/run_old.sh")
    assert "status=127 NEW_VAR=unset" in result.stdout and "is missing" in result.stderr


def test_a_stub_for_a_move_not_proven_the_same_refuses_unless_asked(tmp_path):
    # The facts of tests/fixtures/tables/script_moves_releases/ prove run_dapo.sh -> run_gsm8k.sh differs.
    from migrator.mapping import compose
    from migrator.mapping.load import load_release_index
    from migrator.shims import shell
    from tests.helpers import FIXTURES

    index = load_release_index(FIXTURES / "tables" / "script_moves_releases")
    mappings = compose(index, "v0.7.1", "v0.8.0", [])
    releases = ("v0.1", "v0.7.1", "v0.8.0", "v0.9.0")
    for old, new in (("examples/run_dapo.sh", "examples/run_gsm8k.sh"),
                     ("examples/run_same_old.sh", "examples/run_same_new.sh")):
        generated = shell.stub(mappings.path(old), "v0.8.0", releases)
        (tmp_path / old).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / old).write_bytes(generated.content)
        (tmp_path / old).chmod(generated.mode)
        write_script(tmp_path / new)
    refused = run_stub(tmp_path / "examples/run_dapo.sh", ["a"], cwd=tmp_path)
    assert refused.returncode == 2 and refused.stdout == b""
    assert refused.stderr.decode().startswith(
        "error: verl-migrate: examples/run_dapo.sh moved to examples/run_gsm8k.sh (run with NNODES=4) in verl v0.8.0 "
        "(https://github.com/verl-project/verl/pull/202), and the new script trains something else: 8 settings differ "
        "(data.train_files $HOME/data/dapo-math-17k.parquet -> $HOME/data/gsm8k/train.parquet; "
        "reward.reward_manager.name dapo -> naive; ")
    assert "not run: set VERL_MIGRATE_RUN_MOVED=1 to run the new script anyway" in refused.stderr.decode()
    asked = run_stub(tmp_path / "examples/run_dapo.sh", ["a"], cwd=tmp_path, env={"VERL_MIGRATE_RUN_MOVED": "1"})
    assert asked.returncode == 0 and parse_printer(asked.stdout)[0] == ["a"]
    assert asked.stderr.decode().splitlines()[1].startswith("warning: verl-migrate: VERL_MIGRATE_RUN_MOVED=1: running")
    same = run_stub(tmp_path / "examples/run_same_old.sh", ["a"], cwd=tmp_path)
    assert same.returncode == 0 and same.stderr.decode().count("\n") == 1  # a proven move forwards, as before
