"""The shipped module facts (mappings/verl/facts/modules/) and the Python API entries of the release tables
agree with verl's history on the breaks users hit, and the checker accepts the tables and rejects bad entries."""

import importlib.util

import pytest

from tests.helpers import REPO

ROOT = REPO
_spec = importlib.util.spec_from_file_location("check_python_api_draft", ROOT / "scripts" / "check_python_api_draft.py")
checker = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(checker)

RELEASES = checker.release_order()
FACTS = checker.load_module_facts(releases=RELEASES)
DRAFT = checker.load_tables()


def binds(release, module, name):
    names = FACTS[release].get(module)
    return names is not None and names.binds(name)


def defines(release, module, name):
    names = FACTS[release].get(module)
    return names is not None and name in names.defined


def entry(release, kind, old, **fields):
    return {"release": release, "kind": kind, "old": old, "pr": 1, **fields}


def test_facts_file_is_well_formed():
    lines = [line for line in checker.FACTS.read_text().splitlines() if line and not line.startswith("#")]
    assert all(len(line.split("\t")) == 5 for line in lines)
    # private names are facts too: `from verl.trainer.ppo.ray_trainer import _timer` worked up to v0.4.0
    assert FACTS["v0.4.0"]["verl.trainer.ppo.ray_trainer"].reaches("_timer")
    assert not FACTS["v0.4.0"]["verl.trainer.ppo.ray_trainer"].binds("_timer")
    assert not FACTS["v0.9.0"]["verl.trainer.ppo.ray_trainer"].reaches("_timer")
    assert all(len(FACTS[release]) > 150 for release in RELEASES)
    assert "recipe.dapo.main_dapo" in FACTS["v0.7.0"] and not any(m.startswith("recipe.") for m in FACTS["v0.7.1"])
    assert not any(".tests." in m or m.endswith(".tests") for modules in FACTS.values() for m in modules)


def test_tables_hold_every_python_api_kind():
    kinds = {e["kind"] for e in DRAFT}
    assert kinds == checker.MODULE_KINDS | checker.SYMBOL_KINDS
    assert len(DRAFT) >= 222


def test_checker_reads_a_draft_grouped_by_release(tmp_path):
    draft = tmp_path / "draft.yaml"
    draft.write_text("releases:\n- release: v0.8.0\n  entries:\n  - kind: module-removal\n"
                     "    old: verl.interactions\n    hint: gone\n    pr: 6074\n")
    assert checker.load_draft(draft) == [{"release": "v0.8.0", "kind": "module-removal", "old": "verl.interactions",
                                          "hint": "gone", "pr": 6074}]


@pytest.mark.parametrize("module, last, first_without", [
    ("verl.workers.fsdp_workers", "v0.7.1", "v0.8.0"),
    ("verl.workers.megatron_workers", "v0.7.1", "v0.8.0"),
    ("verl.workers.rollout.async_server", "v0.5.0", "v0.6.0"),
    ("verl.workers.roles", "v0.6.1", "v0.7.0"),
    ("verl.trainer.fsdp_sft_trainer", "v0.7.0", "v0.7.1"),
    ("verl.utils.dataset.sft_dataset", "v0.7.0", "v0.7.1"),
    ("verl.trainer.main_generation", "v0.7.0", "v0.7.1"),
    ("verl.interactions", "v0.7.1", "v0.8.0"),
    ("verl.trainer.main_ppo_sync", "v0.8.0", "v0.9.0"),
    ("verl.experimental.reward", "v0.6.1", "v0.7.0"),
])
def test_module_lifetimes(module, last, first_without):
    assert module in FACTS[last]
    assert module not in FACTS[first_without]


def test_names_that_moved():
    assert defines("v0.8.0", "verl.workers.engine_workers", "ActorRolloutRefWorker")
    assert binds("v0.7.0", "verl.workers.rollout.utils", "get_free_port")
    assert not binds("v0.7.1", "verl.workers.rollout.utils", "get_free_port")
    assert defines("v0.7.1", "verl.utils.net_utils", "get_free_port")
    assert defines("v0.8.0", "verl.trainer.main_ppo", "TaskRunner")
    assert not binds("v0.9.0", "verl.trainer.main_ppo", "TaskRunner")
    assert defines("v0.9.0", "verl.trainer.main_ppo_v0", "TaskRunner")
    assert defines("v0.9.0", "verl.trainer.ppo.utils", "create_rl_dataset")
    assert defines("v0.3.0.post1", "verl.trainer.main_ppo", "get_custom_reward_fn")
    assert defines("v0.4.0", "verl.trainer.ppo.reward", "get_custom_reward_fn")
    assert defines("v0.6.0", "verl.experimental.agent_loop.agent_loop", "AsyncLLMServerManager")


def test_signatures_and_star_imports():
    before = FACTS["v0.3.0.post1"]["verl.trainer.ppo.core_algos"].defined["compute_policy_loss"]
    after = FACTS["v0.4.0"]["verl.trainer.ppo.core_algos"].defined["compute_policy_loss"]
    assert "eos_mask" in before and "response_mask" not in before
    assert "response_mask" in after and "eos_mask" not in after
    # verl.utils.debug kept the profiler names through `from verl.utils.profiler import *`
    assert binds("v0.5.0", "verl.utils.debug", "GPUMemoryLogger")


def test_draft_is_consistent_with_the_facts():
    assert checker.validate(DRAFT, FACTS, RELEASES) == []


def test_draft_covers_the_disappeared_modules():
    covered = checker.coverage(DRAFT, FACTS, RELEASES)
    hit = sum(len(h) for h, _ in covered.values())
    total = sum(len(g) for _, g in covered.values())
    assert total > 400 and hit / total >= 0.95
    assert len(covered["v0.8.0"][1]) == 113


@pytest.mark.parametrize("release, kind, old, fields", [
    ("v0.8.0", "module-removal", "verl.workers.fsdp_workers", {"pr": 6067}),
    ("v0.8.0", "symbol-move", "verl.workers.fsdp_workers:ActorRolloutRefWorker",
     {"new": "verl.workers.engine_workers:ActorRolloutRefWorker"}),
    ("v0.7.1", "symbol-move", "verl.workers.rollout.utils:get_free_port", {"new": "verl.utils.net_utils:get_free_port"}),
    ("v0.9.0", "symbol-move", "verl.trainer.main_ppo:TaskRunner", {"new": "verl.trainer.main_ppo_v0:TaskRunner", "pr": 6710}),
    # #4572 moved the package (6bc3e1232); #4547 only swapped names inside it, #4187 renamed one file in it
    ("v0.7.0", "module-move", "verl.experimental.reward", {"new": "verl.experimental.reward_loop", "pr": 4572}),
    ("v0.7.0", "module-move", "verl.experimental.reward.router.sglang_router",
     {"new": "verl.experimental.reward_loop.router.inner_sglang_router", "pr": 4572}),
    ("v0.6.0", "module-removal", "verl.workers.rollout.async_server", {"pr": 3456}),
    ("v0.8.0", "module-removal", "verl.interactions", {"pr": 6074}),
])
def test_draft_has_the_known_breaks(release, kind, old, fields):
    matches = [e for e in DRAFT if (e["release"], e["kind"], e["old"]) == (release, kind, old)]
    assert len(matches) == 1
    assert fields.items() <= matches[0].items()


def test_draft_renames_eos_mask_in_core_algos():
    olds = {e["old"] for e in DRAFT if e["kind"] == "keyword-rename" and e["release"] == "v0.4.0"
            and e["keyword"] == "eos_mask" and e["new"] == "response_mask"}
    assert "verl.trainer.ppo.core_algos:compute_policy_loss" in olds
    assert "verl.trainer.ppo.core_algos:compute_gae_advantage_return" in olds


@pytest.mark.parametrize("bad, problem", [
    (entry("v0.8.0", "module-move", "verl.workers.fsdp_workers", new="verl.workers.nowhere"), "does not exist at v0.8.0"),
    (entry("v0.8.0", "module-removal", "verl.workers.engine_workers", hint="x"), "still exists at v0.8.0"),
    (entry("v0.8.0", "module-removal", "verl.never_existed", hint="x"), "does not exist before v0.8.0"),
    (entry("v0.7.1", "symbol-move", "verl.trainer.main_ppo:TaskRunner", new="verl.trainer.main_ppo_v0:TaskRunner"),
     "still bound at v0.7.1"),
    (entry("v0.9.0", "symbol-move", "verl.trainer.main_ppo:TaskRunner", new="verl.trainer.ppo.utils:TaskRunner"),
     "is not defined at v0.9.0"),
    (entry("v0.4.1", "keyword-rename", "verl.trainer.ppo.core_algos:compute_policy_loss", keyword="eos_mask",
           new="response_mask"), "had no parameter 'eos_mask'"),
    (entry("v0.4.0", "module-no-action", "verl.third_party.vllm.vllm_v_0_3_1"), "missing field 'why'"),
    (entry("v0.2.0.post2", "module-move", "verl.trainer.ppo.rollout", new="verl.workers.rollout"),
     "submodule verl.trainer.ppo.rollout.megatron has no verl.workers.rollout.megatron"),
])
def test_checker_rejects_entries_the_facts_contradict(bad, problem):
    failures = checker.validate([bad], FACTS, RELEASES)
    assert failures and any(problem in p for p in failures[0][1]), failures


_extract_spec = importlib.util.spec_from_file_location("extract_verl_modules", ROOT / "scripts" / "extract_verl_modules.py")
extractor = importlib.util.module_from_spec(_extract_spec)
_extract_spec.loader.exec_module(extractor)

SOURCE = b'''
import os
import verl.utils.torch_functional as F
from typing import Optional
from .base import BaseTool, _private
from verl.utils import hf_tokenizer as tok
from ..config import *
from tests.helpers import REPO
__all__ = ["run", "_exported"]
LIMIT: int = 3
try:
    from vllm import LLM
except ImportError:
    LLM = None
if LIMIT:
    def helper(a, *args, key=1, **kw): pass
class Tool(BaseTool):
    def __init__(self, config, /, role, *, name=None): pass
    def method(self): pass
class Bare: pass
async def run(x): pass
def _exported(): pass
def _hidden(): pass
'''


def test_extractor_names_what_a_module_binds():
    defined, reexported = extractor.bound_names(SOURCE, "verl.tools.gsm8k_tool", is_package=False)
    assert defined == sorted(["LIMIT", "LLM", "helper(a,*args,key,**kw)", "Tool(config,role,*,name)", "Bare",
                              "run(x)", "_exported()"])
    assert reexported == sorted(["BaseTool", "F", "tok", "*verl.config"])


def test_extractor_keeps_private_names_apart_and_leaves_out_names_imported_from_outside_verl():
    defined, reexported, private = extractor.module_bindings(SOURCE, "verl.tools.gsm8k_tool", is_package=False)
    assert (defined, reexported) == extractor.bound_names(SOURCE, "verl.tools.gsm8k_tool", is_package=False)
    assert private == ["_hidden", "_private"]
    lazy = extractor.module_bindings(b"def __getattr__(name): pass\n", "verl.x", is_package=False)
    assert lazy == ([], [], ["__getattr__"])


def test_a_module_getattr_reaches_every_name(tmp_path):
    facts = tmp_path / "verl.modules"
    facts.write_text("verl.lazy\tv0.1\t\t\t__getattr__\nverl.plain\tv0.1\tf()\t\t_g\n")
    modules = checker.read_module_facts(facts, ["v0.1"])["v0.1"]
    assert modules["verl.lazy"].reaches("anything") and not modules["verl.lazy"].binds("anything")
    assert modules["verl.plain"].reaches("_g") and not modules["verl.plain"].reaches("h")


def test_extractor_resolves_relative_star_imports_from_packages():
    _, reexported = extractor.bound_names(b"from .x import *\nfrom . import y\n", "verl.utils", is_package=True)
    assert reexported == ["*verl.utils.x", "y"]


def test_extractor_keeps_modules_that_do_not_parse():
    assert extractor.bound_names(b"def broken(:\n", "verl.x", is_package=False) == (["!syntax-error"], [])


@pytest.mark.parametrize("path, module", [
    ("verl/workers/fsdp_workers.py", "verl.workers.fsdp_workers"),
    ("verl/interactions/__init__.py", "verl.interactions"),
    ("verl/utils/reward_score/tests/test_math.py", None),
    ("recipe/r1/run-eval.py", None),
    ("verl/models/class.py", None),
])
def test_extractor_module_names(path, module):
    assert extractor.module_name(path) == module


def test_release_runs_round_trip():
    releases = RELEASES
    indices = [0, 1, 2, 5, 7, 8]
    runs = extractor.release_runs(indices, releases)
    assert runs == f"{releases[0]}..{releases[2]},{releases[5]},{releases[7]}..{releases[8]}"
    assert checker.expand_runs(runs, releases) == [releases[i] for i in indices]


def test_checker_command_reports_coverage_and_fails_on_a_bad_entry(tmp_path, capsys):
    assert checker.main([]) == 0
    out = capsys.readouterr().out
    assert "v0.8.0          113/113  modules covered (100.0%)" in out
    assert "overall" in out and " 0 inconsistent" in out
    bad = tmp_path / "draft.yaml"
    bad.write_text("releases:\n- release: v0.8.0\n  entries:\n  - kind: module-removal\n"
                   "    old: verl.workers.engine_workers\n    hint: x\n    pr: 1\n")
    assert checker.main([str(bad)]) == 1
    assert "verl.workers.engine_workers still exists at v0.8.0" in capsys.readouterr().out
