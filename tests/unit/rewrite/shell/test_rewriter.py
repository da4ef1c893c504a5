"""Short cases for the shell rewriter, django-upgrade style: check_transformed / check_noop."""

from __future__ import annotations

import pytest

from migrator.fileprocess import apply_edits, process_file
from migrator.rewrite import shell


def rewrite(source: str, mappings) -> tuple[str, list]:
    located = shell.locate(source.encode(), mappings)
    new, _, rejected = apply_edits(source.encode(), list(located.edits))
    assert not rejected
    return new.decode(), list(located.findings)


def check_transformed(before: str, after: str, mappings) -> list:
    actual, findings = rewrite(before, mappings)
    assert actual == after
    return findings


def check_noop(source: str, mappings) -> list:
    actual, findings = rewrite(source, mappings)
    assert actual == source
    return findings


BUCKET = "actor_rollout_ref.rollout.update_weights_bucket_megabytes"
NEW_BUCKET = "actor_rollout_ref.rollout.checkpoint_engine.update_weights_bucket_megabytes"
MINDSPEED = "examples/grpo_trainer/run_qwen3_30b_a3b_mindspeed.sh"
PPO = "python3 -m verl.trainer.main_ppo"
NEW_MINDSPEED = "examples/ascend_extras/grpo_trainer/run_qwen3_30b_a3b_mindspeed.sh"


def test_plain_argument(core_mappings):
    check_transformed(f"python3 -m verl.trainer.main_ppo {BUCKET}=1\n", f"python3 -m verl.trainer.main_ppo {NEW_BUCKET}=1\n", core_mappings)


def test_prefixes_are_kept(core_mappings):
    # (a `+` goes where the new config declares the key: Hydra would refuse to add it over itself)
    check_transformed(f"{PPO} +{BUCKET}=1 ++{BUCKET}=2 ~{BUCKET}\n", f"{PPO} {NEW_BUCKET}=1 ++{NEW_BUCKET}=2 ~{NEW_BUCKET}\n",
                      core_mappings)


def test_quoted_forms(core_mappings):
    check_transformed(f"{PPO} \"{BUCKET}=${{v}}\" '{BUCKET}=v' {BUCKET}=\"$v\"\n",
                      f"{PPO} \"{NEW_BUCKET}=${{v}}\" '{NEW_BUCKET}=v' {NEW_BUCKET}=\"$v\"\n", core_mappings)


def test_ansi_c_string(core_mappings):
    check_transformed(f"{PPO} $'{BUCKET}=1'\n", f"{PPO} $'{NEW_BUCKET}=1'\n", core_mappings)


def test_several_overrides_in_one_string(core_mappings):
    check_transformed(f'ARGS="a.b=1 {BUCKET}=2\t{BUCKET}=3"\n{PPO} $ARGS\n',
                      f'ARGS="a.b=1 {NEW_BUCKET}=2\t{NEW_BUCKET}=3"\n{PPO} $ARGS\n', core_mappings)


def test_subtree_rename(core_mappings):
    check_transformed(f"{PPO} critic.model.fsdp_config.param_offload=True\n", f"{PPO} critic.fsdp.param_offload=True\n",
                      core_mappings)


def test_subtree_root_itself_is_not_a_leaf_override(core_mappings):
    check_transformed(f"{PPO} critic.model.fsdp_config={{}}\n", f"{PPO} critic.fsdp={{}}\n", core_mappings)


@pytest.mark.parametrize("source", [
    f"echo {BUCKET}=1\n", f"grep -q {BUCKET}=1 run.log\n", f"cp a {BUCKET}=1\n", f"printf '%s' {BUCKET}=1\n",
    f"my_launcher --override {BUCKET}=1\n", f"X={BUCKET}=1\necho $X\n", f"export X={BUCKET}=1\n",
    f"ARGS=\"{BUCKET}=1\"\n",
    f"train() {{\n  {PPO} trainer.nnodes=1\n}}\ntrain {BUCKET}=1\n",  # a function that drops its arguments
    f"FILES=(notes.txt {BUCKET}=1)\ncat \"${{FILES[@]}}\"\n",  # an array no verl command expands
    # a word, a variable or a function that names a path under verl/ runs no verl entry point
    f"python3 train.py --data /root/verl/data {BUCKET}=1\n", f"CKPT=verl/ckpt\n$CKPT {BUCKET}=1\n",
    f"save() {{\n  cp \"$@\" /data/verl/out\n}}\nsave {BUCKET}=1\n",
])
def test_a_rename_where_no_verl_command_reads_the_text_is_a_manual_step_with_the_new_key(core_mappings, source):
    # The removal rule (docs/rewriters.md): only where Hydra reads the override is it edited.
    (finding,) = check_noop(source, core_mappings)
    assert finding.kind == "key-rename" and finding.severity == "manual"
    assert f"{BUCKET} -> {NEW_BUCKET}: not edited here, where no verl command reads it" in finding.message
    assert f"write `{NEW_BUCKET}` in its place" in finding.message


@pytest.mark.parametrize("source", [
    f"X={BUCKET}=1\n{PPO} $X\n", f"export X=\"{BUCKET}=1\"\n{PPO} \"$X\" \"$@\"\n",
    f'CMD="{PPO} {BUCKET}=1"\n$CMD trainer.nnodes=1\n', f'sbatch --wrap "{PPO} {BUCKET}=1"\n',
    f"cat <<EOF > run.sh\n{PPO} {BUCKET}=1\nEOF\n", f"# {PPO} {BUCKET}=1\n",
    f'train() {{\n  {PPO} trainer.nnodes=1 "$@"\n}}\ntrain {BUCKET}=1\n',  # a function that hands on "$@"
    f'CMD="{PPO}"\neval "$CMD {BUCKET}=1"\n',
    f"ARGS=(--flag {BUCKET}=1)\n{PPO} \"${{ARGS[@]}}\"\n", f"ARGS=({BUCKET}=1 trainer.nnodes=2)\n",
    f"CMD=({PPO} {BUCKET}=1)\n\"${{CMD[@]}}\" trainer.nnodes=1\n",
])
def test_a_rename_where_a_verl_command_reads_the_text_is_made(core_mappings, source):
    check_transformed(source, source.replace(BUCKET, NEW_BUCKET), core_mappings)


def test_longer_key_is_untouched(core_mappings):
    check_noop(f"x {BUCKET}_note=1 {BUCKET}.sub=2 my.{BUCKET}=3\n", core_mappings)


def test_key_after_expansion_is_untouched(core_mappings):
    check_noop(f'x "${{prefix}}{BUCKET}=1" ${{p}}{BUCKET}=2\n', core_mappings)


def test_key_without_equals_is_not_an_override(core_mappings):
    check_noop(f"echo {BUCKET}\n", core_mappings)


def test_path_on_slash_boundary(core_mappings):
    check_transformed(f'bash "$VERL_HOME/{MINDSPEED}"\nbash ../verl/{MINDSPEED}\n',
                      f'bash "$VERL_HOME/{NEW_MINDSPEED}"\nbash ../verl/{NEW_MINDSPEED}\n', core_mappings)


def test_longer_path_is_untouched(core_mappings):
    check_noop(f"cp {MINDSPEED}.orig x\nls my{MINDSPEED}\nls {MINDSPEED}x\n", core_mappings)


def test_path_in_default_expansion(core_mappings):
    check_transformed(f'S=${{S:-{MINDSPEED}}}\n', f'S=${{S:-{NEW_MINDSPEED}}}\n', core_mappings)


def test_env_preset_move_in_command(core_mappings):
    check_transformed("bash examples/grpo_trainer/run_qwen3_8b_npu.sh a=1\n",
                      "DEVICE=npu bash examples/grpo_trainer/run_qwen3_8b_fsdp.sh trainer.device=npu a=1\n", core_mappings)


def test_env_preset_move_when_script_is_the_command(core_mappings):
    check_transformed("./examples/grpo_trainer/run_qwen3_8b_npu.sh\n",
                      "DEVICE=npu ./examples/grpo_trainer/run_qwen3_8b_fsdp.sh trainer.device=npu\n", core_mappings)


def test_env_preset_move_elsewhere_is_a_manual_step(core_mappings):
    findings = check_noop("cp examples/grpo_trainer/run_qwen3_8b_npu.sh /tmp/\n", core_mappings)
    assert [f.kind for f in findings] == ["path-move"]
    assert "DEVICE=npu bash examples/grpo_trainer/run_qwen3_8b_fsdp.sh trainer.device=npu" in findings[0].message


def test_path_removal_is_reported_not_edited(core_mappings):
    findings = check_noop("bash examples/ppo_trainer/run_deepseek_megatron.sh\n", core_mappings)
    assert findings[0].hint == "use examples/ppo_trainer/run_qwen2_5_7b_megatron.sh"
    assert findings[0].prs == (6126,)


def test_removal_of_middle_argument_deletes_its_line(core_mappings):
    check_transformed(
        "python3 verl/trainer/main_ppo.py \\\n    a.b=1 \\\n    actor_rollout_ref.rollout.enable_chunked_prefill_legacy=True \\\n    c.d=2\n",
        "python3 verl/trainer/main_ppo.py \\\n    a.b=1 \\\n    c.d=2\n", core_mappings)


def test_removal_of_last_argument_leaves_no_dangling_backslash(core_mappings):
    check_transformed(
        "python3 verl/trainer/main_ppo.py \\\n    a.b=1 \\\n    actor_rollout_ref.rollout.enable_chunked_prefill_legacy=True\necho ok\n",
        "python3 verl/trainer/main_ppo.py \\\n    a.b=1\necho ok\n", core_mappings)


def test_removal_inside_a_line(core_mappings):
    check_transformed("python3 verl/trainer/main_ppo.py a.b=1 actor_rollout_ref.rollout.enable_chunked_prefill_legacy=True c=2\n",
                      "python3 verl/trainer/main_ppo.py a.b=1 c=2\n", core_mappings)


def test_removal_in_a_string_is_a_manual_step(core_mappings):
    findings = check_noop('X="a.b=1 actor_rollout_ref.rollout.enable_chunked_prefill_legacy=True"\n', core_mappings)
    assert [f.severity for f in findings] == ["manual"]


def test_warn_only_key_is_never_edited(core_mappings):
    findings = check_noop("x actor_rollout_ref.rollout.engine_kwargs.vllm.enable_expert_parallel=True\n", core_mappings)
    assert [(f.severity, f.hint) for f in findings] == [
        ("warning", "set actor_rollout_ref.rollout.expert_parallel_size > 1 instead")]


def test_env_removal_comments_out_a_standalone_export(core_mappings):
    check_transformed("export HCCL_X=1\nexport VLLM_ATTENTION_BACKEND=XFORMERS\n",
                      "export HCCL_X=1\n# verl-migrate: removed (verl#6066): export VLLM_ATTENTION_BACKEND=XFORMERS\n",
                      core_mappings)


def test_env_removal_of_quoted_value(core_mappings):
    check_transformed('export HCCL_X=1\nexport VLLM_ATTENTION_BACKEND="XFORMERS"\n',
                      'export HCCL_X=1\n# verl-migrate: removed (verl#6066): export VLLM_ATTENTION_BACKEND="XFORMERS"\n',
                      core_mappings)


def test_env_removal_needs_its_condition(core_mappings):
    check_noop("export VLLM_ATTENTION_BACKEND=XFORMERS\n", core_mappings)


def test_env_removal_needs_its_value(core_mappings):
    check_noop("export HCCL_X=1\nexport VLLM_ATTENTION_BACKEND=FLASH_ATTN\n", core_mappings)


def test_env_removal_in_a_shared_line_is_a_manual_step(core_mappings):
    findings = check_noop("export HCCL_X=1; export VLLM_ATTENTION_BACKEND=XFORMERS; echo\n", core_mappings)
    assert [f.severity for f in findings] == ["manual"]


def test_env_rename_covers_references(core_mappings):
    check_transformed('export VERL_OLD_LOGGING_LEVEL=INFO\necho "${VERL_OLD_LOGGING_LEVEL:-WARN}" $VERL_OLD_LOGGING_LEVEL\n',
                      'export VERL_LOGGING_LEVEL=INFO\necho "${VERL_LOGGING_LEVEL:-WARN}" $VERL_LOGGING_LEVEL\n',
                      core_mappings)


def test_module_after_dash_m(core_mappings):
    check_transformed("python3 -m recipe.fully_async_policy.fully_async_main a=1\n",
                      "python3 -m verl.experimental.fully_async_policy.fully_async_main a=1\n", core_mappings)


def test_module_with_longer_name_is_untouched(core_mappings):
    check_noop("python3 -m recipe.fully_async_policy2.main\npython3 -m my.recipe.fully_async_policy\n", core_mappings)


def test_var_rename_only_where_its_condition_holds(core_mappings):
    check_noop("train_etp=1\necho $train_etp\n", core_mappings)
    check_transformed("# mindspeed\ntrain_etp=1\necho ${train_etp} $((train_etp + 1))\n",
                      "# mindspeed\nactor_etp=1\necho ${actor_etp} $((actor_etp + 1))\n", core_mappings)


def test_comment_edits_are_marked(core_mappings):
    located = shell.locate(f"# set {BUCKET} here\n".encode(), core_mappings)
    assert [e.in_comment for e in located.edits] == [True]


def test_shebang_is_never_touched(core_mappings):
    check_noop("#!/usr/bin/env -S bash examples/grpo_trainer/run_qwen3_30b_a3b_mindspeed.sh\n", core_mappings)


def test_removal_of_several_trailing_arguments(core_mappings):
    old = "actor_rollout_ref.rollout.enable_chunked_prefill_legacy"
    check_transformed(f"python3 verl/trainer/main_ppo.py \\\n    a.b=1 \\\n    {old}=1 \\\n    +{old}=2\necho ok\n",
                      "python3 verl/trainer/main_ppo.py \\\n    a.b=1\necho ok\n", core_mappings)
    check_transformed(f"python3 verl/trainer/main_ppo.py \\\n    {old}=1 \\\n    {old}=2\n", "python3 verl/trainer/main_ppo.py\n", core_mappings)


def test_removal_of_every_array_element(core_mappings):
    old = "actor_rollout_ref.rollout.enable_chunked_prefill_legacy"
    check_transformed(f"A=(\n  {old}=1\n  {old}=2\n)\nB=({old}=1)\n", "A=(\n)\nB=()\n", core_mappings)


def test_a_hung_bash_n_is_killed_and_reported(tmp_path, monkeypatch, deadline):
    # A stand-in for bash that never finishes and keeps a child holding stderr open: only the kill
    # returns the message, and waiting for either sleep would outlive the `deadline` fixture.
    import os
    import signal

    from migrator.rewrite.shell import validity

    fake, child = tmp_path / "bash", tmp_path / "child.pid"
    fake.write_text(f"#!/bin/sh\nsleep 3600 &\necho $! > {child}\nexec sleep 3600\n")
    fake.chmod(0o755)
    monkeypatch.setattr(validity, "BASH_N_TIMEOUT", 0.5)
    try:
        assert validity._bash_n(str(fake), b"echo hi\n") == "`bash -n` did not finish within 0.5 s"
    finally:
        if child.exists():  # the background sleep outlives the killed stand-in: ours to end, by its pid
            os.kill(int(child.read_text()), signal.SIGKILL)


def test_bash_n_reports_the_first_error_line_without_the_temp_file_name():
    import shutil

    from migrator.rewrite.shell import validity

    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("no bash")
    assert validity._bash_n(bash, b"echo ok\n") is None
    assert validity._bash_n(bash, b"if then\n") == "line 1: syntax error near unexpected token `then'"


def test_bash_n_leaves_no_named_copy_of_the_script(tmp_path, monkeypatch):
    # A killed run must not leave the user's script in the temp directory: while bash runs, the
    # temp directory holds no file with the script's bytes (where /dev/fd exists).
    import os
    import tempfile

    from migrator.rewrite.shell import validity

    if not os.path.isdir("/dev/fd"):
        pytest.skip("no /dev/fd")
    temp_dir = tmp_path / "tmp"
    temp_dir.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp_dir))
    seen = tmp_path / "seen.txt"
    fake = tmp_path / "bash"
    fake.write_text(f"#!/bin/sh\nls -A '{temp_dir}' > '{seen}'\ncat \"$2\" >> '{seen}'\n")
    fake.chmod(0o755)
    assert validity._bash_n(str(fake), b"echo secret-script\n") is None
    assert seen.read_text() == "echo secret-script\n"  # bash got the script, and `ls` listed nothing


def test_a_python_heredoc_is_a_block_for_the_python_rewriter(core_mappings):
    # The shell rewriter names the block (LocateResult.blocks); the engine runs the Python rewriter on it.
    body = "import subprocess\nsubprocess.run(['python3', '-m', 'verl.trainer.main_ppo', 'critic.model.fsdp_config={}'])\n"
    for opener in ("python3 - <<'PY'", 'python <<"PY"', "/usr/bin/python3.11 - <<\\PY"):
        source = f"set -e\n{opener}\n{body}PY\necho done\n"
        (block,) = shell.locate(source.encode(), core_mappings).blocks
        assert source.encode()[block[0]:block[1]] == body.encode() and block[2] == "python"
        result = process_file("run.sh", "run.sh", core_mappings, data=source.encode())
        assert result.after == source.replace("critic.model.fsdp_config", "critic.fsdp").encode()
        # In a README's bash block the same program goes the same way.
        doc = f"# Run\n\n```bash\n{source}```\n"
        assert process_file("README.md", "README.md", core_mappings, data=doc.encode()).after == \
            doc.replace("critic.model.fsdp_config", "critic.fsdp").encode()
    # Unquoted, bash expands `$x` and backquotes in the body first: not Python as written, left to the scan.
    unquoted = f"python3 - <<PY\n{body}PY\n"
    assert shell.locate(unquoted.encode(), core_mappings).blocks == ()
    check_noop(unquoted, core_mappings)
