"""VM007 in `verl-migrate lint`: which commands are judged, which overrides they pass (arrays, strings,
`"$@"`), and what the findings say. Real shipped configs, real Hydra."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

import pytest

from migrator.lint.facts import load_facts
from migrator.lint.runner import lint_source
from migrator.mapping import compose, load_builtin
from tests.helpers import HANG_GUARD
from tests.helpers.launches import MICRO_BATCHES

REV = "v0.9.0"


@pytest.fixture(autouse=True, scope="module")
def fresh_verdicts():
    """Verdicts computed now, by Hydra, not read back from a previous run's cache."""
    judge_module = importlib.import_module("migrator.verdict.judge")  # the package exports a function of that name
    from migrator.verdict.memo import DiskTable

    table = DiskTable("verdicts-test")
    table._table = {}  # in memory only
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(judge_module, "VERDICTS", table)
        yield


@pytest.fixture(scope="module")
def mappings():
    return compose(load_builtin(), None, REV, [])


def run(mappings, src: str, rev: str = REV):
    report = lint_source(src.encode(), "run.sh", load_facts(), mappings, rev)
    return report, [f for f in report.findings if f.code == "VM007"]


def keys(findings):
    return [f.key for f in findings]


def test_arrays_strings_and_dollar_at(mappings):
    src = ("ENGINE=megatron\n"
           "DATA=(data.train_batch_size=8 data.no_such=1)\n"
           "ACTOR=(actor_rollout_ref.actor.megatron.tensor_model_parallel_size=2)\n"
           "ACTOR+=(\"actor_rollout_ref.actor.optim.no_such=$LR\")\n"
           "EXTRA=\"trainer.nnodes=1 trainer.no_such=1 model_engine=${ENGINE}\"\n"
           "python3 -m verl.trainer.main_ppo \"${DATA[@]}\" \"${ACTOR[@]}\" $EXTRA \"$@\"\n")
    report, found = run(mappings, src)
    assert keys(found) == ["data.no_such", "actor_rollout_ref.actor.optim.no_such", "trainer.no_such"]
    assert [(f.line, f.col) for f in found] == [(2, 31), (4, 10), (5, 25)]
    assert found[1].override == 'actor_rollout_ref.actor.optim.no_such=$LR'
    assert any('"$@" are not judged' in note for note in report.notes)


def test_a_command_string_the_script_runs_is_judged_with_the_variables_it_expands(mappings):
    """`CMD="python3 -m verl... ${BASE} k=v"` run by `eval`: the words eval sees, through two rounds of
    quoting (`'\\"${M}\\"'` reaches Hydra as `"m"`, which it accepts)."""
    src = ('BASE="\\\n  actor_rollout_ref.actor.fsdp_config.grad_offload=False \\\n  actor_rollout_ref.rollout.name=vllm"\n'
           'M=Qwen2.5-7B\n'
           'CMD="python3 -m verl.trainer.main_ppo ${BASE} trainer.no_such=1 actor_rollout_ref.model.path=\'\\"${M}\\"\' $@"\n'
           'echo "$CMD"\n'
           'eval ${CMD}\n')
    report, found = run(mappings, src)
    assert keys(found) == ["actor_rollout_ref.actor.fsdp_config.grad_offload", "trainer.no_such"]
    assert [f.line for f in found] == [2, 5]
    assert any('"$@" are not judged' in note for note in report.notes)


@pytest.mark.parametrize("run_it", ['bash -c "$CMD"', "$CMD", 'eval "$CMD 2>&1 | tee log.txt"'])
def test_each_way_of_running_a_command_string(mappings, run_it):
    _, found = run(mappings, f'CMD="python3 -m verl.trainer.main_ppo trainer.no_such=1"\n{run_it}\n')
    assert keys(found) == ["trainer.no_such"]


@pytest.mark.parametrize("src", [
    'CMD="python3 -m verl.trainer.main_ppo trainer.no_such=1"\necho "$CMD"\nprintf "%s\\n" $CMD\n',
    'CMD="python3 -m verl.trainer.main_ppo trainer.no_such=1"\n',
    'HELP="run python3 train.py with trainer.no_such=1"\neval "$HELP"\n',
])
def test_a_command_string_no_one_runs_or_with_no_verl_launch_is_not_judged(mappings, src):
    assert run(mappings, src)[1] == []


def test_a_string_eval_and_bash_c_run_directly(mappings):
    src = ("eval \"python3 -m verl.trainer.main_ppo trainer.no_such=1\"\n"
           "bash -c 'python3 -m verl.trainer.main_ppo trainer.no_such2=1'\n")
    assert keys(run(mappings, src)[1]) == ["trainer.no_such", "trainer.no_such2"]


def test_finding_carries_key_override_hydras_message_and_severity(mappings):
    _, (f,) = run(mappings, "python3 -m verl.trainer.main_ppo +trainer.nnodes=2\n")
    assert (f.key, f.override, f.severity) == ("trainer.nnodes", "+trainer.nnodes=2", "error")
    assert f.message.startswith("Hydra rejects `+trainer.nnodes=2`: Could not append to config.")
    assert f.as_dict()["key"] == "trainer.nnodes" and f.as_dict()["override"] == "+trainer.nnodes=2"


def test_table_hint_for_a_removed_key(mappings):
    _, (f,) = run(mappings, "python3 -m verl.trainer.main_ppo trainer.use_legacy_worker_impl=disable\n")
    assert "Could not override 'trainer.use_legacy_worker_impl'" in f.message
    assert "legacy" in f.hint  # the table's hint, not a guess


@pytest.mark.parametrize("launcher", [
    "python -m verl.trainer.main_ppo",
    "python3 verl/trainer/main_ppo.py",
    "python3 $VERL_HOME/verl/trainer/main_ppo.py",
    "torchrun --nproc_per_node=8 -m verl.trainer.main_ppo",
    "python -m torch.distributed.run --nproc_per_node=8 -m verl.trainer.main_ppo",
    "ray job submit --address=x -- python3 -m verl.trainer.main_ppo",
])
def test_launchers(mappings, launcher):
    _, found = run(mappings, f"{launcher} trainer.nnodes=1 trainer.no_such=1\n")
    assert keys(found) == ["trainer.no_such"]


def test_config_name_and_path_into_verls_tree(mappings):
    src = ("python3 -m verl.trainer.main_ppo --config-path=config --config-name='ppo_trainer.yaml' \\\n"
           "    trainer.nnodes=2 trainer.no_such=1\n")
    _, found = run(mappings, src)
    assert keys(found) == ["trainer.no_such"]
    report, found = run(mappings, "python3 -m verl.trainer.main_ppo --config-path=/my/configs --config-name=x "
                                  "trainer.no_such=1\n")
    assert found == [] and any("not one of verl's config directories" in n for n in report.notes)


def test_other_entry_points(mappings):
    _, found = run(mappings, "torchrun -m verl.trainer.sft_trainer engine=megatron "
                             "engine.tensor_model_parallel_size=2 model.partial_pretrain=x\n")
    assert keys(found) == ["model.partial_pretrain"]
    _, found = run(mappings, "python3 -m verl.trainer.fsdp_sft_trainer model.partial_pretrain=x\n", "v0.6.1")
    assert found == []


def test_unknown_entry_point_is_named_once_and_not_judged(mappings):
    report, found = run(mappings, "python3 -m mypkg.main trainer.no_such=1\npython3 -m mypkg.main a.b=1\n")
    assert found == []
    assert [n for n in report.notes if "mypkg.main" in n] == [
        "`mypkg.main` is not a verl entry point: its overrides are not judged"]


def test_exclusive_branches_are_not_combined(mappings):
    src = ("EXTRA=()\n"
           "if [ \"$X\" = a ]; then\n    EXTRA+=(+trainer.my_flag=1)\n"
           "else\n    EXTRA+=(+trainer.my_flag=2)\nfi\n"
           "python3 -m verl.trainer.main_ppo \"${EXTRA[@]}\"\n")
    assert run(mappings, src)[1] == []
    both = src.replace("else\n", "fi\nif true; then\n")  # two `if`s: both can run, the second `+` fails
    assert keys(run(mappings, both)[1]) == ["trainer.my_flag"]


def test_shell_values_are_placeholders(mappings):
    src = ("python3 -m verl.trainer.main_ppo data.train_files=~/data/train.parquet trainer.nnodes=$(nproc) "
           "trainer.logger=\"${LOGGERS[@]}\" \"trainer.$KEY=1\" trainer.no_such=$(nproc)\n")
    _, found = run(mappings, src)
    assert keys(found) == ["trainer.no_such"]
    assert "verl_migrate_shell_value" not in found[0].message and "$(nproc)" in found[0].message


def test_broken_override_syntax_is_a_finding(mappings):
    _, (f,) = run(mappings, "python3 -m verl.trainer.main_ppo 'data.train_batch_size=[1,2'\n")
    assert f.override == "data.train_batch_size=[1,2" or f.override.startswith("data.train_batch_size=")
    assert f.severity == "error"


def test_cli_json(tmp_path):
    script = tmp_path / "run.sh"
    script.write_text(f"#!/bin/bash\npython3 -m verl.trainer.main_ppo {MICRO_BATCHES} actor_rollout_ref.rollout.name=vllm "
                      "trainer.nnodes=1 \\\n"
                      "    actor_rollout_ref.rollout.temprature=1.0\n")
    proc = subprocess.run([sys.executable, "-m", "migrator", "lint", "--to", REV, "--output-format", "json",
                           str(script)], capture_output=True, text=True, timeout=HANG_GUARD)
    assert proc.returncode == 1, proc.stderr
    (finding,) = json.loads(proc.stdout)
    assert finding["code"] == "VM007" and finding["severity"] == "error" and (finding["line"], finding["col"]) == (3, 5)
    assert finding["key"] == "actor_rollout_ref.rollout.temprature"
    assert finding["override"] == "actor_rollout_ref.rollout.temprature=1.0"
    assert finding["hint"] == "did you mean `actor_rollout_ref.rollout.temperature`?"


def test_accepted_but_ineffective_stays_a_vm004_warning(mappings):
    key = "actor_rollout_ref.rollout.engine_kwargs.vllm.enable_expert_parallel"
    report, found = run(mappings, f"python3 -m verl.trainer.main_ppo {MICRO_BATCHES} actor_rollout_ref.rollout.name=vllm "
                                  f"+{key}=True\n")
    assert found == []  # Hydra accepts the `+` addition under the free-form dict
    (f,) = report.findings
    assert (f.code, f.severity, f.key, f.override) == ("VM112", "warning", key, f"+{key}=True")


def test_a_key_the_target_still_reads_gets_no_finding(mappings):
    # data.val_batch_size is deprecated but read in v0.9.0 (the validation batch size): the tables keep it
    # (key-no-action) and lint says nothing, one verdict for the key in both commands.
    report, found = run(mappings, f"python3 -m verl.trainer.main_ppo {MICRO_BATCHES} actor_rollout_ref.rollout.name=vllm "
                                  "data.val_batch_size=8\n")
    assert found == [] and report.findings == []


def test_entry_point_gone_at_the_target(mappings):
    # verl's own module: VM006 reports it, VM007 only notes why its overrides went unjudged.
    report, found = run(mappings, "torchrun -m verl.trainer.fsdp_sft_trainer model.partial_pretrain=x\n")
    assert found == [] and [f.code for f in report.findings] == ["VM006"]
    # A recipe (a git submodule from v0.7.1, which VM006 does not judge): VM007 says it.
    report, found = run(mappings, "python3 -m recipe.dapo.main_dapo trainer.nnodes=1\n")
    assert [f.message for f in found] == ["`recipe.dapo.main_dapo` is not in verl v0.9.0 (it was a Hydra entry point "
                                          "up to v0.7.0): its overrides are not judged"]


def test_a_group_choice_at_run_time_leaves_the_keys_to_vm003(mappings):
    report, found = run(mappings, "python3 -m verl.trainer.main_ppo model_engine=$ENGINE trainer.no_such_key=1\n")
    assert found == [] and any("chooses a config at run time" in n for n in report.notes)
    # Not marked judged: VM003 takes its turn (and says why it cannot either).
    assert any(n.startswith("keys not checked: model_engine=$ENGINE") for n in report.notes)


def test_a_script_beside_its_entry_point(mappings):
    src = b"python3 main_ppo_split.py trainer.nnodes=1 trainer.no_such=1\n"
    report = lint_source(src, "examples/split_placement/run_deepseek7b_llm.sh", load_facts(), mappings, "v0.6.1")
    assert [f.key for f in report.findings if f.code == "VM007"] == ["trainer.no_such"]


def test_workers_lint_like_one_process(mappings, tmp_path):
    """`-j N` splits the scripts over worker processes: the same findings, notes and order as one process."""
    from migrator.lint.runner import LintWork, lint_paths

    scripts = 2 * LintWork.chunk + 3  # three chunks: more than one worker
    assert scripts + 1 >= LintWork.serial_below, "too few files for the pool: nothing tested"
    for n in range(scripts):
        (tmp_path / f"run_{n:02d}.sh").write_text(
            "python3 -m verl.trainer.main_ppo \\\n"
            f"    trainer.nnodes={n} \\\n"
            f"    actor_rollout_ref.actor.no_such_key_{n % 4}=1 \\\n"
            f"    +trainer.total_epochs=3 $UNSET_{n}\n")
    (tmp_path / "notes.md").write_text("not a script\n")

    def reports(jobs):
        return [(r.path, r.skipped, r.findings, r.notes)
                for r in lint_paths([str(tmp_path)], load_facts(), mappings, REV, jobs=jobs)]

    serial = reports(1)
    assert sum(len(findings) for _, _, findings, _ in serial) >= 2 * scripts
    assert reports(2) == serial
