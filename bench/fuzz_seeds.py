"""Seeds and mutation tokens for bench/fuzz_shell.py: verl-style files of every kind the rewriters read,
and the hostile shapes that took the interpreter or the run down (docs/robustness.md).

Every seed holds names the built-in tables change up to v0.8.0 (an old key, an old module, an old script
path), so the rewriters get past their prefilters and parse the file.
"""

from __future__ import annotations

import json

OLD_KEY = b"actor_rollout_ref.rollout.update_weights_bucket_megabytes"
OLD_MODULE = b"verl.utils.reward_score.math"
OLD_SCRIPT = b"examples/grpo_trainer/run_qwen3_30b_a3b_mindspeed.sh"

SHELL = [
    b"#!/bin/bash\nset -x\nexport ASCEND_RT_VISIBLE_DEVICES=0\nexport VLLM_ATTENTION_BACKEND=XFORMERS\n"
    b"python3 -m verl.trainer.main_ppo \\\n    actor_rollout_ref.rollout.update_weights_bucket_megabytes=512 \\\n"
    b"    actor_rollout_ref.rollout.engine_kwargs.vllm.enable_expert_parallel=True \\\n"
    b"    data.val_batch_size=16 \\\n    trainer.n_gpus_per_node=8 $@\n",
    b"ARGS=(\n  data.val_batch_size=1\n  \"actor_rollout_ref.rollout.update_weights_bucket_megabytes=$B\"\n)\n"
    b"case $1 in\n  a) bash examples/grpo_trainer/run_qwen3_30b_a3b_mindspeed.sh ;;\n  *) echo no ;;\nesac\n",
    b"run() {\n\tlocal x=$(echo ~data.val_batch_size)\n\tpython3 -m verl.trainer.main_ppo ${ARGS[@]} \"$@\"\n}\n"
    b"cat <<'EOF'\nactor_rollout_ref.rollout.update_weights_bucket_megabytes=1\nEOF\n"
    b"if [ -n \"$X\" ]; then nohup bash examples/grpo_trainer/run_qwen2_5_vl-7b-sglang.sh & fi\n",
    b"# see examples/grpo_trainer/run_qwen3_30b_a3b_mindspeed.sh and actor_rollout_ref.rollout."
    b"update_weights_bucket_megabytes\r\npython3 -m x 'data.val_batch_size=2' \\\r\n  a.b=$'c\\n'\r\n",
]

PYTHON = [
    b"import verl.utils.reward_score.math\nfrom verl.utils.reward_score import math, gsm8k\n"
    b"import subprocess\n\n\ndef launch(cfg):\n    if cfg.x:\n        pass\n    elif cfg.y:\n        return 1\n"
    b"    subprocess.run([\"python3\", \"-m\", \"verl.trainer.main_ppo\",\n"
    b"                    \"actor_rollout_ref.rollout.update_weights_bucket_megabytes=512\"])\n"
    b"    return f\"{cfg.a} +actor_rollout_ref.rollout.update_weights_bucket_megabytes={cfg.b:>{w}}\"\n",
    b"# -*- coding: utf-8 -*-\nfrom verl.utils.reward_score.math import compute_score as cs  # old module\n"
    b"x = cfg.actor_rollout_ref.rollout.update_weights_bucket_megabytes\n"
    b"s = 'bash examples/grpo_trainer/run_qwen3_30b_a3b_mindspeed.sh'\nclass A:\n    y = [1, (2, {3: 4})]\n",
]

YAML = [
    b"# @package _global_\nactor_rollout_ref:\n  rollout:\n    update_weights_bucket_megabytes: 512\n"
    b"    name: vllm\n  actor:\n    strategy: fsdp\ntrainer:\n  total_epochs: 1\n  cmd: \"python3 -m "
    b"verl.trainer.main_ppo actor_rollout_ref.rollout.update_weights_bucket_megabytes=1\"\n",
    b"defaults:\n  - ppo_trainer\n  - _self_\nactor_rollout_ref:\n  rollout: {update_weights_bucket_megabytes: 1}\n"
    b"x: &a {b: 1}\ny: *a\nwhen: 2001-12-14\nbig: 12345678901234567890\n",
    b"{actor_rollout_ref: {rollout: {update_weights_bucket_megabytes: 512}}}\n",
    b"steps:\n  - run: bash examples/grpo_trainer/run_qwen3_30b_a3b_mindspeed.sh\n"
    b"  - run: |\n      python3 -m verl.trainer.main_ppo \\\n        actor_rollout_ref.rollout.update_weights_bucket_megabytes=1\n",
]


def notebook(*cells: list[str], metadata: str = "{}") -> bytes:
    """A notebook of code cells, each given as its source lines (JSON-escaped as they are)."""
    code = [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": lines}
            for lines in cells]
    text = json.dumps({"cells": code, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1)
    return text.replace('"metadata": {}, "nbformat"', f'"metadata": {metadata}, "nbformat"').encode()


NOTEBOOK = [
    notebook(["import verl.utils.reward_score.math\n", "!python3 -m verl.trainer.main_ppo "
              "actor_rollout_ref.rollout.update_weights_bucket_megabytes=1\n"],
             ["%%bash\n", "bash examples/grpo_trainer/run_qwen3_30b_a3b_mindspeed.sh\n"]),
    notebook(["x = '\udce9'\n", "!echo actor_rollout_ref.rollout.update_weights_bucket_megabytes=2\n"]).replace(
        b"\\udce9", b"\\ud800\\u0041"),
]

MARKDOWN = [
    b"# Run\n\n```bash\npython3 -m verl.trainer.main_ppo actor_rollout_ref.rollout.update_weights_bucket_megabytes=1\n"
    b"```\n\n1. Config:\n\n   ```yaml\n   actor_rollout_ref:\n     rollout:\n       update_weights_bucket_megabytes: 1\n"
    b"   ```\n\n2. Code:\n\n   ```python\n   from verl.utils.reward_score import math\n   ```\n"
    b"\nSee examples/grpo_trainer/run_qwen3_30b_a3b_mindspeed.sh.\n",
]

SEEDS = SHELL + PYTHON + YAML + NOTEBOOK + MARKDOWN

TOKENS = [b"\\\n", b"\\", b"\n", b"\r\n", b"\r", b"'", b'"', b"$'", b"`", b"$(", b")", b"${", b"}", b"((", b"))",
          b"<<EOF\n", b"\nEOF\n", b"<<-'X'\n", b"#", b" ", b"\t", b";", b"&&", b"|", b"=", b"~", b"+", b"++",
          b"case x in\n", b";;", b"esac\n", b"if true; then\n", b"fi\n", b"(", b"[", b"]", b"\x00", b"\xff",
          b"\xef\xbb\xbf", "名".encode(), OLD_KEY + b"=1", b"data.val_batch_size=2", b"~data.val_batch_size",
          OLD_SCRIPT, b"bash ", b"export VLLM_ATTENTION_BACKEND=XFORMERS\n", b"ASCEND_X=1 ",
          b"actor_rollout_ref.rollout.engine_kwargs.vllm.enable_expert_parallel=1", b"-m verl.trainer.main_ppo",
          # Python, YAML, JSON
          b"import " + OLD_MODULE + b"\n", b"from verl.utils.reward_score import math\n", b"f\"{", b"!r:", b"\"\"\"",
          b"lambda: ", b" if x else ", b"elif x:\n    pass\n", b"    ", b"{", b": ", b"- ", b"&a ", b"*a", b"!!set ",
          b"? ", b"---\n", b"# @package x\n", b"{\"cells\": [", b"\"source\": [", b"\\ud800", b"\\u0041", b"\\\"",
          b"```python\n", b"```yaml\n", b"\n```\n", b".. code-block:: python\n\n    ", b"  update_weights_bucket_megabytes: ",
          b"rollout:\n", b"actor_rollout_ref:\n"]

# The shapes that crashed, hung or failed the run (each spliced in whole: they are past a size or a depth).
HOSTILE = [b"x = " + b"-" * 50_000 + b"a\n", b"x = a" + b"+a" * 3_500 + b"\n", b"(" * 2_000 + b")" * 2_000,
           b"[" * 200 + b"]" * 200, b"1" * 5_001, b"2001-13-45", b"a" * 32_000, b"verl/" * 4_000,
           b"x=(\n" * 2_000, b"\n" * 5_000, b" " * 20_000 + b"x", b"\\ud800", b"!!set\n? a\n",
           b"{actor_rollout_ref: {rollout: {update_weights_bucket_megabytes: 1}}}", b"[" * 100_000,
           b"[" * 600 + b"]" * 600, b"".join(b" " * i + b"k:\n" for i in range(600))]
