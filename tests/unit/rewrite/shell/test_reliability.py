"""Hostile inputs, shell (docs/robustness.md, "Hostile use"): each test fails without the guard it pins."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from migrator.tablecache import composed
from tests.helpers import HANG_GUARD

try:
    from migrator.fileprocess import process_file
except ImportError:  # before process_file moved out of the engine module
    from migrator.engine import process_file

MAPPINGS = composed(None, "v0.8.0", ())[0]
SGLANG = b"examples/grpo_trainer/run_qwen2_5_vl-7b-sglang.sh"
SGLANG_NEW = b"examples/grpo_trainer/run_qwen2_5_vl_7b_fsdp.sh"
# The built-in move's presets (the old script's backend and hard-coded values), in table order.
PRESETS = (b"INFER_BACKEND=sglang EXPERIMENT_NAME=qwen2_5_vl_7b_function_rm PROJECT_NAME=verl_grpo_example_geo3k"
           b" ROLLOUT_GPU_MEM_UTIL=0.85 ROLLOUT_TP=1")
# The new script is not proven to train what the old one trained (facts/script-moves.yaml): the move, and
# so its presets, is made only with --unsafe-fixes (a manual step otherwise, tests/unit/rewrite/test_moved_scripts.py).
UNSAFE = composed(None, "v0.8.0", ())[0]
UNSAFE.unsafe_fixes = True
assert not MAPPINGS.unsafe_fixes


def run(source: bytes, mappings=MAPPINGS):
    return process_file("run.sh", "run.sh", mappings, data=source)


# -- 8: env presets and the `time` keyword -------------------------------------------------------------
@pytest.mark.parametrize("source, expected", [
    (b"time bash " + SGLANG + b"\n", b"time " + PRESETS + b" bash " + SGLANG_NEW + b"\n"),
    (b"time -p bash " + SGLANG + b" x=1\n", b"time -p " + PRESETS + b" bash " + SGLANG_NEW + b" x=1\n"),
    (b"time -p -- bash " + SGLANG + b"\n", b"time -p -- " + PRESETS + b" bash " + SGLANG_NEW + b"\n"),
    (b"time nohup bash " + SGLANG + b" &\n", b"time " + PRESETS + b" nohup bash " + SGLANG_NEW + b" &\n"),
    # `nohup`, `exec`, `srun` are commands that pass their environment on: a prefix stays valid.
    (b"nohup bash " + SGLANG + b" &\n", PRESETS + b" nohup bash " + SGLANG_NEW + b" &\n"),
    (b"exec bash " + SGLANG + b"\n", PRESETS + b" exec bash " + SGLANG_NEW + b"\n"),
    (b"srun bash " + SGLANG + b"\n", PRESETS + b" srun bash " + SGLANG_NEW + b"\n"),
])
def test_env_presets_go_after_the_time_keyword(source, expected):
    result = run(source, UNSAFE)
    assert result.after == expected


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
@pytest.mark.parametrize("runner", [b"time", b"time -p", b"nohup", b"exec", b"source", b"."])
def test_env_presets_reach_the_script_under_each_runner(tmp_path, runner):
    script = tmp_path / SGLANG.decode()
    script.parent.mkdir(parents=True)
    (tmp_path / SGLANG_NEW.decode()).write_bytes(b'echo "backend=$INFER_BACKEND"\n')
    runs = b"" if runner in (b"source", b".") else b"bash "
    result = run(runner + b" " + runs + SGLANG + b"\n", UNSAFE)
    proc = subprocess.run(["bash", "-c", result.after.decode()], cwd=tmp_path, capture_output=True, timeout=HANG_GUARD)
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
# A built-in move without env presets (a move with presets is a manual step where no command runs it).
OLD = b"examples/grpo_trainer/run_glm41v_9b.sh"
NEW = b"examples/grpo_trainer/run_glm4_1v_9b_fsdp.sh"


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
    # glued before it, with no `/` between: another file
    b'bash "my"' + OLD + b"\n",
    b"bash ${X}" + OLD + b"\n",
    b'bash "${X}' + OLD + b'"\n',
    b"bash x\\\n" + OLD + b"\n",
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
    b'bash "$VERL_HOME"/' + OLD + b"\n",
    b'bash "$VERL_HOME/"' + OLD + b"\n",
    b"bash ${VERL_HOME}/" + OLD + b"\n",
    b'bash "${VERL_HOME}/' + OLD + b'"\n',
    b"bash \\\n  " + OLD + b"\n",
    b"cat <<EOF\nbash " + OLD + b"\nEOF\n",
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


# -- 7: a variable rename is all or nothing ------------------------------------------------------------------
EVERY_FORM = b"""# mindspeed
read -r train_etp
read -r -p prompt -a train_etp
[[ train_etp -gt 1 ]] && echo big
echo ${arr[train_etp]} ${!train_etp} "$train_etp"
arr[train_etp]=3
printf -v train_etp '%s' 2
let train_etp=train_etp+1 "train_etp += 2"
declare -n ref=train_etp
unset train_etp
unset -v train_etp
export train_etp
f() { local train_etp=1; }
echo $(( train_etp + 1 ))
(( train_etp++ ))
for train_etp in 1 2; do :; done
mapfile -t train_etp < /dev/null
getopts ab train_etp
"""


def test_every_use_of_a_renamed_variable_is_renamed():
    result = run(EVERY_FORM)
    assert result.status == "changed", (result.status, result.reason, result.findings)
    assert result.after == EVERY_FORM.replace(b"train_etp", b"actor_etp")
    assert not result.findings


@pytest.mark.parametrize("use", [
    b"echo train_etp\n",
    b"eval 'train_etp=3'\n",
    b"[ train_etp -gt 1 ]\n",
    b"declare -A arr\necho ${arr[train_etp]}\n",
    b"read -p train_etp x\n",
    b"unset -f train_etp\n",
    b"cat <<EOF\ntrain_etp\nEOF\n",
])
def test_a_use_that_cannot_be_renamed_makes_the_rename_one_manual_step(use):
    source = b"# mindspeed\ntrain_etp=2\nread -r train_etp\n" + use + b"echo $train_etp\n"
    result = run(source)
    assert result.status == "unchanged", result.after
    manual = [f for f in result.findings if "train_etp" in f.message]
    assert len(manual) == 1 and manual[0].severity == "manual", result.findings
    last = source.count(b"\n")
    lines = [n + 1 for n, line in enumerate(source.split(b"\n")) if b"train_etp" in line and not line.startswith(b"#")]
    assert f"lines {', '.join(map(str, lines))}" in manual[0].message, manual[0].message
    assert lines[-1] == last


def test_comments_do_not_block_a_variable_rename():
    source = b"# mindspeed: train_etp is the expert TP size\ntrain_etp=2\necho $train_etp\n"
    assert run(source).after == b"# mindspeed: train_etp is the expert TP size\nactor_etp=2\necho $actor_etp\n"


# -- 6: key removals only where Hydra reads overrides ------------------------------------------------------
LEGACY = b"trainer.use_legacy_worker_impl"


@pytest.mark.parametrize("source", [
    b"grep -q " + LEGACY + b"=auto run.log\n",
    b"cp a " + LEGACY + b"=x\n",
    b"my_launcher --override " + LEGACY + b"=v data.x=1\n",
    b"python3 my_train.py " + LEGACY + b"=auto\n",
    b"bash my_run.sh " + LEGACY + b"=auto\n",
    b"echo python3 -m verl.trainer.main_ppo " + LEGACY + b"=auto\n",
    b"FILES=(a " + LEGACY + b"=auto)\nls \"${FILES[@]}\"\n",
    b"torchrun --nproc_per_node=8 my_sft.py " + LEGACY + b"=auto\n",
    b"$RUN -m my_pkg " + LEGACY + b"=auto\n",
    # before the entry point: not an override of it
    b"nohup " + LEGACY + b"=auto python3 -m verl.trainer.main_ppo\n",
])
def test_a_removed_key_outside_a_verl_command_is_reported_not_deleted(source):
    result = run(source)
    assert result.status == "unchanged", result.after
    assert [f.message for f in result.findings if f.kind == "key-removal"] == [
        "trainer.use_legacy_worker_impl was removed; delete it by hand"], result.findings


def test_a_removed_key_of_a_module_verl_never_shipped_is_left_alone():
    # `-m my_pkg.train` composes its own config: its keys are left alone, and a note says why (VM157).
    result = run(b"python3 -m my_pkg.train " + LEGACY + b"=auto\n")
    assert result.status == "unchanged", result.after
    assert [(f.code, f.severity) for f in result.findings] == [("VM157", "info")]
    assert LEGACY.decode() in result.findings[0].message


@pytest.mark.parametrize("command", [
    b"python3 -m verl.trainer.main_ppo",
    b"python -m recipe.dapo.main_dapo",
    b"python3 -u -X dev -m verl.trainer.main_ppo",
    b"python /src/verl/verl/trainer/main_ppo.py",
    b"python3 recipe/dapo/main_dapo.py",
    b"torchrun --nproc_per_node=8 -m verl.trainer.main_ppo",
    b"torchrun --standalone --nnodes=1 verl/trainer/main_ppo.py",
    b"python -m torch.distributed.run --nproc_per_node 8 -m verl.trainer.main_ppo",
    b"bash examples/grpo_trainer/run_qwen3_8b_fsdp.sh",
    b"nohup bash recipe/dapo/run_dapo.sh",
    b"ray job submit --address=http://x:8265 --runtime-env=r.yaml -- python3 -m verl.trainer.main_ppo",
    b"PYTHONUNBUFFERED=1 nohup time python3 -m verl.trainer.main_ppo",
    b'"$PYTHON" -m verl.trainer.main_ppo',
    b"deepspeed --num_gpus 8 verl/trainer/main_ppo.py",
    b"accelerate launch -m verl.trainer.main_ppo",
    b"${PY:-python3} verl/trainer/main_ppo.py",
])
def test_a_removed_key_of_a_verl_entry_point_is_deleted(command):
    # main_ppo in every launch form: the removed key is a PPO key (SFT's entry point has its own scope).
    result = run(command + b" data.x=1 " + LEGACY + b"=auto trainer.y=2\n")
    assert result.after == command + b" data.x=1 trainer.y=2\n", (result.after, result.findings)


@pytest.mark.parametrize("source, expected", [
    # an array expanded into a verl command
    (b"ARGS=(a " + LEGACY + b"=auto)\npython3 -m verl.trainer.main_ppo \"${ARGS[@]}\"\n",
     b"ARGS=(a)\npython3 -m verl.trainer.main_ppo \"${ARGS[@]}\"\n"),
    (b"ARGS=(a " + LEGACY + b"=auto)\npython3 -m verl.trainer.main_ppo ${ARGS[@]} x.y=1\n",
     b"ARGS=(a)\npython3 -m verl.trainer.main_ppo ${ARGS[@]} x.y=1\n"),
    (b"ARGS=(" + LEGACY + b"=auto a)\npython3 -m verl.trainer.main_ppo $ARGS\n",
     b"ARGS=( a)\npython3 -m verl.trainer.main_ppo $ARGS\n"),
    # an array of nothing but overrides, used elsewhere (or in a function)
    (b"OVR=(data.x=1 " + LEGACY + b"=auto)\nrun_it \"${OVR[@]}\"\n", b"OVR=(data.x=1)\nrun_it \"${OVR[@]}\"\n"),
])
def test_a_removed_key_in_an_override_array_is_deleted(source, expected):
    assert run(source).after == expected


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
@pytest.mark.parametrize("form", [
    b'read -r train_etp <<< 5; echo "$train_etp"',
    b"printf -v train_etp '%s' 7; echo $train_etp",
    b'let train_etp=train_etp+1 "train_etp += 2"; echo $train_etp',
    b"declare -n ref=train_etp; ref=9; echo $train_etp",
    b"[[ train_etp -gt 1 ]] && echo big",
    b"arr=(a b c d); echo ${arr[train_etp]}; arr[train_etp]=z; echo ${arr[@]}",
    b"mapfile -t train_etp < <(printf 'x\\ny\\n'); echo ${train_etp[1]}",
    b"set -- -b; getopts ab train_etp; echo $train_etp",
    b'unset train_etp; echo "${train_etp:-unset}"',
    b"f() { local train_etp=1; echo $train_etp; }; f; echo $train_etp",
    b"x=2; echo $(( train_etp * x )); (( train_etp++ )); echo ${!train_etp} $train_etp",
])
def test_a_renamed_variable_prints_what_the_original_printed(form):
    source = b"# mindspeed\ntrain_etp=2\n" + form + b"\n"
    result = run(source)
    assert result.status == "changed" and b"train_etp" not in result.after.split(b"\n", 1)[1], result.findings
    outputs = [subprocess.run(["bash", "-c", script], capture_output=True, timeout=HANG_GUARD).stdout
               for script in (source, result.after)]
    assert outputs[0] == outputs[1] and outputs[0], outputs


def test_a_changed_script_is_parsed_by_tree_sitter_once(monkeypatch):
    # The locator, the Hydra review and the proof that the edits keep bash's verdict read the same bytes:
    # one parse of them (a 50 MB script spent half a second on a second one).
    from migrator.rewrite.shell import syntax

    source = b"python3 -m verl.trainer.main_ppo actor_rollout_ref.rollout.update_weights_bucket_megabytes=512 x=1\n"
    real = syntax._parser()
    calls = []

    class Counting:
        def parse(self, data):
            calls.append(bytes(data))
            return real.parse(data)

    syntax._LAST.clear()
    monkeypatch.setattr(syntax, "_parser", lambda: Counting())
    result = run(source)
    assert result.status == "changed" and calls.count(source) == 1


@pytest.mark.parametrize("spelling", [b"--config-name ppo_megatron_trainer", b"--config-name=ppo_megatron_trainer",
                                      b"-cn ppo_megatron_trainer", b"-cn=ppo_megatron_trainer"])
def test_hydras_short_config_name_flag_is_migrated_like_the_long_one(spelling):
    # `-cn` went unseen: the config name was neither moved nor reported.
    result = run(b"python3 -m verl.trainer.main_ppo " + spelling + b" trainer.total_epochs=1\n")
    assert result.after == b"python3 -m verl.trainer.main_ppo trainer.total_epochs=1 model_engine=megatron\n"
    flag = spelling.split(b" ")[0].split(b"=")[0].decode()
    assert [(e.kind, e.message) for e in result.edits if e.kind == "config-name-move"][0] == (
        "config-name-move", f"removed {flag}=ppo_megatron_trainer (now ppo_trainer with model_engine=megatron)")


def test_a_short_config_name_of_the_users_own_blocks_a_pin_and_says_so():
    # The moved generation entry point pins a default its new config changed; a config of the user's own
    # (`-cn mine`) may set that key, so the pin is a manual step naming the flag.
    from migrator.rewrite.shell.launches import pin_blocker

    words = [b"python3", b"-m", b"verl.trainer.main_ppo", b"-cn", b"mine", b"a.b=1"]
    assert pin_blocker(words, None) == b"-cn"
    assert pin_blocker([b"python3", b"-m", b"verl.trainer.main_ppo", b"-cp", b"verl/trainer/config", b"a.b=1"],
                       None) is None
