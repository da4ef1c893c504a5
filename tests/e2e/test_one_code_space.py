"""One code space through the CLI: `select`/`ignore` take every code in both commands, from flags and from
`[tool.verl-migrate]`; one problem gets one code whichever command finds it; the retired and former codes
still answer in selections and suppression comments (docs/codes.md)."""

from __future__ import annotations

import json

import pytest

from tests.helpers import run_cli

# A removed script (path-removal, v0.4.0), a warn-only key (verl#136) and a removed module (v0.6.0).
SCRIPT = ("#!/bin/bash\n"
          "bash examples/ppo_trainer/run_qwen2-7b_megatron.sh\n"
          "python3 -m verl.trainer.main_ppo actor_rollout_ref.rollout.name=vllm "
          "actor_rollout_ref.actor.ppo_micro_batch_size=8 trainer.project_name=$name\n")
MODULE = "import verl.models.transformers.qwen2_5_vl\n"


@pytest.fixture
def project(tmp_path):
    (tmp_path / "run.sh").write_text(SCRIPT)
    (tmp_path / "user.py").write_text(MODULE)
    return tmp_path


def rewrite_codes(project, *args):
    proc = run_cli("--check", "--to", "v0.9.0", "--output-format", "json", *args, ".", cwd=project)
    assert proc.returncode in (0, 1), proc.stderr
    report = json.loads(proc.stdout)
    return {(f["path"].removeprefix("./"), f["line"], f["code"]) for row in report["files"] for f in row["findings"]}


def lint_codes(project, *args):
    proc = run_cli("lint", "--to", "v0.9.0", "--output-format", "json", *args, ".", cwd=project)
    assert proc.returncode in (0, 1), proc.stderr
    return {(f["path"], f["line"], f["code"]) for f in json.loads(proc.stdout)}


def test_one_problem_one_code_whichever_command_finds_it(project):
    same = {("run.sh", 2, "VM101"), ("run.sh", 3, "VM112"), ("user.py", 1, "VM121")}
    assert same <= rewrite_codes(project)
    assert same <= lint_codes(project)


def test_a_lint_code_in_pyproject_does_not_break_the_rewrite_and_the_lint_honours_it(project):
    (project / "pyproject.toml").write_text('[project]\nname = "demo"\n\n[tool.verl-migrate]\nto = "v0.9.0"\n'
                                            'ignore = ["VM005", "VM020"]\n')
    proc = run_cli("--check", ".", cwd=project)
    # exit 1: manual actions remain (the --check contract); never 2, a usage error
    assert proc.returncode == 1 and "unknown code" not in proc.stderr, proc.stderr
    linted = lint_codes(project)
    assert ("run.sh", 3, "VM005") not in linted and not any(code == "VM020" for *_, code in linted)
    assert ("run.sh", 2, "VM101") in linted
    # Flags and config add up, and an ignore as long as the select wins (ruff's rule).
    assert lint_codes(project, "--select", "VM005") == set()


def test_an_unknown_code_in_pyproject_names_the_file_and_line_in_both_commands(project):
    (project / "pyproject.toml").write_text('[tool.verl-migrate]\nselect = ["VM1"]\nignore = [\n  "VM999",\n]\n')
    for command in ([], ["lint"]):
        proc = run_cli(*command, "--check" if not command else "--to=v0.9.0", ".", cwd=project)
        assert proc.returncode == 2
        assert f"error: {project / 'pyproject.toml'}:3: [tool.verl-migrate] ignore: unknown code(s) VM999" \
            in proc.stderr
        assert "Traceback" not in proc.stderr
    (project / "pyproject.toml").unlink()
    proc = run_cli("lint", "--select", "VM0O1", ".", cwd=project)  # a typo in a flag: exit 2 too
    assert proc.returncode == 2 and "unknown code(s) VM0O1" in proc.stderr


def test_old_codes_still_select_and_suppress(project):
    # VM004 was the lint's code for a warn-only key: retired, it names VM112 in both commands.
    assert not any(code == "VM112" for *_, code in lint_codes(project, "--ignore", "VM004"))
    assert not any(code == "VM112" for *_, code in rewrite_codes(project, "--ignore", "VM004"))
    # The lint's former codes of a removed script (VM006) and a removed module (VM123) still answer in lint.
    linted = lint_codes(project, "--ignore", "VM006,VM123")
    assert not {("run.sh", 2, "VM101"), ("user.py", 1, "VM121")} & linted
    assert ("run.sh", 2, "VM101") in lint_codes(project, "--select", "VM00")
    # ... and in suppression comments, either spelling.
    (project / "run.sh").write_text(SCRIPT.replace("megatron.sh\n", "megatron.sh  # verl-migrate: ignore[VM006]\n")
                                    .replace("=$name\n", "=$name  # verl-migrate: ignore VM004\n"))
    (project / "user.py").write_text(MODULE.rstrip("\n") + "  # verl-migrate: ignore VM123\n")
    assert not {code for *_, code in lint_codes(project)} & {"VM101", "VM112", "VM121"}


def test_an_open_manual_step_has_the_markers_code_in_both_commands(tmp_path):
    """A marker an earlier migration left (`# verl-migrate: VM111 removed ...`): the rewrite reported it as
    VM111 and the lint as VM009; now both say VM111, and VM009 still selects and silences it in lint."""
    (tmp_path / "sft.sh").write_text(
        "#!/bin/bash\n# verl-migrate: VM111 removed data.prompt_key (verl #5382): convert the parquet to messages\n"
        "torchrun --nproc_per_node=8 -m verl.trainer.sft_trainer data.train_files=x.parquet\n")
    assert ("sft.sh", 2, "VM111") in rewrite_codes(tmp_path)
    assert ("sft.sh", 2, "VM111") in lint_codes(tmp_path)
    assert ("sft.sh", 2, "VM111") in lint_codes(tmp_path, "--select", "VM009")
    assert ("sft.sh", 2, "VM111") not in lint_codes(tmp_path, "--ignore", "VM009")
