"""Reliability round two, shell: each test pins a defect found by review, failing before its fix."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from migrator.cli import load_mappings
from migrator.engine import process_file

MAPPINGS = load_mappings(None, "v0.8.0", ())
SGLANG = b"examples/grpo_trainer/run_qwen2_5_vl-7b-sglang.sh"
SGLANG_NEW = b"examples/grpo_trainer/run_qwen2_5_vl_7b_fsdp.sh"


def run(source: bytes):
    return process_file("run.sh", "run.sh", MAPPINGS, data=source)


# -- 8: env presets and the `time` keyword -------------------------------------------------------------
@pytest.mark.parametrize("source, expected", [
    (b"time bash " + SGLANG + b"\n", b"time INFER_BACKEND=sglang bash " + SGLANG_NEW + b"\n"),
    (b"time -p bash " + SGLANG + b" x=1\n", b"time -p INFER_BACKEND=sglang bash " + SGLANG_NEW + b" x=1\n"),
    (b"time -p -- bash " + SGLANG + b"\n", b"time -p -- INFER_BACKEND=sglang bash " + SGLANG_NEW + b"\n"),
    (b"time nohup bash " + SGLANG + b" &\n", b"time INFER_BACKEND=sglang nohup bash " + SGLANG_NEW + b" &\n"),
    # `nohup`, `exec`, `srun` are commands that pass their environment on: a prefix stays valid.
    (b"nohup bash " + SGLANG + b" &\n", b"INFER_BACKEND=sglang nohup bash " + SGLANG_NEW + b" &\n"),
    (b"exec bash " + SGLANG + b"\n", b"INFER_BACKEND=sglang exec bash " + SGLANG_NEW + b"\n"),
    (b"srun bash " + SGLANG + b"\n", b"INFER_BACKEND=sglang srun bash " + SGLANG_NEW + b"\n"),
])
def test_env_presets_go_after_the_time_keyword(source, expected):
    result = run(source)
    assert result.after == expected


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
@pytest.mark.parametrize("runner", [b"time", b"time -p", b"nohup", b"exec", b"source", b"."])
def test_env_presets_reach_the_script_under_each_runner(tmp_path, runner):
    script = tmp_path / SGLANG.decode()
    script.parent.mkdir(parents=True)
    (tmp_path / SGLANG_NEW.decode()).write_bytes(b'echo "backend=$INFER_BACKEND"\n')
    runs = b"" if runner in (b"source", b".") else b"bash "
    result = run(runner + b" " + runs + SGLANG + b"\n")
    proc = subprocess.run(["bash", "-c", result.after.decode()], cwd=tmp_path, capture_output=True, timeout=30)
    assert b"backend=sglang" in proc.stdout, (result.after, proc.stderr)


# -- 5: a removed key whose word a `\\` continuation splits ------------------------------------------------
@pytest.mark.parametrize("source", [
    b"python3 -m verl.trainer.main_ppo trainer.use_legacy_worker_impl=\\\nauto data.x=1\n",
    b"python3 -m verl.trainer.main_ppo trainer.use_legacy_worker_impl=\\\n\\\nauto data.x=1\n",
    b"python3 -m verl.trainer.main_ppo trainer.use_legacy_worker_impl=\\\r\nauto data.x=1\r\n",
    b"python3 -m verl.trainer.main_ppo a.b=1 trainer.use_legacy_worker_impl=\\\nauto\n",
    # glued in front: bash reads `e~trainer...` as one word
    b"python3 -m verl.trainer.main_ppo e\\\n~trainer.use_legacy_worker_impl k=1\n",
    b"ARGS=(a.b=1 trainer.use_legacy_worker_impl=\\\nauto)\n",
])
def test_a_removed_key_split_by_a_continuation_is_a_manual_step(source):
    result = run(source)
    assert result.status == "unchanged", result.after
    assert any("trainer.use_legacy_worker_impl was removed; delete it by hand" in f.message
               for f in result.findings), result.findings


def test_a_removed_key_before_a_continuation_that_ends_the_word_is_removed():
    source = b"python3 -m verl.trainer.main_ppo \\\n  trainer.use_legacy_worker_impl=auto \\\n  data.x=1\n"
    assert run(source).after == b"python3 -m verl.trainer.main_ppo \\\n  data.x=1\n"


# -- 10: a moved path with something glued after it ----------------------------------------------------
OLD = b"examples/grpo_trainer/run_qwen3-8b.sh"
NEW = b"examples/grpo_trainer/run_qwen3_8b_fsdp.sh"


@pytest.mark.parametrize("source", [
    b'bash "' + OLD + b"\"'.orig'\n",
    b"bash " + OLD + b"$EXT\n",
    b'bash "' + OLD + b'${EXT}"\n',
    b"bash " + OLD + b'"$EXT"\n',
    b"bash " + OLD + b"\\\n.orig\n",
    b"bash " + OLD + b"\\.orig\n",
    b"bash '" + OLD + b"$EXT'\n",
    b"cp " + OLD + b"$(date +%s) /tmp\n",
    b"S=" + OLD + b"$EXT\n",
    b"S=\"" + OLD + b"\"$EXT\n",
])
def test_a_path_with_text_glued_after_it_is_reported_not_moved(source):
    result = run(source)
    assert result.status == "unchanged", result.after
    assert any(f.kind == "path-move" for f in result.findings), result.findings


@pytest.mark.parametrize("source", [
    b'bash "' + OLD + b'" x\n',
    b"bash " + OLD + b"\\\n  x=1\n",
    b"S=\"" + OLD + b" --flag\"\n",
    b"bash '" + OLD + b"';\n",
])
def test_a_path_that_is_the_whole_word_is_moved(source):
    result = run(source)
    assert result.after == source.replace(OLD, NEW)


@pytest.mark.parametrize("source", [
    b'PATH_ = "' + OLD + b'\\x2eorig"\n',
    b'PATH_ = "' + OLD + b'\\056orig"\n',
    b'PATH_ = "' + OLD + b'" ".orig"\n',
    b'PATH_ = ("' + OLD + b'"\n         ".orig")\n',
    b'PATH_ = f"' + OLD + b'{ext}"\n',
    b'PATH_ = "' + OLD + b'" f"{ext}"\n',
    b'PATH_ = "' + OLD + b'\\\n.orig"\n',
])
def test_python_path_with_text_glued_after_it_is_reported_not_moved(source):
    result = process_file("train.py", "train.py", MAPPINGS, data=source)
    assert result.status == "unchanged", result.after
    assert any(f.kind == "path-move" for f in result.findings), result.findings


@pytest.mark.parametrize("source", [
    b'PATH_ = "' + OLD + b'"\n',
    b'CMD = "bash ' + OLD + b'\\n"\n',
    b'CMD = "bash " "' + OLD + b'" " x=1"\n',
    b'CMD = f"bash ' + OLD + b' {args}"\n',
])
def test_python_path_that_is_the_whole_word_is_moved(source):
    result = process_file("train.py", "train.py", MAPPINGS, data=source)
    assert result.after == source.replace(OLD, NEW)
