"""Generate the deterministic benchmark tree: verl-style shell scripts, Python files and unrelated files.

A seeded `random.Random` drives every choice, so the same `--files N --seed S` gives byte-identical trees.
Old tokens are drawn from the composed built-in tables (`--from` .. `--to`), so every planted token is one
the migrator maps. Two shapes: `monorepo` (10% shell scripts, 30% Python modules, 60% unrelated files) and
`launchers` (30% Python launchers that hold Hydra override strings and run
`subprocess.run([sys.executable, "-m", "verl.trainer.main_ppo", *ARGS])`, 10% shell launchers, 60% unrelated).
"""

from __future__ import annotations

import json
import os
import random
from dataclasses import dataclass

# Keys verl's current trainer accepts unchanged (checked against the tables at generation time).
CURRENT_KEYS = (
    "algorithm.adv_estimator=grpo", "data.train_files=$train_files", "data.val_files=$test_files",
    "data.train_batch_size=1024", "data.max_prompt_length=512", "data.max_response_length=1024",
    "data.filter_overlong_prompts=True", "data.truncation=error", "actor_rollout_ref.model.path=Qwen/Qwen2.5-3B",
    "actor_rollout_ref.actor.optim.lr=1e-6", "actor_rollout_ref.model.use_remove_padding=True",
    "actor_rollout_ref.actor.ppo_mini_batch_size=256", "actor_rollout_ref.actor.use_kl_loss=True",
    "actor_rollout_ref.actor.kl_loss_coef=0.001", "actor_rollout_ref.actor.entropy_coeff=0",
    "actor_rollout_ref.model.enable_gradient_checkpointing=True", "actor_rollout_ref.rollout.name=vllm",
    "actor_rollout_ref.rollout.gpu_memory_utilization=0.6", "actor_rollout_ref.rollout.n=5",
    "algorithm.use_kl_in_reward=False", "trainer.critic_warmup=0", "trainer.logger='[\"console\",\"wandb\"]'",
    "trainer.project_name=verl_grpo_example_gsm8k", "trainer.n_gpus_per_node=8", "trainer.nnodes=1",
    "trainer.save_freq=20", "trainer.test_freq=5", "trainer.total_epochs=15",
)
# Current keys a Megatron launcher sets: `tensor_model_parallel_size` is the longest component of keys some
# value entries change, so a token search by component alone would send every launcher to the deep passes.
MEGATRON_KEYS = (
    "actor_rollout_ref.actor.megatron.tensor_model_parallel_size=4",
    "actor_rollout_ref.actor.megatron.pipeline_model_parallel_size=2",
    "actor_rollout_ref.ref.megatron.tensor_model_parallel_size=4",
    "actor_rollout_ref.rollout.tensor_model_parallel_size=2", "critic.megatron.tensor_model_parallel_size=4",
    "actor_rollout_ref.actor.megatron.param_offload=True", "actor_rollout_ref.actor.strategy=megatron",
)
WORDS = ("model", "reward", "rollout", "batch", "policy", "token", "sample", "gradient", "value", "critic",
         "dataset", "prompt", "response", "length", "update", "worker", "config", "trainer", "metric", "step")


@dataclass
class Plan:
    keys_renamed: list[str]
    keys_removed: list[str]
    paths_moved: list[str]
    modules_moved: list[str]
    vars_renamed: list[str]


def plan_from(mappings) -> Plan:
    renamed, removed = [], []
    for key in sorted(mappings.old_keys()):
        change = mappings.key(key)
        if change is None or "*" in key:
            continue
        if change.action == "rename" and not mappings.key(key + "_megabytes_note"):
            renamed.append(key)
        elif change.action == "remove":
            removed.append(key)
    moved = sorted(p for p in mappings.old_paths()
                   if not p.endswith("/") and (c := mappings.path(p)) and c.new and not c.env and not c.args)
    modules = sorted(m for m in mappings.old_modules() if (c := mappings.module(m)) and c.new)  # moved, not removed
    variables = sorted(r.old for r in mappings.var_rules if r.new and r.when is None)
    return Plan(renamed, removed, moved, modules, variables)


def _shell(rng: random.Random, plan: Plan, old: bool) -> bytes:
    lines = ["#!/usr/bin/env bash", "set -x", "", f"# GRPO on gsm8k, {rng.choice(WORDS)} {rng.choice(WORDS)} run",
             "gsm8k_train_path=$HOME/data/gsm8k/train.parquet", "gsm8k_test_path=$HOME/data/gsm8k/test.parquet",
             'train_files="[\'$gsm8k_train_path\']"', 'test_files="[\'$gsm8k_test_path\']"']
    overrides = rng.sample(CURRENT_KEYS, k=rng.randint(12, len(CURRENT_KEYS)))
    if old:
        for key in rng.sample(plan.keys_renamed, k=2):
            overrides.insert(rng.randrange(len(overrides)), f"{key}={rng.randint(1, 8)}")
        note = rng.choice(plan.keys_renamed)
        # A longer, unmapped key sharing the old key as prefix: a plain-text rename corrupts it.
        overrides.insert(rng.randrange(len(overrides)), f"+{note}_megabytes_note=4")
        lines.insert(3, f"# we used to pass {note} here")
        if plan.vars_renamed:
            var = plan.vars_renamed[0]
            lines.append(f"{var}=2")
            overrides.append(f"trainer.{rng.choice(WORDS)}_{rng.choice(WORDS)}=${var}")
        if plan.paths_moved:
            lines.append(f"# see {rng.choice(plan.paths_moved)}")
        if plan.keys_removed:
            overrides.append(f"{rng.choice(plan.keys_removed)}=True")  # last in the `\` list
    lines.append("")
    lines.append("python3 -m verl.trainer.main_ppo \\")
    lines.extend(f"    {o} \\" for o in overrides[:-1])
    lines.append(f"    {overrides[-1]} $@")
    lines.append("")
    return "\n".join(lines).encode()


def _python(rng: random.Random, plan: Plan, old: bool) -> bytes:
    out = ['"""Utilities for the %s %s pipeline."""' % (rng.choice(WORDS), rng.choice(WORDS)), "",
           "import os", "import json", "from dataclasses import dataclass", ""]
    if old:
        module = rng.choice(plan.modules_moved)
        out.insert(2, f"from {module} import helpers")
        out.insert(3, f"import {module}")
    for i in range(rng.randint(4, 10)):
        a, b = rng.choice(WORDS), rng.choice(WORDS)
        out += ["", "", f"def {a}_{b}_{i}(config, {b}s):",
                f'    """Return the {a} for every {b}."""',
                "    total = 0",
                f"    for item in {b}s:",
                f"        total += len(str(item)) * {rng.randint(1, 99)}",
                f'    return config.get("{a}.{b}", total)']
    if old:
        key = rng.choice(plan.keys_renamed)
        out += ["", "", "def override(cfg):", f'    return cfg.get("{key}")']
    out.append("")
    return "\n".join(out).encode()


def _python_launcher(rng: random.Random, plan: Plan, old: bool) -> bytes:
    """A user's Python launcher: override strings in a list, a loop over seeds, `subprocess.run` of verl's
    entry point with them; no verl import (it runs verl in a child process)."""
    overrides = rng.sample(CURRENT_KEYS + MEGATRON_KEYS, k=rng.randint(12, 24))
    if old:
        for key in rng.sample(plan.keys_renamed, k=2):
            overrides.insert(rng.randrange(len(overrides)), f"{key}={rng.randint(1, 8)}")
    name = f"{rng.choice(WORDS)}_{rng.choice(WORDS)}"
    out = ['"""Launch the %s sweep on the cluster."""' % name, "", "import argparse", "import os",
           "import subprocess", "import sys", "", f'EXPERIMENT = "{name}"', "BASE_ARGS = ["]
    out += [f'    "{o}",' if '"' not in o else f"    {o!r}," for o in overrides]
    out += ["]", "", "",
            "def overrides_for(seed, nodes):",
            "    return [",
            '        f"trainer.experiment_name={EXPERIMENT}_{seed}",',
            '        f"trainer.nnodes={nodes}",',
            '        "trainer.default_local_dir=" + os.path.join("/ckpt", EXPERIMENT, str(seed)),',
            "    ]"]
    for i in range(rng.randint(2, 6)):
        a, b = rng.choice(WORDS), rng.choice(WORDS)
        out += ["", "", f"def {a}_{b}_{i}(values):",
                f'    """Summarise the {a} of every {b}."""',
                "    return sum(len(str(v)) for v in values) * %d" % rng.randint(1, 99)]
    out += ["", "", "def main():",
            "    parser = argparse.ArgumentParser()",
            '    parser.add_argument("--seeds", type=int, default=%d)' % rng.randint(1, 5),
            '    parser.add_argument("--nodes", type=int, default=1)',
            "    args = parser.parse_args()",
            "    for seed in range(args.seeds):",
            "        ARGS = BASE_ARGS + overrides_for(seed, args.nodes)",
            '        subprocess.run([sys.executable, "-m", "verl.trainer.main_ppo", *ARGS], check=True)',
            "", "", 'if __name__ == "__main__":', "    main()", ""]
    return "\n".join(out).encode()


def _markdown(rng: random.Random) -> bytes:
    paras = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(20, 60))) for _ in range(rng.randint(3, 8))]
    return ("# " + rng.choice(WORDS).title() + "\n\n" + "\n\n".join(paras) + "\n").encode()


def _json(rng: random.Random) -> bytes:
    return json.dumps({f"{rng.choice(WORDS)}_{i}": [rng.random() for _ in range(8)] for i in range(20)},
                      indent=1).encode()


def _binary(rng: random.Random) -> bytes:
    return b"\x89PNG\r\n\x1a\n" + rng.randbytes(rng.randint(2000, 12000))


SHAPES = ("monorepo", "launchers")


def generate(root: str, files: int, mappings, seed: int = 0, shape: str = "monorepo") -> dict:
    """Write `files` files under `root` (10% shell, 30% Python, 60% unrelated); returns counts. `shape`:
    `monorepo` (Python modules, 2% with old names) or `launchers` (Python launchers, 5% with old keys)."""
    rng = random.Random(seed)
    plan = plan_from(mappings)
    n_shell, n_python = files // 10, files * 3 // 10
    counts = {"shell": 0, "shell_old": 0, "python": 0, "python_old": 0, "other": 0}
    for i in range(files):
        directory = os.path.join(root, f"team{i % 40:02d}", f"project{(i // 40) % 25:02d}")
        os.makedirs(directory, exist_ok=True)
        if i < n_shell:
            old = rng.random() < 0.05
            name, data = f"run_{i}.sh", _shell(rng, plan, old)
            counts["shell"] += 1
            counts["shell_old"] += old
        elif i < n_shell + n_python:
            if shape == "launchers":
                old = rng.random() < 0.05
                name, data = f"launch_{i}.py", _python_launcher(rng, plan, old)
            else:
                old = rng.random() < 0.02
                name, data = f"mod_{i}.py", _python(rng, plan, old)
            counts["python"] += 1
            counts["python_old"] += old
        else:
            kind = i % 3
            name, data = ((f"doc_{i}.md", _markdown(rng)) if kind == 0 else
                          (f"data_{i}.json", _json(rng)) if kind == 1 else (f"image_{i}.png", _binary(rng)))
            counts["other"] += 1
        with open(os.path.join(directory, name), "wb") as fh:
            fh.write(data)
    return counts
