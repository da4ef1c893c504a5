"""`[tool.verl-migrate]` problems are all reported at once with file and line; broken mapping tables
likewise; `--exclude` matches relative to the current directory (pyproject's: to its directory),
absolute paths and `**` globs, and still relative to each given directory and by name."""

from __future__ import annotations

import pytest

from tests.helpers import CORE_TABLE, run_cli
from tests.helpers.repos import CORE, NEW_SCRIPT, OLD_SCRIPT, committed_repo

BROKEN = '''[project]
name = "demo"

[tool.verl-migrate]
to = "v9.9"
jobs = -3
"output-format" = "sarif"
exclude = ["vendor", 3]
allow-dirty = "yes"
colour = "blue"
'''


def test_every_config_problem_is_reported_with_file_and_line(tmp_path):
    (tmp_path / "pyproject.toml").write_text(BROKEN)
    (tmp_path / "run.sh").write_bytes(OLD_SCRIPT.read_bytes())
    for command in ([], ["lint"]):
        proc = run_cli(*command, tmp_path / "run.sh", cwd=tmp_path)
        assert proc.returncode == 2
        errors = [line for line in proc.stderr.splitlines() if line.startswith("error: ")]
        where = f"error: {tmp_path / 'pyproject.toml'}"
        assert errors == [
            f"{where}:5: [tool.verl-migrate] to: unknown release 'v9.9' (known: v0.1, v0.2.0.post2, v0.3.0.post1, "
            "v0.4.0, v0.4.1, v0.5.0, v0.6.0, v0.6.1, v0.7.0, v0.7.1, v0.8.0, v0.9.0, main); did you mean 'v0.9.0'?",
            f"{where}:6: [tool.verl-migrate] jobs: must be at least 1, not -3",
            f"{where}:7: [tool.verl-migrate] output-format: must be one of 'text', 'json', 'github', not 'sarif'",
            f"{where}:8: [tool.verl-migrate] exclude: every item must be a string (not #2 3)",
            f"{where}:9: [tool.verl-migrate] allow-dirty: must be a boolean (true or false), not 'yes'",
            f"{where}:10: [tool.verl-migrate]: unknown option 'colour' (known: allow-dirty, color, exclude, from, "
            "ignore, jobs, output-format, select, table, to); did you mean 'color'?",
        ], proc.stderr
    assert (tmp_path / "run.sh").read_bytes() == OLD_SCRIPT.read_bytes()


@pytest.mark.parametrize(("toml", "problem"), [
    ('jobs = true', "jobs: must be an integer, not True"),
    ('jobs = 0', "jobs: must be at least 1, not 0"),
    ('from = "0.8.0"', "did you mean 'v0.8.0'?"),
    ('table = ["missing.yaml"]', "table: no such table file: missing.yaml"),
    ('exclude = "vendor"', "exclude: must be a list of strings, not 'vendor'"),
    ('color = "rainbow"', "color: must be one of 'auto', 'always', 'never', not 'rainbow'"),
    ('from = "automatic"', "unknown release 'automatic'"),
])
def test_single_config_problems(tmp_path, toml, problem):
    (tmp_path / "pyproject.toml").write_text(f'[tool."verl-migrate"]\n{toml}\n')
    proc = run_cli("--check", tmp_path)
    assert proc.returncode == 2
    assert f"{tmp_path / 'pyproject.toml'}:2: " in proc.stderr and problem in proc.stderr


def test_a_valid_config_still_applies(tmp_path):
    (tmp_path / "pyproject.toml").write_text(f'[tool.verl-migrate]\nfrom = "main"\nto = "main"\njobs = 2\n'
                                             f'"output-format" = "json"\ntable = ["{CORE_TABLE}"]\n')
    (tmp_path / "run.sh").write_bytes(OLD_SCRIPT.read_bytes())
    proc = run_cli("--check", tmp_path)
    assert proc.returncode == 1 and proc.stdout.lstrip().startswith("{"), proc.stderr


def test_every_broken_entry_of_a_table_is_reported(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("entries:\n"
                   "  - {kind: key-rename, old: a.b, pr: 1}\n"
                   "  - {kind: key-renam, old: c.d, new: e.f, pr: 2}\n"
                   "  - {kind: key-rename, old: x.y, new: x.z, pr: 3}\n"
                   "  - {kind: key-rename, old: x.y, new: x.w, pr: 4}\n")
    proc = run_cli("--table", bad, tmp_path)
    assert proc.returncode == 2
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error: ")]
    assert errors == [
        f"error: {bad}:2: entry #1 (key-rename a.b): missing field(s) new for key-rename",
        f"error: {bad}:3: entry #2 (key-renam c.d): unknown kind 'key-renam' (known: config-dir-move, "
        "config-dir-removal, config-name-move, entry-point-move, entry-point-removal, env-removal, env-rename, "
        "key-no-action, key-removal, key-rename, key-scope, keyword-rename, module-move, module-no-action, "
        "module-removal, path-move, path-removal, signature-change, symbol-move, symbol-removal, symbol-rename, "
        "target-move, value-default, value-map, value-removal, value-rename, var-rename)",
        f"error: {bad}:5: key-rename x.y: duplicate old 'x.y': already given at line 4",
    ], proc.stderr


@pytest.fixture
def project(tmp_path):
    return committed_repo(tmp_path / "project", {name: OLD_SCRIPT for name in (
        "tree/run.sh", "tree/vendor/a.sh", "tree/sub/vendor/b.sh", "tree/sub/gen_c.sh", "vendor/top.sh")})


def migrated(root) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*.sh") if p.read_bytes() == NEW_SCRIPT.read_bytes()}


ALL = {"tree/run.sh", "tree/vendor/a.sh", "tree/sub/vendor/b.sh", "tree/sub/gen_c.sh"}


@pytest.mark.parametrize(("pattern", "excluded"), [
    ("tree/vendor", {"tree/vendor/a.sh"}),  # relative to the current directory
    ("./tree/vendor/", {"tree/vendor/a.sh"}),
    ("ABS/tree/vendor", {"tree/vendor/a.sh"}),
    ("**/vendor", {"tree/vendor/a.sh", "tree/sub/vendor/b.sh"}),
    ("tree/**/gen_*.sh", {"tree/sub/gen_c.sh"}),
    ("vendor", {"tree/vendor/a.sh", "tree/sub/vendor/b.sh"}),  # by name, anywhere (as before)
    ("sub/vendor", {"tree/sub/vendor/b.sh"}),  # relative to the given directory (as before)
    ("sub", {"tree/sub/vendor/b.sh", "tree/sub/gen_c.sh"}),
])
def test_exclude_from_the_command_line(project, pattern, excluded):
    pattern = pattern.replace("ABS", str(project))
    proc = run_cli(*CORE, "--exclude", pattern, "tree", cwd=project)
    assert proc.returncode == 0, proc.stderr
    assert migrated(project) == ALL - excluded


def test_exclude_in_pyproject_is_relative_to_its_directory(project, tmp_path):
    (project / "pyproject.toml").write_text('[tool.verl-migrate]\nexclude = ["tree/vendor", "**/gen_*.sh"]\n')
    proc = run_cli(*CORE, project / "tree", cwd=tmp_path)  # run from elsewhere
    assert proc.returncode == 0, proc.stderr
    assert migrated(project) == ALL - {"tree/vendor/a.sh", "tree/sub/gen_c.sh"}


def test_lint_exclude_is_relative_to_the_current_directory(project):
    (project / "tree" / "vendor" / "a.sh").write_text("if true; then\n")  # VM001
    flagged = run_cli("lint", "--select", "VM001", "tree", cwd=project)
    assert flagged.returncode == 1 and "VM001" in flagged.stderr
    for pattern in ("tree/vendor", "./tree/vendor", "**/vendor", str(project / "tree" / "vendor")):
        proc = run_cli("lint", "--select", "VM001", "--exclude", pattern, "tree", cwd=project)
        assert proc.returncode == 0, (pattern, proc.stdout)


def test_config_sets_from_auto_output_format_colour_and_code_selection(tmp_path):
    """`from = "auto"`, `output-format = "github"`, `color` and `select`/`ignore` are read like their flags."""
    (tmp_path / "run.sh").write_text("python3 -m verl.trainer.main_ppo \\\n"
                                     "    +actor_rollout_ref.rollout.engine_kwargs.vllm.enable_expert_parallel=True \\\n"
                                     "    actor_rollout_ref.rollout.update_weights_bucket_megabytes=512\n")
    plain = run_cli("--check", "--to", "v0.9.0", tmp_path / "run.sh", cwd=tmp_path)
    # A warn-only key Hydra accepts (the `+` adds it under a free-form dict): a finding to ignore.
    assert "VM112" in plain.stderr
    (tmp_path / "pyproject.toml").write_text('[tool.verl-migrate]\nfrom = "auto"\n"output-format" = "github"\n'
                                             'color = "never"\nignore = ["VM1"]\n')
    proc = run_cli("--check", "--to", "v0.9.0", tmp_path / "run.sh", cwd=tmp_path)
    assert proc.returncode in (0, 1), proc.stderr
    assert "note: scripts look written for verl" in proc.stderr
    assert "\x1b[" not in proc.stdout + proc.stderr
    annotations = [line for line in proc.stdout.splitlines() if line.startswith("::")]
    assert not [line for line in annotations if "title=VM1" in line]


# -- clear errors, never tracebacks -------------------------------------------------------------

@pytest.mark.parametrize("tool, shown", [('"x"', "str 'x'"), ("1", "int 1"), ("[1]", "list [1]")])
def test_a_tool_key_that_is_no_table_is_a_clear_error(tmp_path, tool, shown):
    (tmp_path / "pyproject.toml").write_text(f"tool = {tool}\n")
    (tmp_path / "run.sh").write_bytes(OLD_SCRIPT.read_bytes())
    for command in ([], ["--check"], ["lint"]):
        proc = run_cli(*command, tmp_path / "run.sh", cwd=tmp_path)
        assert proc.returncode == 2, proc.stderr
        assert "Traceback" not in proc.stderr
        assert proc.stderr.splitlines()[0] == (f"error: {tmp_path / 'pyproject.toml'}:1: `tool` must be a table "
                                               f"([tool.verl-migrate] lives in it), not {shown}")
    assert (tmp_path / "run.sh").read_bytes() == OLD_SCRIPT.read_bytes()


@pytest.mark.parametrize("glob, why", [("[!]", "a `[...]` in it holds no character"),
                                       ("[^]", "a `[...]` in it holds no character"),
                                       ("[z-a]x", "bad character range z-a")])
def test_an_exclude_glob_that_is_no_glob_is_a_clear_error(tmp_path, glob, why):
    (tmp_path / "run.sh").write_bytes(OLD_SCRIPT.read_bytes())
    for command in ([], ["lint"]):
        proc = run_cli(*command, "--exclude", glob, tmp_path, cwd=tmp_path)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
        assert f"error: --exclude {glob!r} is not a glob verl-migrate can read: {why}" in proc.stderr
    (tmp_path / "pyproject.toml").write_text(f"[tool.verl-migrate]\nexclude = [{glob!r}]\n")
    for command in ([], ["lint"]):
        proc = run_cli(*command, tmp_path, cwd=tmp_path)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
        assert (f"error: {tmp_path / 'pyproject.toml'}:2: [tool.verl-migrate] exclude: {glob!r} is not a glob "
                f"verl-migrate can read: {why}") in proc.stderr
    assert (tmp_path / "run.sh").read_bytes() == OLD_SCRIPT.read_bytes()
