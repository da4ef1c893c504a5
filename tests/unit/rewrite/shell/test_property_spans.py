"""Property: on generated verl-style scripts, the shell rewriter changes only the spans it reports,
each span holds exactly what its table entry names, the output passes `bash -n` whenever the
input did, and a second run changes nothing."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from migrator.fileprocess import apply_edits
from migrator.rewrite import shell

OLD_KEYS = ["actor_rollout_ref.rollout.update_weights_bucket_megabytes", "critic.model.fsdp_config.param_offload",
            "actor_rollout_ref.rollout.enable_chunked_prefill_legacy",
            "actor_rollout_ref.rollout.engine_kwargs.vllm.enable_expert_parallel"]
KEYS = OLD_KEYS + ["trainer.nnodes", "data.train_batch_size", OLD_KEYS[0] + "_note"]
VALUES = ["1", "True", "${v}", "$((n * 2))", "'[\"console\"]'", "caf\u00e9", "\u5b9e\u9a8c"]
PATHS = ["examples/grpo_trainer/run_qwen3_30b_a3b_mindspeed.sh", "examples/grpo_trainer/run_qwen3_8b_npu.sh",
         "examples/ppo_trainer/run_deepseek_megatron.sh", "examples/other/run.sh"]

override = st.builds(lambda p, k, v: f"{p}{k}={v}", st.sampled_from(["", "+", "++"]), st.sampled_from(KEYS),
                     st.sampled_from(VALUES))
quoted = st.one_of(override, override.map(lambda o: f'"{o}"'), override.filter(lambda o: "'" not in o).map(lambda o: f"'{o}'"))
indent = st.sampled_from(["    ", "\t", "  "])


@st.composite
def fragment(draw):
    kind = draw(st.sampled_from(["list", "array", "case", "if", "func", "heredoc", "comment", "env", "path", "string"]))
    args = draw(st.lists(quoted, min_size=1, max_size=4))
    ind = draw(indent)
    if kind == "list":
        return "python3 -m verl.trainer.main_ppo \\\n" + " \\\n".join(ind + a for a in args) + "\n"
    if kind == "array":
        return "ARGS=(\n" + "".join(f"{ind}{a}\n" for a in args) + ")\nARGS+=( " + " ".join(args) + " )\n"
    if kind == "case":
        return f'case "${{DEVICE:-gpu}}" in\n{ind}npu) X={args[0]} ;;\n{ind}*)\n{ind}{ind}python3 x.py {" ".join(args)}\n{ind}{ind};;\nesac\n'
    if kind == "if":
        return f'if [ -n "${{A:-}}" ]; then\n{ind}python3 x.py {" ".join(args)}\nfi\n'
    if kind == "func":
        return f"run() {{\n{ind}python3 x.py {' '.join(args)} \"$@\"\n}}\n"
    if kind == "heredoc":
        return f"cat <<EOF\n{args[0]}\nEOF\n"
    if kind == "comment":
        return f"# {draw(st.sampled_from(KEYS))} {draw(st.sampled_from(PATHS))}\n"
    if kind == "env":
        return draw(st.sampled_from(["export VLLM_ATTENTION_BACKEND=XFORMERS\n", "export HCCL_CONNECT_TIMEOUT=1500\n",
                                     "VLLM_ATTENTION_BACKEND=XFORMERS python3 x.py\n", "export train_etp=1 # mindspeed\n"]))
    if kind == "path":
        return f"bash {draw(st.sampled_from(['', '$VERL_HOME/', '../verl/']))}{draw(st.sampled_from(PATHS))} {args[0]}\n"
    return f'S="{args[0].strip(chr(39)).strip(chr(34))} a.b=1"\n'


@st.composite
def script(draw):
    body = "".join(draw(st.lists(fragment(), min_size=1, max_size=6)))
    if draw(st.booleans()):
        body = body.replace("\n", "\r\n")
    return ("#!/bin/bash\n" + body).encode()


def _bash_ok(source: bytes) -> bool:
    return subprocess.run(["bash", "-n"], input=source.replace(b"\r\n", b"\n"), capture_output=True).returncode == 0


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(source=script())
def test_only_reported_spans_change(source, core_mappings):
    located = shell.locate(source, core_mappings)
    new, applied, rejected = apply_edits(source, list(located.edits))
    assert not rejected
    # Outside the spans, the output is the input: walk both in step.
    cursor_in = cursor_out = 0
    for edit in applied:
        gap = edit.start - cursor_in
        assert new[cursor_out:cursor_out + gap] == source[cursor_in:edit.start]
        cursor_out += gap + len(edit.replacement)
        assert new[cursor_out - len(edit.replacement):cursor_out] == edit.replacement
        cursor_in = edit.end
    assert new[cursor_out:] == source[cursor_in:]
    # Each replaced span is exactly what its entry names.
    for edit in applied:
        old = source[edit.start:edit.end]
        if edit.kind == "key-rename":
            # A rename may take the `+` before the key with it: the new key exists, Hydra refuses `+` there.
            key = old[1:] if old.startswith(b"+") and not edit.replacement.startswith(b"+") else old
            change = core_mappings.key(key.decode())
            assert change is not None and change.new.encode() == edit.replacement
        elif edit.kind == "plus-dropped":
            assert old == b"+" and edit.replacement == b""
        elif edit.kind == "path-move" and edit.start != edit.end:
            assert core_mappings.path(old.decode()) is not None or old.endswith(b".sh")
        elif edit.kind == "key-removal":
            assert b"enable_chunked_prefill_legacy" in old
    if _bash_ok(source):
        assert _bash_ok(new)
    again = shell.locate(new, core_mappings)
    assert apply_edits(new, list(again.edits))[0] == new
