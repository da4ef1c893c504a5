"""Python rewriter: short before/after cases (django-upgrade style) and its validation."""

from __future__ import annotations

import pytest

from migrator.rewrite import python as py_rewriter
from tests.helpers.rewrite import check_noop, check_transformed, run

BUCKET = "actor_rollout_ref.rollout.update_weights_bucket_megabytes"
NEW_BUCKET = "actor_rollout_ref.rollout.checkpoint_engine.update_weights_bucket_megabytes"
# Override strings are renamed where verl's Hydra reads them: in a file that launches verl.
LAUNCH = 'subprocess.run(["python3", "-m", "verl.trainer.main_ppo", *a])\n'


@pytest.mark.parametrize(("before", "after"), [
    ("import verl.utils.npu_utils as nu\n", "import verl.utils.npu_flash_attn_utils as nu\n"),
    ("from recipe.fully_async_policy import main\n", "from verl.experimental.fully_async_policy import main\n"),
    ("from verl.utils import npu_utils\nnpu_utils.f()\n",
     "from verl.utils import npu_flash_attn_utils as npu_utils\nnpu_utils.f()\n"),
    ("from verl.utils import npu_utils as n\n", "from verl.utils import npu_flash_attn_utils as n\n"),
    ("from recipe import fully_async_policy\n", "from verl.experimental import fully_async_policy\n"),
    ("import recipe.fully_async_policy\nrecipe.fully_async_policy.main.go()\n",
     "import verl.experimental.fully_async_policy\nverl.experimental.fully_async_policy.main.go()\n"),
    # `recipe` stays bound by another import: the moved one can be rewritten with its references.
    ("import recipe.other\nimport recipe.fully_async_policy\nrecipe.other.f(recipe.fully_async_policy.g)\n",
     "import recipe.other\nimport verl.experimental.fully_async_policy\n"
     "recipe.other.f(verl.experimental.fully_async_policy.g)\n"),
    ('runpy.run_module("recipe.fully_async_policy.main")\n',
     'runpy.run_module("verl.experimental.fully_async_policy.main")\n'),
    ('subprocess.run(["python", "-m", "recipe.fully_async_policy.main"])\n',
     'subprocess.run(["python", "-m", "verl.experimental.fully_async_policy.main"])\n'),
    ('os.system("python3 -m recipe.fully_async_policy.main x=1")\n',
     'os.system("python3 -m verl.experimental.fully_async_policy.main x=1")\n'),
    (f'a = f"{BUCKET}={{mb}}"\n' + LAUNCH, f'a = f"{NEW_BUCKET}={{mb}}"\n' + LAUNCH),
    (f'a = f"x={{y}} +{BUCKET}={{mb}} ~critic.model.fsdp_config.param_offload"\n' + LAUNCH,
     f'a = f"x={{y}} +{NEW_BUCKET}={{mb}} ~critic.fsdp.param_offload"\n' + LAUNCH),
    (f"a = ['++{BUCKET}=1']\n" + LAUNCH, f"a = ['++{NEW_BUCKET}=1']\n" + LAUNCH),
    ('s = "bash examples/grpo_trainer/run_qwen3_30b_a3b_mindspeed.sh"\n',
     's = "bash examples/ascend_extras/grpo_trainer/run_qwen3_30b_a3b_mindspeed.sh"\n'),
    # Non-ASCII before the span: byte offsets, not character offsets.
    (f'x = "é€😀"; y = "{BUCKET}=1"  # ü {BUCKET}\n' + LAUNCH,
     f'x = "é€😀"; y = "{NEW_BUCKET}=1"  # ü {NEW_BUCKET}\n' + LAUNCH),
    (f'x = "\\n{BUCKET}=1"\n' + LAUNCH, f'x = "\\n{NEW_BUCKET}=1"\n' + LAUNCH),
    ("\ufeffimport verl.utils.npu_utils as nu\n", "\ufeffimport verl.utils.npu_flash_attn_utils as nu\n"),
])
def test_transformed(before, after):
    check_transformed(before, after, "launch.py")


@pytest.mark.parametrize("source", [
    f'ARGS = ["{BUCKET}=512"]\nsubprocess.run(["python3", "my_tool.py", *ARGS])\n',  # a file that launches no verl
    f'HELP = "set {BUCKET}=512 to tune"\n' + LAUNCH,  # prose in a launcher
])
def test_an_override_string_hydra_does_not_read_is_a_manual_step(source):
    """The shell's rule: a rename stands where verl's Hydra reads the text; elsewhere the exact replacement
    is a manual step (VM113), and the next run says it again."""
    result = run(source, "launch.py")
    assert result.status == "unchanged"
    (finding,) = [f for f in result.findings if f.code == "VM113"]
    assert f"write `{NEW_BUCKET}` in its place" in finding.message
    assert run(source, "launch.py").findings == result.findings


def test_an_override_value_hydra_does_not_read_is_a_manual_step_too():
    """A value entry's edit obeys the same rule: prose in a launcher is left, and says what to write."""
    from migrator.cli.common import load_mappings  # the built-in value entry (v0.7.0, #4411): no test table has one
    from migrator.fileprocess import process_file

    builtin = load_mappings("v0.1", "v0.9.0", ())
    prose = 'HELP = "try actor_rollout_ref.rollout.load_format=dummy_dtensor here"\n' + LAUNCH
    result = process_file("launch.py", "launch.py", builtin, data=prose.encode())
    assert result.status == "unchanged"
    (finding,) = [f for f in result.findings if f.code == "VM164"]
    assert "write `dummy` in its place" in finding.message
    read = 'a = ["actor_rollout_ref.rollout.load_format=dummy_dtensor"]\n' + LAUNCH
    assert process_file("launch.py", "launch.py", builtin, data=read.encode()).after == \
        read.replace("dummy_dtensor", "dummy").encode()


@pytest.mark.parametrize(("before", "after"), [
    (f'a = "{BUCKET}=1 trainer.nnodes=1 --flag"\n', f'a = "{NEW_BUCKET}=1 trainer.nnodes=1 --flag"\n'),
    (f'os.system("python3 -m verl.trainer.main_ppo {BUCKET}=1")\n',
     f'os.system("python3 -m verl.trainer.main_ppo {NEW_BUCKET}=1")\n'),
    (f'cmd = "python3 verl/trainer/main_ppo.py {BUCKET}=1"\n', f'cmd = "python3 verl/trainer/main_ppo.py {NEW_BUCKET}=1"\n'),
])
def test_override_strings_of_a_launcher_are_renamed(before, after):
    check_transformed(before + LAUNCH, after + LAUNCH, "launch.py")


# A function whose `cfg` provably is verl's config: composed by `@hydra.main` from verl's own config tree.
VERL_ENTRY = '@hydra.main(config_path="pkg://verl.trainer.config", config_name="ppo_trainer", version_base=None)\n' \
    'def main(cfg):\n'
CONFIG_CHAINS = [
    (f"    x = cfg.{BUCKET}\n", f"    x = cfg.{NEW_BUCKET}\n"),
    ("    x = cfg.critic.model.fsdp_config.param_offload\n", "    x = cfg.critic.fsdp.param_offload\n"),
    ("    x = cfg.critic.model.fsdp_config\n", "    x = cfg.critic.fsdp\n"),
    (f'    x = OmegaConf.select(cfg, "{BUCKET}")\n', f'    x = OmegaConf.select(cfg, "{NEW_BUCKET}")\n'),
]


@pytest.mark.parametrize(("before", "after"), CONFIG_CHAINS)
def test_config_chains_are_renamed_where_the_config_is_verls(before, after):
    check_transformed(VERL_ENTRY + before, VERL_ENTRY + after, "main.py")
    # handed to verl's run_ppo, which reads verl's layout: the program must hold verl's config
    runner = "from verl.trainer.main_ppo import run_ppo\ndef f(cfg):\n"
    check_transformed(runner + before + "    run_ppo(cfg)\n", runner + after + "    run_ppo(cfg)\n", "main.py")


def test_config_chains_elsewhere_are_reported_every_place_with_one_message():
    source = "def f(cfg):\n" + "".join(before for before, _ in CONFIG_CHAINS[:3])
    result = run(source, "helpers.py")
    assert result.status == "unchanged"
    assert [f.line for f in result.findings] == [2, 3, 4]
    by_key = {}
    for finding in result.findings:
        assert finding.severity == "manual" and finding.code == "VM115"
        by_key.setdefault(finding.message, []).append(finding.line)
    assert sorted(by_key.values()) == [[2], [3, 4]]  # critic.model.fsdp_config.* twice: one shared message
    assert any("(2 places in this file: lines 3, 4)" in m for m in by_key)
    # a fork's own config tree, whatever its config is called
    for entry in ('@hydra.main(config_path="conf", config_name="my_trainer")\ndef main(cfg):\n',
                  '@hydra.main(config_path="config", config_name="ppo_trainer")\ndef main(cfg):\n'):
        assert run(entry + CONFIG_CHAINS[0][0], "main.py").status == "unchanged"


@pytest.mark.parametrize("source", [
    f'a = "{BUCKET}_note=1"\n',
    f'a = "x{BUCKET}=1"\n',
    f"a = cfg.{BUCKET}_note\n",
    "import my_recipe.fully_async_policy\n",
    "from mylib.utils import npu_utils\n",
    "from . import npu_utils\n",
    'm = "recipe.fully_async_policy_v2"\n',
    'p = "examples/grpo_trainer/run_qwen3_30b_a3b_mindspeed.sh.bak"\n',
    f'a = "{BUCKET}=1"  # verl-migrate: skip\n',
])
def test_noop(source):
    check_noop(source, "launch.py")


def test_from_import_split_over_two_new_parents():
    check_transformed("from recipe import fully_async_policy, other_recipe\n",
                      "from verl.experimental import fully_async_policy\nfrom recipe import other_recipe\n", "x.py")


def test_from_import_split_that_would_lose_a_comment_is_a_manual_step():
    result = run("from recipe import (fully_async_policy,  # the async one\n    other_recipe)\n", "x.py")
    assert result.status == "unchanged"
    assert [f.kind for f in result.findings] == ["module-move"]
    assert "split this import by hand" in result.findings[0].message


def test_unparsable_python_is_skipped_untouched():
    result = run(f"def f(:\n    '{BUCKET}=1'\n", "x.py")
    assert result.status == "skipped" and "not parsable as Python" in result.reason


def test_validate_rejects_a_result_that_does_not_compile():
    assert py_rewriter.validate(b"x = 1\n", b"x = 1\n") is None
    assert "would not compile" in py_rewriter.validate(b"x = 1\n", b"x = (1\n")


@pytest.mark.parametrize("after", [b"return 1\n", b"def f():\n    nonlocal x\n", b"x = 1\nfrom __future__ import annotations\n"])
def test_validate_rejects_what_only_the_compiler_refuses_even_from_a_shared_parse(after):
    # These parse; the compiler refuses them. The check compiles the tree the import check parsed of the
    # same bytes, which must not skip the compiler's own checks.
    from migrator.rewrite.python import parsed

    parsed.parse(after)
    assert "would not compile" in py_rewriter.validate(b"x = 1\n", after)


def test_shell_command_strings_go_through_the_shell_rewriter():
    check_transformed('os.system("python3 -m verl.trainer.main_ppo trainer.use_legacy_worker_impl=auto x.y=1")\n',
                      'os.system("python3 -m verl.trainer.main_ppo x.y=1")\n', "x.py")
    check_transformed(
        'subprocess.run("bash examples/grpo_trainer/run_qwen3_30b_a3b_mindspeed.sh", shell=True)\n',
        'subprocess.run("bash examples/ascend_extras/grpo_trainer/run_qwen3_30b_a3b_mindspeed.sh", shell=True)\n',
        "x.py")


def test_command_lists_without_a_shell_only_get_the_string_scan():
    result = run('subprocess.run(["python3", "-m", "x", "trainer.use_legacy_worker_impl=auto"])\n', "x.py")
    assert result.status == "unchanged" and result.findings[0].kind == "key-removal"


def test_attribute_chain_inside_the_config_is_not_renamed_again():
    # ray_init.* moved under ray_kwargs: after one run the chain spells the new key, whose tail
    # `ray_init.num_cpus` must not be taken for the old key on a second run.
    from migrator.fileprocess import apply_edits
    from migrator.mapping import compose, load_builtin
    from migrator.rewrite import python

    maps = compose(load_builtin(), to_release="v0.9.0")
    entry = b"from verl.trainer.main_ppo import run_ppo\ndef f(config):\n    run_ppo(config)\n"
    before = entry + b"    n = config.ray_init.num_cpus\n    m = config.reward_model.enable\n"
    once = apply_edits(before, list(python.locate(before, maps, "x.py").edits))[0]
    assert once == entry + b"    n = config.ray_kwargs.ray_init.num_cpus\n    m = config.reward.reward_model.enable\n"
    assert not python.locate(once, maps, "x.py").edits
