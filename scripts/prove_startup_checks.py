"""Run verl's own start-up validation, release by release, and record its verdicts as facts.

For each release this extracts verl's source from a clone (`git archive <tag> verl`, into /tmp), makes or
reuses a throwaway venv (/tmp, never committed) with what verl's validation imports, composes configs with
Hydra in verl's own config tree, and runs, per config, every validator mappings/verl/startup-checks.yaml
names for the release:

- `validate_config`: `verl.utils.config.validate_config(config, use_reference_policy, use_critic)` with
  `need_critic(config)`; `need_reference_policy(config)` from v0.7.1; before that it takes the
  role-worker mapping, stubbed as main_ppo's TaskRunner builds it (a RefPolicy role iff
  `algorithm.use_kl_in_reward or actor.use_kl_loss`). It converts the actor's node (and the critic's)
  with `omega_conf_to_dataclass`, so the table's `converts` checks and the config classes' `__post_init__`
  (`dataclasses`) are proven on the cases that add a key (`+...`) or give a profiler value of another type.
- `RayPPOTrainer._validate_config` (up to v0.5.0): the method, unbound, on a stand-in for the trainer
  (stubbed: its __init__ needs Ray worker groups and a tokenizer) holding the config, `use_critic` as
  __init__ sets it (`adv_estimator == gae`) and `use_reference_policy` as main_ppo builds the roles.
- `RolloutConfig.__post_init__`: `omega_conf_to_dataclass(config.actor_rollout_ref.rollout)`, as the
  workers convert it; the DeprecationWarnings a warning-severity check names are recorded.
- `get_rollout_class`: `verl.workers.rollout.base.get_rollout_class(name, mode)`; its registry assert is
  the verdict, the rollout class's own import (vLLM, SGLang: not installed) counts as passing.

vLLM needs a GPU, so `verl.workers.rollout.vllm_rollout` (its package imports vLLM) is stubbed by an empty
package whose `utils` module holds only `get_vllm_max_lora_rank`, compiled from verl's own source at the
release (vLLM's MaxLoRARanks then falls back to verl's own list, as verl does without vLLM). Nothing else
is stubbed: Ray, torch (the CPU wheel), transformers and the rest are real packages, never
started. The configs are the table's boundary cases (`cases`, below: each condition's values on both sides),
or with `--launches FILE` the cases of a JSON list (`[{"release", "config_dir", "config_name",
"overrides"}]`, the measuring scripts write it) whose verdicts go to `--out`.

    python scripts/prove_startup_checks.py --repo /path/to/verl-clone            # every release, facts written
    python scripts/prove_startup_checks.py --repo ... --release v0.9.0
    python scripts/prove_startup_checks.py --repo ... --launches cases.json --out verdicts.json
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

FACTS = ROOT / "mappings" / "verl" / "facts" / "startup-verdicts"
WORK = Path(tempfile.gettempdir()) / "verl-prove"
# What verl's validation imports, pinned as proven to run every release here (torch: the CPU wheel on disk).
REQUIREMENTS = ["torch==2.13.0", "numpy==2.4.6", "omegaconf==2.3.1", "hydra-core==1.3.8", "packaging==25.0",
                "transformers==4.57.6", "huggingface_hub==0.36.2", "datasets==4.4.2", "ray==2.60.0",
                "tensordict==0.10.0", "pillow==13.0.0", "codetiming==1.4.0", "dill==0.4.0", "pandas==3.1.1",
                "pyarrow==26.0.1", "setuptools<81", "fastapi", "uvicorn", "cachetools", "openai"]
NO_DEPS = ["torchdata"]  # its own requirements would pull another torch

BASE = {  # a launch every release accepts: each case changes a few of these
    "trainer.n_gpus_per_node": 8, "trainer.nnodes": 1, "data.train_batch_size": 64, "actor_rollout_ref.rollout.n": 1,
    "actor_rollout_ref.actor.ppo_mini_batch_size": 16, "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu": 2,
    "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu": 2,
    "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu": 2, "critic.ppo_mini_batch_size": 16,
    "critic.ppo_micro_batch_size_per_gpu": 2, "actor_rollout_ref.rollout.name": "vllm",
    "actor_rollout_ref.model.path": str(WORK / "tiny-model"), "critic.model.path": str(WORK / "tiny-model"),
}
A, R, REF, C = "actor_rollout_ref.actor.", "actor_rollout_ref.rollout.", "actor_rollout_ref.ref.", "critic."
MODEL, MEG, RM = "actor_rollout_ref.model.", "actor_rollout_ref.actor.megatron.", "reward_model."
KL = {A + "use_kl_loss": True}
NPU, TORCH = A + "profiler.tool_config.npu.", A + "profiler.tool_config.torch."
GPUS = "trainer.n_gpus_per_node"


def cases() -> list[tuple[str, dict]]:
    """(config name, changes to BASE; None removes the override, leaving the config's default)."""
    fsdp = [
        {}, {"data.train_batch_size": 60}, {"data.train_batch_size": 12, R + "n": 2}, {GPUS: 6},
        {"data.train_batch_size": 20, R + "n": 2, GPUS: 4}, {"trainer.nnodes": 2, "data.train_batch_size": 40},
        {"data.train_batch_size": 60, A + "use_dynamic_bsz": True}, {"data.train_batch_size": 8},
        {A + "ppo_micro_batch_size": 4}, {A + "ppo_micro_batch_size_per_gpu": None},
        {A + "ppo_micro_batch_size": 4, A + "ppo_micro_batch_size_per_gpu": None},
        {A + "ppo_micro_batch_size": 8, A + "ppo_micro_batch_size_per_gpu": None},
        {A + "ppo_micro_batch_size": 3, A + "ppo_micro_batch_size_per_gpu": None},
        {A + "ppo_micro_batch_size": 2, A + "ppo_micro_batch_size_per_gpu": None, A + "ulysses_sequence_parallel_size": 4,
         MODEL + "use_remove_padding": True},
        {A + "ulysses_sequence_parallel_size": 2, MODEL + "use_remove_padding": False},
        {A + "ulysses_sequence_parallel_size": 2, MODEL + "use_remove_padding": True},
        {REF + "log_prob_micro_batch_size_per_gpu": None}, {REF + "log_prob_micro_batch_size_per_gpu": None, **KL},
        {REF + "log_prob_micro_batch_size": 4, **KL}, {REF + "log_prob_micro_batch_size": 4},
        {R + "log_prob_micro_batch_size_per_gpu": None}, {R + "log_prob_micro_batch_size": 4},
        {C + "ppo_micro_batch_size_per_gpu": None}, {C + "ppo_micro_batch_size_per_gpu": None, "algorithm.adv_estimator": "grpo"},
        {C + "ppo_micro_batch_size_per_gpu": None, "algorithm.adv_estimator": "grpo", C + "enable": True},
        {C + "ppo_micro_batch_size": 4}, {C + "ppo_mini_batch_size": 128},
        {C + "ppo_micro_batch_size": 3, C + "ppo_micro_batch_size_per_gpu": None},
        {RM + "enable": True, RM + "micro_batch_size_per_gpu": 2}, {RM + "enable": True, RM + "micro_batch_size_per_gpu": None},
        {RM + "enable": True, RM + "micro_batch_size_per_gpu": 2, RM + "micro_batch_size": 4},
        {A + "loss_agg_mode": "bogus"}, {A + "loss_agg_mode": "token-sum"}, {A + "loss_agg_mode": "seq-mean-token-sum-norm"},
        {R + "val_kwargs.do_sample": True, R + "temperature": 0}, {R + "val_kwargs.do_sample": True, R + "temperature": 0.5},
        {R + "val_kwargs.do_sample": False, R + "temperature": 0},
        {MODEL + "lora_rank": 1024}, {MODEL + "lora_rank": 512}, {MODEL + "lora_rank": 1024, R + "name": "sglang"},
        {MODEL + "lora.rank": 1024}, {MODEL + "lora.rank": 1024, MODEL + "lora.merge": True},
        {R + "mode": "sync"}, {R + "mode": "async"}, {R + "mode": "search"}, {R + "name": "hf"},
        {R + "name": "sglang", R + "mode": "async"}, {R + "name": "sglang", R + "mode": "search"},
        {R + "expert_parallel_size": 2}, {R + "expert_parallel_size": 2, R + "tensor_model_parallel_size": 2},
        {R + "expert_parallel_size": 4, R + "tensor_model_parallel_size": 2, R + "data_parallel_size": 2},
        {R + "expert_parallel_size": 2, R + "name": "trtllm"},
        {R + "multi_turn.enable": True}, {R + "multi_turn.enable": True, R + "multi_turn.tool_config_path": "t.yaml"},
        {R + "multi_turn.enable": True, R + "multi_turn.tool_config_path": "t.yaml", "algorithm.adv_estimator": "grpo"},
        # omega_conf_to_dataclass: a key no dataclass declares (`+`), and the config classes' __post_init__
        {"+" + A + "policy_loss.tau_pos": 1.0}, {"+" + A + "bogus_setting": 1}, {"+" + R + "bogus_setting": 1},
        {"+" + C + "bogus_setting": 1}, {"+" + C + "bogus_setting": 1, "algorithm.adv_estimator": "grpo"},
        {A + "profiler.ranks": "'[0,1]'"}, {A + "profiler.ranks": "[0,1]"}, {R + "profiler.ranks": "'0'"},
        {C + "profiler.ranks": "'0'"}, {NPU + "contents": "'npu'"}, {NPU + "contents": "[npu,cpu]"},
        {NPU + "contents": "[npu,gpu]"}, {NPU + "level": "level9"}, {NPU + "level": 1}, {NPU + "analysis": 1},
        {TORCH + "contents": "[cpu,gpu]"}, {TORCH + "contents": "'cpu'"}, {TORCH + "contents": "[cpu,cuda]"},
        {"+" + A + "policy_loss.tau_pos": 1.0, A + "profiler.ranks": "'0'"},
        {A + "profiler.ranks": "'0'", NPU + "contents": "'npu'"},
    ]
    megatron = [
        {}, {MEG + "tensor_model_parallel_size": 2}, {MEG + "tensor_model_parallel_size": 2, "data.train_batch_size": 60},
        {MEG + "tensor_model_parallel_size": 3}, {MEG + "tensor_model_parallel_size": 2, MEG + "pipeline_model_parallel_size": 2,
                                                  MEG + "context_parallel_size": 2, "data.train_batch_size": 18},
        {MEG + "tensor_model_parallel_size": 2, A + "ppo_micro_batch_size_per_gpu": 3, "data.train_batch_size": 60},
        {MEG + "tensor_model_parallel_size": 2, A + "ppo_micro_batch_size_per_gpu": 3, "data.train_batch_size": 48},
    ]
    return [("ppo_trainer", c) for c in fsdp] + [("ppo_megatron_trainer", c) for c in megatron]


def overrides_of(changes: dict) -> list[str]:
    merged = {**BASE, **changes}
    return [f"{key}={_hydra(value)}" for key, value in merged.items() if value is not None]


def _hydra(value) -> str:
    return "true" if value is True else "false" if value is False else str(value)


# -- the run inside verl's venv --------------------------------------------------------------------------

RUNNER = r'''
import contextlib, inspect, io, json, os, sys, traceback, types, warnings
src, cases_path, out_path = sys.argv[1:4]
sys.path.insert(0, src)
from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra

def where(exc):
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename.startswith(src)]
    return f"{os.path.relpath(frames[-1].filename, src)}:{frames[-1].lineno}" if frames else None

def uses_ref(cfg):
    return bool(cfg.algorithm.get("use_kl_in_reward", False) or cfg.actor_rollout_ref.actor.get("use_kl_loss", False))

def validate_config(cfg):
    from verl.utils.config import validate_config
    from verl.trainer.ppo import utils
    if "role_worker_mapping" in inspect.signature(utils.need_reference_policy).parameters:
        roles = {utils.Role.RefPolicy: None} if uses_ref(cfg) else {}  # stub: main_ppo's TaskRunner roles
        use_ref = utils.need_reference_policy(roles)
    else:
        use_ref = utils.need_reference_policy(cfg)
    validate_config(cfg, use_reference_policy=use_ref, use_critic=utils.need_critic(cfg))

def trainer_validate(cfg):
    from verl.trainer.ppo.ray_trainer import RayPPOTrainer
    stub = types.SimpleNamespace(config=cfg, use_critic=cfg.algorithm.adv_estimator == "gae",
                                 use_reference_policy=uses_ref(cfg))  # stub: the trainer's own fields
    RayPPOTrainer._validate_config(stub)

def rollout_config(cfg):
    from verl.utils.config import omega_conf_to_dataclass
    omega_conf_to_dataclass(cfg.actor_rollout_ref.rollout)

def rollout_class(cfg):
    from verl.workers.rollout.base import get_rollout_class
    try:
        get_rollout_class(cfg.actor_rollout_ref.rollout.name, cfg.actor_rollout_ref.rollout.mode)
    except (ImportError, AttributeError):
        pass  # the registry knows it; the engine itself is not installed here (or is the stub below)

VALIDATORS = {"validate_config": validate_config, "RayPPOTrainer._validate_config": trainer_validate,
              "RolloutConfig.__post_init__": rollout_config, "get_rollout_class": rollout_class}

def run(function, cfg, prefixes):
    out = {"outcome": "passes"}
    with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("always")
        try:
            function(cfg)
        except Exception as exc:
            root = exc
            while root.__cause__ is not None:  # Hydra's InstantiationException wraps the config class's own error
                root = root.__cause__
            out = {"outcome": "fails", "error": type(root).__name__, "message": str(root), "at": where(root)}
            if root is not exc:
                out["raised_as"] = type(exc).__name__
    said = sorted({str(w.message) for w in caught if any(str(w.message).startswith(p) for p in prefixes)})
    if said:
        out["warnings"] = said
    return out

def tiny_model(path):
    """A model directory verl's model configs load (config and tokenizer, no weights): made by this run."""
    if os.path.exists(os.path.join(path, "config.json")):
        return
    from tokenizers import Tokenizer, models
    from transformers import PreTrainedTokenizerFast, Qwen2Config
    words = Tokenizer(models.WordLevel({"<unk>": 0, "a": 1}, unk_token="<unk>"))
    PreTrainedTokenizerFast(tokenizer_object=words, eos_token="a", pad_token="<unk>").save_pretrained(path)
    Qwen2Config(architectures=["Qwen2ForCausalLM"], vocab_size=2, hidden_size=8, intermediate_size=8, num_hidden_layers=1, num_attention_heads=1,
                num_key_value_heads=1).save_pretrained(path)

def stub_vllm_rollout():
    """The vLLM rollout package without vLLM: only verl's own get_vllm_max_lora_rank (see the docstring)."""
    import ast, typing
    folder = os.path.join(src, "verl", "workers", "rollout", "vllm_rollout")
    path = os.path.join(folder, "utils.py")
    if not os.path.exists(path):
        return
    tree = ast.parse(open(path).read())
    body = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "get_vllm_max_lora_rank"]
    if not body:
        return
    import verl.workers.rollout  # noqa: F401  the real parent package
    package = types.ModuleType("verl.workers.rollout.vllm_rollout")
    package.__path__ = [folder]
    module = types.ModuleType("verl.workers.rollout.vllm_rollout.utils")
    module.__dict__.update(Literal=typing.Literal, get_args=typing.get_args, __file__=path)
    exec(compile(ast.Module(body=body, type_ignores=[]), path, "exec"), module.__dict__)
    package.utils = module
    sys.modules[package.__name__], sys.modules[module.__name__] = package, module

tiny_model(os.environ["VERL_PROVE_MODEL"])
stub_vllm_rollout()
results = []
for case in json.load(open(cases_path)):
    GlobalHydra.instance().clear()
    try:
        with initialize_config_dir(config_dir=os.path.join(src, case["config_dir"]), version_base=None):
            cfg = compose(case["config_name"], overrides=case["overrides"])
    except Exception as exc:
        results.append({"composed": False, "error": str(exc).splitlines()[0]})
        continue
    results.append({"composed": True, "verdicts": {v: run(VALIDATORS[v], cfg, case["warnings"]) for v in case["validators"]}})
json.dump(results, open(out_path, "w"))
'''


def source_tree(clone: Path, release: str) -> Path:
    target = WORK / "src" / release
    if not (target / "verl").is_dir():
        target.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "-C", str(clone), "archive", release, "verl"], check=True, capture_output=True)
        subprocess.run(["tar", "-x", "-C", str(target)], input=archive.stdout, check=True)
    return target


def venv(path: Path) -> Path:
    python = path / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(path)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", *REQUIREMENTS], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", *NO_DEPS], check=True)
    return python


def commit_of(clone: Path, release: str) -> str:
    return subprocess.run(["git", "-C", str(clone), "rev-parse", "--short=9", f"{release}^{{commit}}"],
                          check=True, capture_output=True, text=True).stdout.strip()


def run_cases(python: Path, src: Path, cases_: list[dict]) -> list[dict]:
    with tempfile.TemporaryDirectory() as tmp:
        runner, given, got = Path(tmp) / "runner.py", Path(tmp) / "cases.json", Path(tmp) / "out.json"
        runner.write_text(RUNNER)
        given.write_text(json.dumps(cases_))
        env = {**os.environ, "PYTHONWARNINGS": "ignore", "RAY_DISABLE_IMPORT_WARNING": "1",
               "VERL_PROVE_MODEL": str(WORK / "tiny-model"), "HF_HUB_OFFLINE": "1"}
        subprocess.run([str(python), str(runner), str(src), str(given), str(got)], check=True, env=env, cwd=tmp)
        return json.loads(got.read_text())


def validators_at(table, release: str) -> tuple[list[str], list[str]]:
    """(validator names at the release in the table's order, the prefixes of its warning messages)."""
    names, prefixes = [], []
    for check in table.at(release):
        if check.validator not in names:
            names.append(check.validator)
        if check.severity == "warning":
            prefixes.append(check.message.split("{", 1)[0])
    return names, prefixes


def prove_release(clone: Path, python: Path, table, release: str) -> dict:
    src = source_tree(clone, release)
    validators, prefixes = validators_at(table, release)
    planned = []
    for config_name, changes in cases():
        planned.append({"config_dir": "verl/trainer/config", "config_name": config_name,
                        "overrides": overrides_of(changes), "validators": validators, "warnings": prefixes})
    results = run_cases(python, src, planned)
    kept, dropped = [], 0
    for case, result in zip(planned, results):
        if not result["composed"]:
            dropped += 1  # a key the release does not have: Hydra's verdict, not verl's
            continue
        kept.append({"config": f"{case['config_dir']}/{case['config_name']}", "overrides": case["overrides"],
                     "verdicts": result["verdicts"]})
    return {"release": release, "commit": commit_of(clone, release), "cases": kept, "not_composed": dropped}


def write_facts(facts: dict) -> Path:
    import yaml

    FACTS.mkdir(parents=True, exist_ok=True)
    path = FACTS / f"{facts['release']}.yaml"
    header = (f"# GENERATED VIA scripts/prove_startup_checks.py from verl {facts['release']} ({facts['commit']}); "
              "do not edit\n"
              "# verl's own validators (mappings/verl/startup-checks.yaml names them) run on configs Hydra composed in\n"
              "# verl's config tree: per case the overrides and, per validator, verl's outcome (its exception, message\n"
              "# and the line that raised it; the warnings a warning-severity check names). Stubs: the script's docstring.\n")
    body = {k: facts[k] for k in ("release", "commit", "not_composed", "cases")}
    path.write_text(header + yaml.safe_dump(body, sort_keys=False, width=120, allow_unicode=True), encoding="utf-8")
    return path


def main(argv=None) -> int:
    from migrator.startup.checks import load_checks

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", "--verl", dest="verl", type=Path, required=True,
                        help="a clone of verl (bare is fine) with its release tags")
    parser.add_argument("--venv", type=Path, default=WORK / "venv", help="the throwaway venv (made when missing)")
    parser.add_argument("--release", action="append", help="only these releases (repeatable)")
    parser.add_argument("--launches", type=Path, help="a JSON list of cases to judge instead of the boundary cases")
    parser.add_argument("--out", type=Path, help="with --launches: where verl's verdicts go (JSON)")
    args = parser.parse_args(argv)
    table = load_checks()
    python = venv(args.venv)
    if args.launches:
        given = json.loads(args.launches.read_text())
        by_release: dict[str, list[int]] = {}
        for n, case in enumerate(given):
            by_release.setdefault(case["release"], []).append(n)
        results: list = [None] * len(given)
        for release, indices in by_release.items():
            validators, prefixes = validators_at(table, release)
            planned = [{**given[n], "validators": validators, "warnings": prefixes} for n in indices]
            for n, result in zip(indices, run_cases(python, source_tree(args.verl, release), planned)):
                results[n] = result
        (args.out or Path("verdicts.json")).write_text(json.dumps(results, indent=1))
        return 0
    releases = args.release or [r for r in table.releases if table.at(r)]
    for release in releases:
        facts = prove_release(args.verl, python, table, release)
        print(f"{release}: {len(facts['cases'])} cases judged by verl ({facts['not_composed']} not composed) -> "
              f"{write_facts(facts).relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
