"""The command line through a real subprocess: exit codes, --check/--diff write nothing, JSON, config."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat

import pytest

from tests.helpers import CORE_TABLE, FIXTURES, run_cli

CORE = ["--from", "main", "--to", "main", "--table", str(CORE_TABLE)]


@pytest.fixture
def scripts(tmp_path):
    tree = tmp_path / "my_scripts"
    tree.mkdir()
    for name in ("backslash_list", "env_gpu_noop", "paths"):
        shutil.copy(FIXTURES / "shell" / f"{name}.in.sh", tree / f"{name}.sh")
    (tree / "notes.json").write_text('{"a": 1}\n')
    (tree / "model.bin").write_bytes(b"\x00\x01binary")
    return tree


def snapshot(tree):
    return {p.relative_to(tree): p.read_bytes() for p in sorted(tree.rglob("*")) if p.is_file()}


def test_version_and_help():
    proc = run_cli("--version")
    assert proc.returncode == 0 and "verl-migrate, version" in proc.stdout
    proc = run_cli("--help")
    assert proc.returncode == 0 and "mappings" in proc.stdout and "Commands:" in proc.stdout
    proc = run_cli("migrate", "--help")
    assert proc.returncode == 0 and "--check" in proc.stdout


def test_write_then_second_run_is_a_noop(scripts):
    proc = run_cli(*CORE, scripts)
    assert proc.returncode == 0, proc.stderr
    assert "2 files changed" in proc.stderr and "0 failed" in proc.stderr
    assert (scripts / "backslash_list.sh").read_bytes() == (FIXTURES / "shell" / "backslash_list.out.sh").read_bytes()
    assert (scripts / "paths.sh").read_bytes() == (FIXTURES / "shell" / "paths.out.sh").read_bytes()
    before = snapshot(scripts)
    again = run_cli(*CORE, "--check", scripts)
    # Nothing more to edit; the removed script stays a manual action, so --check still fails CI.
    assert again.returncode == 1 and "0 files would change" in again.stderr and " 0 manual actions" not in again.stderr
    assert snapshot(scripts) == before


def test_check_exits_1_and_writes_nothing(scripts):
    before = snapshot(scripts)
    proc = run_cli(*CORE, "--check", scripts)
    assert proc.returncode == 1
    assert "2 files would change" in proc.stderr
    assert snapshot(scripts) == before


def test_diff_prints_a_patch_and_writes_nothing(scripts):
    before = snapshot(scripts)
    proc = run_cli(*CORE, "--diff", scripts)
    assert proc.returncode == 0
    assert snapshot(scripts) == before
    assert f"--- a/{str(scripts / 'backslash_list.sh').lstrip('/')}\n" in proc.stdout  # outside the cwd: from /
    assert "+    actor_rollout_ref.rollout.checkpoint_engine.update_weights_bucket_megabytes=512 \\" in proc.stdout
    # Findings go to stderr so that stdout stays a patch.
    assert "run_deepseek_megatron.sh was removed" in proc.stderr
    assert "was removed" not in proc.stdout


def test_diff_applies_with_patch(scripts, tmp_path):
    if shutil.which("patch") is None:
        pytest.skip("needs patch")
    proc = run_cli(*CORE, "--diff", "backslash_list.sh", cwd=scripts)
    patch = tmp_path / "change.patch"
    patch.write_text(proc.stdout)
    import subprocess

    subprocess.run(["patch", "-p1", "-i", str(patch)], cwd=scripts, check=True, capture_output=True)
    assert (scripts / "backslash_list.sh").read_bytes() == (FIXTURES / "shell" / "backslash_list.out.sh").read_bytes()


def test_json_output(scripts):
    proc = run_cli(*CORE, "--check", "--output-format", "json", scripts)
    assert proc.returncode == 1
    report = json.loads(proc.stdout)
    assert report["mode"] == "check" and report["summary"]["changed"] == 2
    assert report["summary"]["edits_by_kind"]["key-rename"] >= 4
    by_path = {f["path"]: f for f in report["files"]}
    paths = by_path[str(scripts / "paths.sh")]
    assert paths["status"] == "changed"
    assert {f["kind"] for f in paths["findings"]} == {"path-move", "path-removal"}
    assert all({"line", "col", "message", "hint", "prs", "severity"} <= set(f) for f in paths["findings"])
    assert by_path[str(scripts / "model.bin")]["reason"] == "binary file"
    assert proc.stderr == ""


def test_json_output_is_utf_8_with_a_name_that_is_not(scripts):
    """A name whose bytes are not UTF-8 (`bad\\xff.sh`) is escaped as os.fsdecode decodes it (`\\udcff`)."""
    raw = os.path.join(os.fsencode(scripts), b"bad\xff.sh")
    shutil.copy(scripts / "paths.sh", raw)
    proc = run_cli(*CORE, "--check", "--output-format", "json", scripts, text=False)
    assert proc.returncode == 1, proc.stderr
    assert b"\\udcff" in proc.stdout
    report = json.loads(proc.stdout.decode("utf-8"))  # strict: every byte is UTF-8
    paths = {f["path"] for f in report["files"]}
    assert os.fsdecode(raw) in paths and os.fsencode(os.fsdecode(raw)) == raw
    assert {f["path"] for f in next(f for f in report["files"] if f["path"] == os.fsdecode(raw))["findings"]} == \
        {os.fsdecode(raw)}


def test_findings_are_grouped_under_their_rule_with_hint_and_pr_url(scripts):
    proc = run_cli(*CORE, "--check", scripts / "paths.sh")
    lines = proc.stderr.splitlines()
    place = (f"    {scripts / 'paths.sh'}:15:6: examples/ppo_trainer/run_deepseek_megatron.sh was removed")
    at = lines.index(place)
    assert lines[at - 1] == ("  hint: use examples/ppo_trainer/run_qwen2_5_7b_megatron.sh "
                             "(https://github.com/verl-project/verl/pull/6126)")
    assert lines[at - 2].startswith("VM101 ")
    heading = [n for n, line in enumerate(lines) if line.startswith("manual actions (need a person) (")]
    assert heading and heading[0] < at - 2
    assert proc.stdout == ""  # findings and summary on stderr; stdout is for the diff or JSON only


def test_migrate_subcommand_spelling(scripts):
    proc = run_cli("migrate", *CORE, "--check", scripts)
    assert proc.returncode == 1


def test_usage_errors_exit_2(tmp_path):
    bare = run_cli()
    assert bare.returncode == 2 and "Usage: verl-migrate" in bare.stdout + bare.stderr
    proc = run_cli("--to", "v0.42", tmp_path)
    assert proc.returncode == 2 and "unknown release 'v0.42'" in proc.stderr and "Traceback" not in proc.stderr
    proc = run_cli("--bogus-flag", tmp_path)
    assert proc.returncode == 2


def test_table_error_exits_2_with_file_and_line(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("entries:\n  - kind: key-rename\n    old: a.b\n    pr: 1\n")
    proc = run_cli("--table", bad, tmp_path)
    assert proc.returncode == 2
    assert f"{bad}:2: entry #1 (key-rename a.b): missing field(s) new" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_failed_file_exits_3_and_is_untouched(tmp_path):
    broken = tmp_path / "broken.sh"
    # Already fails bash -n: reported and left alone, the run goes on.
    broken.write_bytes(b"if true; then\n  python3 -m verl.trainer.main_ppo actor_rollout_ref.rollout.update_weights_bucket_megabytes=1\n")
    good = tmp_path / "good.sh"
    good.write_bytes(b"python3 -m verl.trainer.main_ppo actor_rollout_ref.rollout.update_weights_bucket_megabytes=1\n")
    proc = run_cli(*CORE, tmp_path)
    assert broken.read_bytes().startswith(b"if true")
    assert b"checkpoint_engine" not in broken.read_bytes()
    assert b"checkpoint_engine" in good.read_bytes()
    assert "does not pass `bash -n`" in proc.stderr
    assert proc.returncode == 0  # a skipped file is not a failure


def test_mode_bits_are_kept(scripts):
    target = scripts / "backslash_list.sh"
    target.chmod(0o750)
    run_cli(*CORE, target)
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o750


def test_pyproject_sets_defaults(tmp_path):
    project = tmp_path / "proj"
    project.mkdir()
    shutil.copy(FIXTURES / "shell" / "backslash_list.in.sh", project / "run.sh")
    (project / "legacy").mkdir()
    shutil.copy(FIXTURES / "shell" / "backslash_list.in.sh", project / "legacy" / "old.sh")
    (project / "pyproject.toml").write_text(
        '[tool.verl-migrate]\nfrom = "main"\nto = "main"\n'
        f'table = ["{CORE_TABLE}"]\nexclude = ["legacy"]\n')
    proc = run_cli("--check", project)
    assert proc.returncode == 1 and "1 file would change" in proc.stderr
    (project / "pyproject.toml").write_text('[tool.verl-migrate]\ncolour = "blue"\n')
    proc = run_cli("--check", project)
    assert proc.returncode == 2 and "unknown option 'colour'" in proc.stderr


def test_mappings_show(tmp_path):
    proc = run_cli("mappings", "show", "--from", "v0.7.1", "--to", "v0.9.0")
    assert proc.returncode == 0
    assert "actor_rollout_ref.rollout.skip_rollout -> skip.rollout.enable" in proc.stdout
    proc = run_cli("mappings", "show", "--from", "v0.7.1", "--to", "v0.8.0", "--output-format", "json")
    rows = json.loads(proc.stdout)["entries"]
    move = next(r for r in rows if r["old"] == "examples/grpo_trainer/run_qwen3_30b_a3b_mindspeed.sh")
    assert move["new"] == "examples/ascend_extras/grpo_trainer/run_qwen3_30b_a3b_mindspeed.sh" and move["prs"] == [6285]


def test_mappings_show_gives_each_script_move_its_verdict():
    # #6126 moved the DAPO script onto one that trains on GSM8K: the line and the JSON say it differs, and how.
    old = "examples/grpo_trainer/run_qwen3-235b_megatron_96gb.sh"
    proc = run_cli("mappings", "show", "--from", "v0.7.1", "--to", "v0.8.0")
    lines = proc.stdout.splitlines()
    line = next(line for line in lines if line.startswith(f"path   {old} -> "))
    assert re.search(r" \[differs: \d+ keys\]  \[#6126\]$", line), line
    assert any(line.endswith(" [same]  [#6126]") for line in lines)
    assert any(" [unproven]  [" in line for line in lines)
    proc = run_cli("mappings", "show", "--from", "v0.7.1", "--to", "v0.8.0", "--output-format", "json")
    rows = {r["old"]: r for r in json.loads(proc.stdout)["entries"] if r["family"] == "path"}
    move = rows[old]
    assert move["verdict"] == "differs" and move["verdict_text"] == f"differs: {len(move['differences'])} keys"
    nodes = [d["key"].split(".")[0] for d in move["differences"]]
    assert nodes[0] == "data" and "reward" in nodes  # what it trains on and what rewards it, first
    assert all(node in ("data", "reward") for node in nodes[:nodes.index("reward") + 1]), nodes
    assert {"key", "old", "new"} == set(move["differences"][0])
    assert {r["verdict"] for r in rows.values() if r["new"]} == {"same", "differs", "unproven"}


def test_mappings_show_lists_python_names_keywords_and_signatures():
    proc = run_cli("mappings", "show", "--from", "v0.3.0.post1", "--to", "v0.4.0")
    assert proc.returncode == 0
    lines = proc.stdout.splitlines()
    assert ("symbol verl.utils.torch_functional:get_eos_mask -> verl.utils.torch_functional:get_response_mask  [#878]"
            in lines)
    assert "keyword verl.trainer.ppo.core_algos:compute_policy_loss(eos_mask=) -> response_mask=  [#878]" in lines
    assert any(line.startswith("signature verl.utils.dataset.rl_dataset:RLHFDataset(prompt_key) -> (manual)  -- ")
               and line.endswith("[#924]") for line in lines)
    proc = run_cli("mappings", "show", "--from", "v0.6.1", "--to", "v0.9.0", "--output-format", "json")
    rows = json.loads(proc.stdout)["entries"]
    chained = next(r for r in rows if r["family"] == "keyword" and r["function"].endswith(":AgentLoopBase"))
    assert chained["new"] == "data_config=" and chained["releases"] == ["v0.7.1"]
    removed = next(r for r in rows if r["old"] == "verl.trainer.ppo.reward:compute_reward")
    assert removed["family"] == "symbol" and removed["new"] is None and removed["prs"]
