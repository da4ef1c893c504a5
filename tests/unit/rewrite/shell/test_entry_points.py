"""Entry points other than main_ppo: golden scripts per entry point and launch form, migrated to v0.9.0
with the built-in tables (tests/fixtures/entry/NAME.RELEASE.in.sh -> .out.sh, .findings), and the
scope rules they rely on."""

from __future__ import annotations

import shutil
import subprocess
from functools import lru_cache

import pytest

from migrator.fileprocess import process_file
from migrator.mapping import compose
from migrator.mapping.load import load_builtin
from migrator.rewrite.shell.entrypoint import find_launch, module_of_path
from tests.helpers import FIXTURES

DIR = FIXTURES / "entry"
CASES = sorted(p.name[: -len(".in.sh")] for p in DIR.glob("*.in.sh"))
TARGET = "v0.9.0"


@lru_cache(maxsize=None)
def mappings(from_release: str, to_release: str = TARGET):
    return compose(load_builtin(), from_release, to_release)


def _findings(result) -> list[str]:
    return [f"{f.line}:{f.col}: {f.severity}: {f.message}" + (f" ({f.hint})" if f.hint else "")
            for f in result.findings]


@pytest.mark.parametrize("name", CASES)
def test_golden(name):
    src = DIR / f"{name}.in.sh"
    result = process_file(str(src), src.name, mappings(name.split(".", 1)[1]))
    assert result.status == "changed", result.reason
    assert result.after == (DIR / f"{name}.out.sh").read_bytes()
    assert _findings(result) == (DIR / f"{name}.findings").read_text(encoding="utf-8").splitlines()


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
@pytest.mark.parametrize("name", CASES)
def test_golden_output_passes_bash_n(name):
    proc = subprocess.run(["bash", "-n", str(DIR / f"{name}.out.sh")], capture_output=True)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize(("words", "module", "form"), [
    ("python -m verl.trainer.main_ppo a=1", "verl.trainer.main_ppo", "module"),
    ("python3 -m verl.trainer.fsdp_sft_trainer", "verl.trainer.fsdp_sft_trainer", "module"),
    ("/usr/bin/python3.10 -u -m verl.trainer.main_eval", "verl.trainer.main_eval", "module"),
    ("torchrun --standalone --nproc_per_node=8 -m verl.trainer.fsdp_sft_trainer x=1", "verl.trainer.fsdp_sft_trainer", "module"),
    ("python -m torch.distributed.run --nproc_per_node 2 -m verl.trainer.sft_trainer", "verl.trainer.sft_trainer", "module"),
    ("python3 verl/trainer/main_generation.py data.path=x", "verl.trainer.main_generation", "path"),
    ("python3 $HOME/verl/verl/trainer/main_ppo.py", "verl.trainer.main_ppo", "path"),
    ("ray job submit --address=x -- python3 -m verl.trainer.main_ppo_sync", "verl.trainer.main_ppo_sync", "module"),
    ("CUDA_VISIBLE_DEVICES=0 python3 -m recipe.dapo.main_dapo", "recipe.dapo.main_dapo", "module"),
])
def test_launch_forms(words, module, form):
    launch = find_launch(words.encode().split())
    assert launch is not None and (launch.module, launch.form) == (module, form)


@pytest.mark.parametrize("words", ["bash run.sh -m x.y", "echo -m verl.trainer.main_ppo", "python script.py", "ls -l"])
def test_not_a_launch(words):
    assert find_launch(words.encode().split()) is None


def test_module_of_path_keeps_the_checkout_prefix():
    assert module_of_path(b"/opt/verl/recipe/dapo/main_dapo.py") == ("recipe.dapo.main_dapo", len(b"/opt/verl/"))


def test_evaluation_keeps_top_level_custom_reward_function():
    maps = mappings("v0.6.0")
    evaluation = maps.context("verl.trainer.main_eval")
    assert evaluation.config == "evaluation"
    assert maps.key("custom_reward_function.path", evaluation) is None
    assert maps.key("custom_reward_function.path").new == "reward.custom_reward_function.path"


def test_ray_init_moves_for_generation_and_evaluation_too():
    maps = mappings("v0.5.0")
    for module in ("verl.trainer.main_eval", "verl.trainer.main_ppo"):
        assert maps.key("ray_init.num_cpus", maps.context(module)).new == "ray_kwargs.ray_init.num_cpus"


def test_sft_key_renames_chain_into_the_entry_point_move():
    maps = mappings("v0.6.0")
    sft = maps.context("verl.trainer.fsdp_sft_trainer")
    assert maps.key("optim.warmup_steps_ratio", sft).new == "optim.lr_warmup_steps_ratio"
    # main_ppo has no such key: the SFT-scoped entry does not apply there
    assert maps.key("optim.warmup_steps_ratio") is None
    assert maps.key("model.partial_pretrain", sft).new == "model.path"
    unknown = maps.key("data.no_such_key", sft)
    assert unknown.action == "warn" and "sft_trainer_engine" in unknown.hint


def test_scoped_entries_do_not_apply_to_main_ppo():
    maps = mappings("v0.6.0")
    assert maps.key("model.partial_pretrain") is None
    assert maps.key("data.n_samples") is None


def test_entry_point_move_lists_pins_and_args():
    change = mappings("v0.7.0").entry_point("verl.trainer.fsdp_sft_trainer")
    assert change.new == "verl.trainer.sft_trainer" and change.prs == (5382,)
    pinned = {p.key: p.old for p in change.pins if p.pin}
    assert pinned["optim.lr"] == "1e-05" and "model.use_remove_padding" not in pinned
    assert mappings("v0.8.0").entry_point("verl.trainer.main_ppo_sync").args == (
        "trainer.use_v1=true", "trainer.v1.trainer_mode=sync")
    # A script older than the --from it is migrated with: its entry point was gone there, and moves anyway.
    assert mappings("v0.9.0", "main").entry_point("verl.trainer.fsdp_sft_trainer").new == "verl.trainer.sft_trainer"
    assert mappings("v0.9.0", "main").entry_point("verl.trainer.sft_trainer") is None


def test_python_in_a_directory_variable_is_a_launch():
    assert find_launch([b"${CONDA_BIN}python", b"-m", b"verl.trainer.main_generation"]).module == \
        "verl.trainer.main_generation"


def _lint(source: str, from_release: str = "v0.4.1"):
    from migrator.lint.facts import load_facts
    from migrator.lint.runner import lint_source

    return lint_source(source.encode(), "run.sh", load_facts(), mappings(from_release), TARGET).findings


def test_lint_names_the_entry_point_move():
    findings = _lint("torchrun -m verl.trainer.fsdp_sft_trainer model.partial_pretrain=Q\n")
    assert [(f.code, "verl.trainer.sft_trainer" in (f.hint or "")) for f in findings] == [("VM006", True)]


def test_lint_judges_sft_trainer_keys_against_its_own_config():
    findings = _lint("torchrun -m verl.trainer.sft_trainer model.path=Q engine.strategy=fsdp2 data.bogus=1\n")
    # Hydra's own verdict (VM007) against sft_trainer_engine; the valid keys of that config pass.
    assert [(f.code, f.key) for f in findings] == [("VM007", "data.bogus")]


def test_lint_keeps_evaluations_top_level_custom_reward_function():
    assert _lint("python3 -m verl.trainer.main_eval data.path=x custom_reward_function.path=r.py\n") == []


def test_release_notes_list_entry_point_moves_with_their_key_remaps():
    from migrator import release_notes

    guide = release_notes.build_guide(mappings("v0.7.0", "v0.7.1"))
    sft = next(r for r in guide.rows["entry_points"] if r["old"] == "verl.trainer.fsdp_sft_trainer")
    assert sft["new"] == "verl.trainer.sft_trainer" and "optim.lr=1e-05" in sft["pins"]
    assert {"old": "model.partial_pretrain", "new": "model.path", "guidance": ""} in sft["keys"]
    text = release_notes.render(guide, "md")
    assert "## Moved and removed entry points" in text and "### Keys of verl.trainer.main_generation" in text


def test_moved_entry_points_get_no_shim_and_say_why():
    from migrator.shims.plan import plan_shims

    plan = plan_shims(mappings("v0.7.0"), load_builtin().releases)
    # No stub forwards to the new entry point (its keys changed); the module's removal (a Python API
    # entry) gets the stub that raises ImportError naming the successor and the migration command.
    stubs = [f for f in plan.files if "fsdp_sft_trainer" in f.relpath]
    assert stubs and all(b"raise ImportError(" in f.content and b"verl.trainer.sft_trainer" in f.content
                         and b"verl-migrate --to" in f.content for f in stubs)
    assert not [f for f in plan.files if f.new == "verl.trainer.sft_trainer"]
    assert any(n.startswith("entry point verl.trainer.fsdp_sft_trainer: moved to verl.trainer.sft_trainer: no stub")
               for n in plan.notes)


def test_yaml_config_extending_sft_trainer_is_judged_as_sft():
    from migrator.rewrite.yaml import locate

    source = (b"defaults:\n  - sft_trainer\n  - _self_\nmodel:\n  partial_pretrain: Q\noptim:\n"
              b"  warmup_steps_ratio: 0.05\ndata:\n  prompt_key: question\n")
    result = locate(source, mappings("v0.6.0"))
    renamed = sorted(e.message for e in result.edits if e.kind == "key-rename")
    assert renamed == ["model.partial_pretrain -> model.path", "optim.warmup_steps_ratio -> optim.lr_warmup_steps_ratio"]
    keys = [f for f in result.findings if f.kind != "config-name-move"]
    assert [f.message.split(":")[0] for f in keys] == ["data.prompt_key"]  # kept, with its hint
    # No hydra.searchpath to verl's configs: `- sft_trainer` may be the user's own file, so its rename is reported.
    assert [(f.severity, f.message.split(";")[0]) for f in result.findings if f.kind == "config-name-move"] == \
        [("info", "verl's config sft_trainer is now sft_trainer_engine")]


def test_yaml_without_defaults_is_main_ppos():
    from migrator.rewrite.yaml import locate

    assert locate(b"model:\n  partial_pretrain: Q\n", mappings("v0.6.0")).edits == ()


def test_markdown_code_block_runs_its_own_entry_point():
    from migrator.fileprocess import apply_edits
    from migrator.rewrite import markdown

    source = (b"```bash\ntorchrun -m verl.trainer.fsdp_sft_trainer model.partial_pretrain=Q optim.lr=1e-5 "
              b"optim.betas=[0.9,0.95] optim.lr_scheduler=cosine model.strategy=fsdp2 "
              b"optim.warmup_steps_ratio=0.1\n```\n")
    after, _, rejected = apply_edits(source, list(markdown.locate(source, mappings("v0.6.0")).edits))
    assert not rejected
    assert after == (b"```bash\ntorchrun -m verl.trainer.sft_trainer model.path=Q optim.lr=1e-5 "
                     b"optim.betas=[0.9,0.95] optim.lr_scheduler_type=cosine engine.strategy=fsdp2 "
                     b"optim.lr_warmup_steps_ratio=0.1\n```\n")


def _migrated(source: str, from_release: str = "v0.7.0") -> str:
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "run.sh"
        path.write_text(source)
        result = process_file(str(path), "run.sh", mappings(from_release))
        assert result.status == "changed", result.reason
        return result.after.decode()


@pytest.mark.parametrize("caller", ['"$@"', "$@", '"${@}"', "$*"])
def test_pins_go_before_a_mid_command_list_of_the_callers_overrides(caller):
    # Hydra lets the last value win: a pin after the caller's overrides would overrule `bash run.sh optim.lr=1e-4`.
    after = _migrated("torchrun -m verl.trainer.fsdp_sft_trainer \\\n"
                      "    model.partial_pretrain=Q \\\n"
                      f"    {caller} \\\n"
                      "    trainer.total_epochs=2\n")
    head, tail = after.split(caller, 1)
    assert "optim.lr=1e-05" in head and "optim.lr" not in tail
    assert tail == " \\\n    trainer.total_epochs=2\n"
    assert f"    engine.strategy=fsdp2 \\\n    {caller} \\\n" in after  # one argument a line, as written
    assert subprocess.run(["bash", "-n"], input=after.encode()).returncode == 0


def test_pins_go_before_the_callers_overrides_on_one_line():
    after = _migrated('torchrun -m verl.trainer.fsdp_sft_trainer model.partial_pretrain=Q "$@" trainer.total_epochs=2\n')
    assert after.startswith("torchrun -m verl.trainer.sft_trainer model.path=Q ")
    assert after.endswith(' engine.strategy=fsdp2 "$@" trainer.total_epochs=2\n')


@pytest.mark.parametrize("array", ['"${EXTRA_ARGS[@]}"', "${ARGS[*]}"])
def test_nothing_is_inserted_after_an_array_that_may_hold_overrides(array):
    source = f"torchrun -m verl.trainer.fsdp_sft_trainer model.partial_pretrain=Q {array} trainer.total_epochs=2\n"
    with_array = _migrated(source)
    assert with_array.split(array, 1)[1] == " trainer.total_epochs=2\n"
    # Quoted, the array the script does not fill itself is a blocker (each pin a finding); bare, the pins
    # go before it, as before a bare `$EXTRA`: what it carries still wins.
    assert ("optim.lr=" in with_array) == (not array.startswith('"'))
    # Filled with literal text by the script, the array's keys are seen and hold no caller's: pinned.
    filled = _migrated(f"EXTRA_ARGS=(a=1)\nARGS=(b=2)\n{source}")
    assert "optim.lr=1e-05" in filled
