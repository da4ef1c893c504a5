"""`verl-migrate lint` end to end: output formats, the JSON schema, exit codes, suppression, -v notes."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from tests.helpers import FIXTURES, HANG_GUARD, REPO

FIXTURES = FIXTURES / "lint"
FINDING_FIELDS = {"path": str, "line": int, "col": int, "code": str, "message": str, "hint": (str, type(None)),
                  "severity": str}


def run_lint(*args, cwd=None):
    """One finding a line on stdout (`--output-format concise`) unless the test names a format."""
    chosen = any(str(a).startswith("--output-format") for a in args)
    return subprocess.run([sys.executable, "-m", "migrator", "lint", "--to", "v0.9.0",
                           "--table", str(FIXTURES / "tables.yaml"),
                           *(() if chosen else ("--output-format", "concise")), *map(str, args)],
                          capture_output=True, text=True, cwd=cwd, timeout=HANG_GUARD)


@pytest.fixture
def scripts(tmp_path):
    for name in ("vm002_lost_continuation.sh", "vm005_undefined.sh"):
        shutil.copy(FIXTURES / name, tmp_path / name)
    shutil.copytree(FIXTURES / "clean", tmp_path / "clean")
    (tmp_path / "notes.md").write_text("not a script: `trainer.nnodes=1`\n")
    return tmp_path


def test_text_format_is_grouped_on_stderr_like_the_rewrites(scripts):
    proc = run_lint("--output-format", "text", ".", cwd=scripts)
    assert proc.returncode == 1 and proc.stdout == "", proc.stderr
    assert proc.stderr.splitlines() == [
        "errors (the job fails or misbehaves) (3):",
        "VM002 a `\\` that does not continue the line, or an override that starts a command",
        "  hint: put the comment on its own line above, and end the line with `\\` alone",
        "    vm002_lost_continuation.sh:6:35: `\\` followed by a comment does not continue the line: the command "
        "ends here and the next line runs as a separate command",
        "  hint: end the previous line with `\\`",
        "    vm002_lost_continuation.sh:13:5: `trainer.nnodes=...` starts a command: the line before does not end "
        "with `\\`, so bash runs the override as a program and the entry point never sees it",
        "VM005 a variable the script never assigns",
        "  hint: did you mean `$actor_etp`?",
        "    vm005_undefined.sh:8:66: `$train_etp` is never assigned in this script (it expands to an empty string)",
        "3 findings in 8 scripts (verl v0.9.0)",
    ]
    coloured = run_lint("--output-format", "text", "--color", "always", ".", cwd=scripts)
    assert "\x1b[1;31mVM002\x1b[0m" in coloured.stderr
    plain = run_lint("--output-format", "text", "--color", "never", ".", cwd=scripts)
    assert "\x1b[" not in plain.stderr


def test_concise_format_and_exit_1(scripts):
    proc = run_lint(".", cwd=scripts)
    assert proc.returncode == 1, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines == [
        "vm002_lost_continuation.sh:6:35: VM002 `\\` followed by a comment does not continue the line: the command "
        "ends here and the next line runs as a separate command (put the comment on its own line above, and end "
        "the line with `\\` alone)",
        "vm002_lost_continuation.sh:13:5: VM002 `trainer.nnodes=...` starts a command: the line before does not end "
        "with `\\`, so bash runs the override as a program and the entry point never sees it (end the previous "
        "line with `\\`)",
        "vm005_undefined.sh:8:66: VM005 `$train_etp` is never assigned in this script (it expands to an empty "
        "string) (did you mean `$actor_etp`?)",
    ]
    assert "3 findings in 8 scripts (verl v0.9.0)" in proc.stderr


def test_clean_tree_exits_0(scripts):
    proc = run_lint("clean", cwd=scripts)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout == ""


def test_json_schema(scripts):
    proc = run_lint("--output-format", "json", ".", cwd=scripts)
    assert proc.returncode == 1
    findings = json.loads(proc.stdout)
    assert isinstance(findings, list) and len(findings) == 3
    for finding in findings:
        assert set(finding) == set(FINDING_FIELDS)
        for name, kind in FINDING_FIELDS.items():
            assert isinstance(finding[name], kind), (name, finding)
        assert finding["severity"] in ("error", "warning")
    assert [(f["path"], f["line"], f["col"], f["code"]) for f in findings] == [
        ("vm002_lost_continuation.sh", 6, 35, "VM002"), ("vm002_lost_continuation.sh", 13, 5, "VM002"),
        ("vm005_undefined.sh", 8, 66, "VM005")]
    assert findings[2]["hint"] == "did you mean `$actor_etp`?"


def test_json_of_a_clean_tree_is_an_empty_list(scripts):
    proc = run_lint("--output-format", "json", "clean", cwd=scripts)
    assert (proc.returncode, json.loads(proc.stdout)) == (0, [])


def test_github_annotations(scripts):
    proc = run_lint("--output-format", "github", "vm005_undefined.sh", cwd=scripts)
    assert proc.returncode == 1
    assert proc.stdout.splitlines() == [
        "::error file=vm005_undefined.sh,line=8,col=66,title=VM005::`$train_etp` is never assigned in this script "
        "(it expands to an empty string) (did you mean `$actor_etp`?)"]


def test_github_warning_level_and_escaping(tmp_path):
    (tmp_path / "run, 100%.sh").write_bytes((FIXTURES / "vm004_ineffective.sh").read_bytes())
    proc = run_lint("--output-format", "github", ".", cwd=tmp_path)
    (line,) = proc.stdout.splitlines()
    assert line.startswith("::warning file=run%2C 100%25.sh,line=4,col=6,title=VM112::")


def test_suppression_comments_end_to_end(tmp_path):
    src = (FIXTURES / "vm002_lost_continuation.sh").read_text().replace(
        "trainer.n_gpus_per_node=8\n    trainer.nnodes=1",
        "trainer.n_gpus_per_node=8\n    trainer.nnodes=1 # verl-migrate: ignore VM002")
    (tmp_path / "run.sh").write_text(src)
    proc = run_lint("run.sh", cwd=tmp_path)
    assert [line.split(": ")[0] for line in proc.stdout.splitlines()] == ["run.sh:6:35"]
    (tmp_path / "run.sh").write_text(src.replace("\\  # sample five answers", "\\  # verl-migrate: skip"))
    proc = run_lint("run.sh", cwd=tmp_path)
    assert (proc.returncode, proc.stdout) == (0, "")


def test_select_limits_the_codes(scripts):
    proc = run_lint("--select", "VM005", ".", cwd=scripts)
    assert [line.split(" ")[1] for line in proc.stdout.splitlines()] == ["VM005"]


@pytest.mark.parametrize("args, message", [
    (["--to", "v9.9"], "unknown release 'v9.9'"),
    (["--select", "VM999"], "unknown code(s) VM999"),
    (["--facts", "/nonexistent"], "no config-keys/ directory"),
])
def test_usage_errors_exit_2(scripts, args, message):
    proc = run_lint(*args, ".", cwd=scripts)
    assert proc.returncode == 2
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr


def test_broken_table_exits_2(tmp_path):
    (tmp_path / "bad.yaml").write_text("entries:\n  - kind: key-rename\n    old: a.b\n    pr: 1\n")
    (tmp_path / "run.sh").write_text("echo hi\n")
    proc = run_lint("--table", "bad.yaml", "run.sh", cwd=tmp_path)
    assert proc.returncode == 2 and "bad.yaml" in proc.stderr


def test_verbose_says_why_keys_were_not_judged(tmp_path):
    # A fork's own entry point: verl ships no key list for its config.
    (tmp_path / "sky.sh").write_text("python3 -m verl.trainer.main_ppo_sky data.train_batch_size=8\n")
    (tmp_path / "fork.sh").write_text("python3 -m mypkg.main trainer.nnodes=1 trainer.no_such_key=1\n")
    (tmp_path / "notes.md").write_text("# notes\n")
    proc = run_lint("-v", ".", cwd=tmp_path)
    assert "sky.sh: keys not checked: verl.trainer.main_ppo_sky has no shipped config key list" in proc.stderr
    assert "fork.sh: `mypkg.main` is not a verl entry point: its overrides are not judged" in proc.stderr
    assert "skipped notes.md: not a shell script" in proc.stderr


def test_lint_is_listed_and_help_works():
    proc = subprocess.run([sys.executable, "-m", "migrator", "lint", "--help"], capture_output=True, text=True)
    assert proc.returncode == 0 and "--output-format" in proc.stdout


def test_pre_commit_hooks_are_shipped():
    import yaml

    hooks = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())
    by_id = {h["id"]: h for h in hooks}
    assert set(by_id) == {"verl-migrate", "verl-migrate-lint"}
    # pre-commit passes staged files: the rewrite must accept them (test_cli_precommit.py runs a commit).
    assert by_id["verl-migrate"]["entry"] == "verl-migrate --allow-staged"
    assert by_id["verl-migrate"]["pass_filenames"] is True and by_id["verl-migrate"]["require_serial"] is True
    assert by_id["verl-migrate-lint"]["entry"] == "verl-migrate lint"
    assert by_id["verl-migrate-lint"]["types"] == ["shell"]


def test_pyproject_sets_the_target_release(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.verl-migrate]\nto = "v0.7.1"\n')
    (tmp_path / "run.sh").write_text("python3 -m verl.trainer.main_generation data.path=x\n")
    proc = subprocess.run([sys.executable, "-m", "migrator", "lint", "run.sh"], capture_output=True, text=True,
                          cwd=tmp_path, timeout=HANG_GUARD)
    assert "does not exist in verl v0.7.1" in proc.stderr, proc.stderr


def test_select_and_ignore_take_prefixes_in_the_shared_code_space(scripts):
    every = run_lint("--select", "VM0", ".", cwd=scripts)
    assert sorted({line.split(" ")[1] for line in every.stdout.splitlines()}) == ["VM002", "VM005"]
    ignored = run_lint("--ignore", "VM002", ".", cwd=scripts)
    assert [line.split(" ")[1] for line in ignored.stdout.splitlines()] == ["VM005"]
    # A rewrite code is a known code (one code space): it selects no lint check, and is no error.
    rewrite_only = run_lint("--select", "VM1", ".", cwd=scripts)
    assert (rewrite_only.returncode, rewrite_only.stdout) == (0, "")


def test_from_auto_in_a_shared_config_is_the_oldest_release_for_the_lint(scripts):
    plain = run_lint(".", cwd=scripts)
    auto = run_lint("--from", "auto", ".", cwd=scripts)
    assert (auto.returncode, auto.stdout) == (plain.returncode, plain.stdout)


@pytest.mark.parametrize("names, summary", [
    (["run.sh"], "0 findings in 1 script (verl v0.9.0)"),
    (["run.sh", "launch.py"], "0 findings in 2 files (verl v0.9.0)"),
    (["config.yaml"], "0 findings in 1 file (verl v0.9.0)"),
])
def test_the_summary_names_scripts_only_when_only_scripts_were_linted(tmp_path, names, summary):
    content = {"run.sh": "echo hi\n", "launch.py": "import os\n", "config.yaml": "a: 1\n"}
    for name in names:
        (tmp_path / name).write_text(content[name])
    proc = run_lint(".", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines()[-1] == summary
