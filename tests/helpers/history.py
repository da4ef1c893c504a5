"""Build small verl-like git histories in tmp_path with gitpython (shared by derive/audit/notes tests)."""

from __future__ import annotations

from pathlib import Path

import git
import yaml

LICENSE = "# Copyright 2025 The verl authors\n# Licensed under the Apache License, Version 2.0\n"


def script(model: str, backend: str = "fsdp", extra: str = "") -> str:
    """A launch script in verl's style; different models give clearly different contents."""
    return f"""#!/usr/bin/env bash
set -x
MODEL_PATH=${{MODEL_PATH:-$HOME/models/{model}}}
python3 -m verl.trainer.main_ppo \\
    algorithm.adv_estimator=grpo \\
    data.train_files=$HOME/data/{model}/train.parquet \\
    data.train_batch_size=1024 \\
    actor_rollout_ref.model.path=$MODEL_PATH \\
    actor_rollout_ref.actor.strategy={backend} \\
    actor_rollout_ref.actor.optim.lr=1e-6 \\
    actor_rollout_ref.rollout.name=vllm \\
    actor_rollout_ref.rollout.tensor_model_parallel_size=2 \\
    trainer.project_name=verl_{model} \\
    trainer.experiment_name={model}_{backend} {extra}\\
    trainer.n_gpus_per_node=8 $@
"""


class History:
    def __init__(self, root: Path):
        self.root = root
        self.repo = git.Repo.init(root)
        with self.repo.config_writer() as cfg:
            cfg.set_value("user", "name", "test")
            cfg.set_value("user", "email", "test@example.com")
        self._day = 0

    def write(self, path: str, text: str) -> None:
        target = self.root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)

    def config(self, data: dict, name: str = "_generated_ppo_trainer.yaml") -> None:
        self.write(f"verl/trainer/config/{name}", yaml.safe_dump(data, sort_keys=False))

    def rm(self, path: str) -> None:
        self.repo.git.rm("-q", path)

    def mv(self, old: str, new: str) -> None:
        (self.root / new).parent.mkdir(parents=True, exist_ok=True)
        self.repo.git.mv(old, new)

    def commit(self, subject: str) -> str:
        self._day += 1
        date = f"2026-01-{self._day:02d}T12:00:00+00:00"
        self.repo.git.add("-A")
        self.repo.git.commit("-q", "--allow-empty", "-m", subject,
                             env={"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date})
        return self.repo.head.commit.hexsha

    def tag(self, name: str) -> None:
        self.repo.create_tag(name)


def base_config() -> dict:
    return {
        "data": {"train_batch_size": 1024, "max_prompt_length": 512},
        "actor_rollout_ref": {
            "actor": {"strategy": "fsdp", "ppo_mini_batch_size": 256, "toy_load_flag": True},
            "rollout": {
                "name": "vllm",
                "skip": {"_target_": "verl.workers.config.SkipConfig", "enable": False,
                         "dump_dir": "/tmp/rollout_dump", "action": "cache", "max_dump_step": 1},
            },
        },
        "critic": {"optim": {"lr": 1e-5, "lr_warmup_steps": -1}},
        "trainer": {"project_name": "verl", "use_legacy_worker_impl": "auto"},
    }


def build_release_history(root: Path) -> History:
    """v1 -> v2 with moves, a rewrite-and-move, a consolidation, a deletion, key and module changes.

    The truth (what a curated table would say) is `EXPECTED_*` below.
    """
    h = History(root)
    h.write("README.md", "verl\n")
    h.write("examples/grpo_trainer/run_qwen3-8b.sh", script("qwen3_8b"))
    h.write("examples/grpo_trainer/run_qwen3-8b_npu.sh", script("qwen3_8b", extra="trainer.device=npu "))
    h.write("examples/grpo_trainer/run_deepseek_7b.sh", script("deepseek_llm_7b"))
    h.write("examples/grpo_trainer/run_qwen3_30b_a3b_mindspeed.sh", script("qwen3_30b_a3b", "megatron"))
    h.write("examples/toy_trainer/run_gemma.sh", script("gemma_2b"))
    h.write("examples/legacy/run_old_rm.sh", "#!/bin/bash\necho 'reward model server'\nsleep 10\n")
    h.write("recipe/dapo/run_dapo_qwen2_7b.sh", script("dapo_qwen2_7b", extra="algorithm.filter_groups.enable=True "))
    h.write("verl/__init__.py", LICENSE)
    h.write("verl/legacy/__init__.py", LICENSE)
    h.write("verl/utils/tokenizer_utils.py",
            LICENSE + "import os\n\n\ndef hf_tokenizer(path):\n    return path\n\n\n"
            "def hf_processor(path):\n    return None\n\n\ndef chat_template(name):\n    return name.upper()\n")
    h.config(base_config())
    h.commit("[init] feat: initial layout (#1)")
    h.tag("v1")

    # A move with a rewrite: git's rename detection does not pair it, the file name does.
    h.rm("examples/grpo_trainer/run_qwen3_30b_a3b_mindspeed.sh")
    h.write("examples/ascend_extras/grpo_trainer/run_qwen3_30b_a3b_mindspeed.sh",
            "#!/usr/bin/env bash\nsource /usr/local/Ascend/ascend-toolkit/set_env.sh\n"
            + "".join(f"export HCCL_OPTION_{i}=${{HCCL_OPTION_{i}:-{i * 7}}}\n" for i in range(14))
            + script("qwen3_30b_a3b_npu", "megatron", extra="actor_rollout_ref.actor.megatron.use_mbridge=True "))
    h.commit("[model] chore: refactor npu scripts (#11)")

    # Consolidation: two scripts fold into one with a normalised name.
    h.rm("examples/grpo_trainer/run_qwen3-8b.sh")
    h.rm("examples/grpo_trainer/run_qwen3-8b_npu.sh")
    h.write("examples/grpo_trainer/run_qwen3_8b_fsdp.sh",
            script("qwen3_8b", extra="trainer.device=${DEVICE:-cuda} "))
    h.commit("[misc] refactor: consolidate qwen3 scripts (#12)")

    # Plain rename: git pairs it.
    h.mv("examples/toy_trainer/run_gemma.sh", "examples/toy_trainer/run_gemma_2b_fsdp.sh")
    h.commit("[misc] chore: rename gemma script (#13)")

    # Deletion with no successor.
    h.rm("examples/legacy/run_old_rm.sh")
    h.commit("[misc] chore: drop the legacy reward server example (#14)")

    # Config: subtree move, a key moving under a new node, a removal.
    cfg = base_config()
    skip = cfg["actor_rollout_ref"]["rollout"].pop("skip")
    skip.pop("max_dump_step")
    skip["steps"] = []
    cfg["skip"] = {"rollout": skip}
    h.config(cfg)
    h.commit("[trainer] feat: top-level skip config (#15)")
    cfg["critic"]["optim"] = {"lr": 1e-5, "scheduler": {"lr_warmup_steps": -1}}
    del cfg["actor_rollout_ref"]["actor"]["toy_load_flag"]
    h.config(cfg)
    h.commit("[cfg] refactor: scheduler node, drop toy_load_flag (#16)")

    # Module move; a license-only __init__.py that git would pair with another one.
    h.mv("verl/utils/tokenizer_utils.py", "verl/utils/tokenizer/helpers.py")
    h.mv("verl/legacy/__init__.py", "verl/compat/__init__.py")
    h.write("verl/utils/tokenizer/__init__.py", LICENSE)
    h.commit("[misc] refactor: tokenizer package (#17)")

    h.write("README.md", "verl, updated\n")
    h.commit("docs: update readme")
    h.tag("v2")
    return h


EXPECTED_PATH_MOVES = {
    ("examples/grpo_trainer/run_qwen3_30b_a3b_mindspeed.sh",
     "examples/ascend_extras/grpo_trainer/run_qwen3_30b_a3b_mindspeed.sh"),
    ("examples/grpo_trainer/run_qwen3-8b.sh", "examples/grpo_trainer/run_qwen3_8b_fsdp.sh"),
    ("examples/grpo_trainer/run_qwen3-8b_npu.sh", "examples/grpo_trainer/run_qwen3_8b_fsdp.sh"),
    ("examples/toy_trainer/run_gemma.sh", "examples/toy_trainer/run_gemma_2b_fsdp.sh"),
}
EXPECTED_PATH_REMOVALS = {"examples/legacy/run_old_rm.sh"}
EXPECTED_KEY_RENAMES = {
    ("actor_rollout_ref.rollout.skip.enable", "skip.rollout.enable"),
    ("actor_rollout_ref.rollout.skip.dump_dir", "skip.rollout.dump_dir"),
    ("actor_rollout_ref.rollout.skip.action", "skip.rollout.action"),
    ("actor_rollout_ref.rollout.skip._target_", "skip.rollout._target_"),  # the subtree moves whole
    ("critic.optim.lr_warmup_steps", "critic.optim.scheduler.lr_warmup_steps"),
}
EXPECTED_KEY_REMOVALS = {"actor_rollout_ref.rollout.skip.max_dump_step", "actor_rollout_ref.actor.toy_load_flag"}
EXPECTED_MODULE_MOVES = {("verl.utils.tokenizer_utils", "verl.utils.tokenizer.helpers")}
EXPECTED_PRS = {
    "examples/grpo_trainer/run_qwen3_30b_a3b_mindspeed.sh": 11,
    "examples/grpo_trainer/run_qwen3-8b.sh": 12,
    "examples/toy_trainer/run_gemma.sh": 13,
    "examples/legacy/run_old_rm.sh": 14,
    "actor_rollout_ref.rollout.skip.*": 15,
    "critic.optim.lr_warmup_steps": 16,
    "actor_rollout_ref.actor.toy_load_flag": 16,
    "verl.utils.tokenizer_utils": 17,
}
