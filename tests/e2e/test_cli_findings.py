"""What a run tells people, through the real command: files not migrated named with code and reason,
findings grouped by rule code, -q, --select/--ignore, colour, GitHub annotations, JSON codes."""

from __future__ import annotations

import json
import os
import re
import subprocess

from tests.helpers import CORE_TABLE, run_cli

CORE = ["--from", "main", "--to", "main", "--table", str(CORE_TABLE)]
RENAME = "python3 -m verl.trainer.main_ppo actor_rollout_ref.rollout.update_weights_bucket_megabytes=1\n"
WARN = "python3 x.py actor_rollout_ref.rollout.engine_kwargs.vllm.enable_expert_parallel=True\n"
REMOVED = "bash examples/ppo_trainer/run_deepseek_megatron.sh\n"
ESC = "\x1b["


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_skipped_files_are_named_with_code_and_reason(tmp_path):
    write(tmp_path / "broken.sh", "if true; then\n  " + RENAME)  # fails bash -n before any edit
    (tmp_path / "nul.sh").write_bytes(b"echo \x00\n")  # a script by its name, but binary
    (tmp_path / "model.bin").write_bytes(b"\x00\x01")  # binary and no script: not worth a line
    write(tmp_path / "notes.json", "{}\n")  # not a kind verl-migrate rewrites: silent
    write(tmp_path / "good.sh", RENAME)
    proc = run_cli(*CORE, "--check", tmp_path)
    lines = proc.stderr.splitlines()
    assert "files not migrated (2):" in lines
    assert any(re.fullmatch(rf"  VM203 skipped {re.escape(str(tmp_path / 'broken.sh'))}: .*bash -n.*", line)
               for line in lines), proc.stderr
    assert f"  VM202 skipped {tmp_path / 'nul.sh'}: binary file" in lines
    assert "model.bin" not in proc.stderr and "notes.json" not in proc.stderr
    verbose = run_cli(*CORE, "--check", "-v", tmp_path)
    assert f"  VM202 skipped {tmp_path / 'model.bin'}: binary file" in verbose.stderr.splitlines()
    assert f"  VM208 skipped {tmp_path / 'notes.json'}: not a file kind verl-migrate rewrites" in verbose.stderr


def test_a_file_that_could_not_be_written_is_named_and_never_said_changed(tmp_path):
    # As root file modes do not stop a write; this interpreter start-up hook makes os.access answer
    # as it does for an ordinary user, so the engine's read-only check refuses the file.
    hook = write(tmp_path / "hook" / "sitecustomize.py",
                 "import os, stat\n_access = os.access\n"
                 "def access(path, mode, **kw):\n"
                 "    if mode & os.W_OK and not os.stat(path).st_mode & 0o222:\n        return False\n"
                 "    return _access(path, mode, **kw)\nos.access = access\n").parent
    tree = tmp_path / "tree"
    read_only = write(tree / "read_only.sh", RENAME)
    read_only.chmod(0o444)
    ok = write(tree / "ok.sh", RENAME)
    env = {"PYTHONPATH": os.pathsep.join([str(hook), os.environ.get("PYTHONPATH", "")])}
    proc = run_cli(*CORE, "-v", "--allow-dirty", tree, env=env)
    assert proc.returncode == 3, proc.stderr
    lines = proc.stderr.splitlines()
    assert f"changed: {ok}" in lines
    assert f"changed: {read_only}" not in lines
    assert (f"  VM205 failed {read_only}: could not write: the file is read-only; make it writable to migrate it"
            in lines)
    assert "1 file changed" in proc.stderr and "1 failed" in proc.stderr
    assert read_only.read_text() == RENAME


def test_verbose_says_changed_only_after_the_git_guard_let_the_write_happen(tmp_path):
    script = write(tmp_path / "run.sh", "echo\n")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    subprocess.run(["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t", "add", "."], check=True)
    subprocess.run(["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "a"],
                   check=True)
    script.write_text(RENAME)  # uncommitted: the guard refuses
    proc = run_cli(*CORE, "-v", tmp_path)
    assert proc.returncode == 2
    assert "refusing to overwrite" in proc.stderr
    assert "changed " not in proc.stderr
    assert script.read_text() == RENAME


def test_a_repeated_finding_prints_its_hint_once_with_every_place_under_it(tmp_path):
    for n in range(5):
        write(tmp_path / f"run{n}.sh", "echo\n" + WARN)
    write(tmp_path / "gone.sh", REMOVED)
    proc = run_cli(*CORE, "--check", tmp_path)
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    hints = [line for line in lines if "expert_parallel_size > 1" in line]
    assert hints == ["  hint: set actor_rollout_ref.rollout.expert_parallel_size > 1 instead "
                     "(https://github.com/verl-project/verl/pull/6066)"]
    at = lines.index(hints[0])
    assert lines[at - 1].startswith("VM112 ")
    assert lines[at + 1:at + 6] == [f"    {tmp_path / f'run{n}.sh'}:2:14: "
                                    "actor_rollout_ref.rollout.engine_kwargs.vllm.enable_expert_parallel: has no effect"
                                    for n in range(5)]
    manual, warnings = lines.index("manual actions (need a person) (1):"), lines.index("warnings (5):")
    assert manual < warnings < at  # manual actions come first, in their own section
    assert lines[manual + 1].startswith("VM101 ")
    assert lines[-1].endswith("1 manual action, 5 warnings, 6 unchanged, 0 skipped, 0 failed")


def test_quiet_prints_only_manual_actions_and_no_summary(tmp_path):
    write(tmp_path / "warn.sh", WARN)
    write(tmp_path / "gone.sh", REMOVED)
    default = run_cli(*CORE, "--check", tmp_path)
    quiet = run_cli(*CORE, "--check", "-q", tmp_path)
    assert "warnings (1):" in default.stderr and "would change" in default.stderr
    assert quiet.stderr != default.stderr
    assert "VM101" in quiet.stderr and f"{tmp_path / 'gone.sh'}:1:6:" in quiet.stderr
    assert "VM112" not in quiet.stderr and "warn.sh" not in quiet.stderr
    assert "would change" not in quiet.stderr and "unchanged" not in quiet.stderr


def test_select_and_ignore_take_code_prefixes(tmp_path):
    write(tmp_path / "warn.sh", WARN)
    write(tmp_path / "gone.sh", REMOVED)
    only_manual = run_cli(*CORE, "--check", "--select", "VM10", tmp_path)
    assert "VM101" in only_manual.stderr and "VM112" not in only_manual.stderr
    assert "1 manual action, 0 warnings" in only_manual.stderr
    ignored = run_cli(*CORE, "--check", "--ignore", "VM1", "--select", "VM112", tmp_path)
    assert "VM112" in ignored.stderr and "VM101" not in ignored.stderr  # the longer prefix wins
    unknown = run_cli(*CORE, "--check", "--select", "VM9", tmp_path)
    assert unknown.returncode == 2 and "unknown code(s) VM9" in unknown.stderr


def test_colour_follows_color_no_color_and_force_color(tmp_path):
    write(tmp_path / "warn.sh", WARN + RENAME)
    plain = run_cli(*CORE, "--diff", tmp_path)  # not a terminal: no colour
    assert ESC not in plain.stdout + plain.stderr
    always = run_cli(*CORE, "--diff", "--color", "always", tmp_path)
    assert f"{ESC}32m+python3 -m verl.trainer.main_ppo actor_rollout_ref.rollout.checkpoint_engine" in always.stdout
    assert f"{ESC}33mVM112{ESC}0m " in always.stderr
    assert "https://github.com/verl-project/verl/pull/6066" in always.stderr  # no terminal: no OSC-8 link
    forced = run_cli(*CORE, "--diff", tmp_path, env={"FORCE_COLOR": "1", "NO_COLOR": ""})
    assert ESC in forced.stderr
    no_color = run_cli(*CORE, "--diff", tmp_path, env={"FORCE_COLOR": "1", "NO_COLOR": "1"})
    assert ESC not in no_color.stdout + no_color.stderr
    never = run_cli(*CORE, "--diff", "--color", "never", tmp_path, env={"FORCE_COLOR": "1"})
    assert ESC not in never.stdout + never.stderr


def test_github_annotations(tmp_path):
    warn = write(tmp_path / "warn.sh", WARN)
    gone = write(tmp_path / "gone.sh", REMOVED)
    (tmp_path / "nul.sh").write_bytes(b"\x00")
    proc = run_cli(*CORE, "--check", "--output-format", "github", tmp_path)
    lines = proc.stdout.splitlines()
    assert (f"::error file={gone},line=1,col=6,title=VM101::examples/ppo_trainer/run_deepseek_megatron.sh was "
            "removed (use examples/ppo_trainer/run_qwen2_5_7b_megatron.sh) "
            "https://github.com/verl-project/verl/pull/6126") in lines
    assert any(line.startswith(f"::warning file={warn},line=1,col=14,title=VM112::") for line in lines)
    assert f"::warning file={tmp_path / 'nul.sh'},title=VM202::skipped: binary file" in lines
    both = run_cli(*CORE, "--diff", "--output-format", "github", tmp_path)
    assert both.returncode == 2


def test_json_findings_and_files_carry_codes(tmp_path):
    write(tmp_path / "gone.sh", REMOVED)
    (tmp_path / "nul.sh").write_bytes(b"\x00")
    report = json.loads(run_cli(*CORE, "--check", "--output-format", "json", tmp_path).stdout)
    files = {os.path.basename(f["path"]): f for f in report["files"]}
    [finding] = files["gone.sh"]["findings"]
    assert finding["code"] == "VM101" and finding["severity"] == "manual" and finding["prs"] == [6126]
    assert {"path", "line", "col", "code", "message", "hint", "severity"} <= set(finding)
    assert files["nul.sh"]["code"] == "VM202"
