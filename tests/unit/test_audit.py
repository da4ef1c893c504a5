"""`audit`: exit 1 for uncovered script deletions/moves and key removals, 0 when tables cover them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from migrator import audit, history
from migrator.mapping import load_table
from tests.helpers import FIXTURES
from tests.helpers.history import History, base_config, build_release_history, script


@pytest.fixture(scope="module")
def verl(tmp_path_factory) -> History:
    return build_release_history(tmp_path_factory.mktemp("verl"))


def run_audit(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "migrator", "audit", *args], capture_output=True, text=True,
                          cwd=cwd)


def write_table(path: Path, entries: list[dict]) -> Path:
    path.write_text(yaml.safe_dump({"release": "main", "entries": entries}, sort_keys=False))
    return path


def test_uncovered_changes_fail_with_suggestions(verl):
    proc = run_audit("--repo", str(verl.root), "--base", "v1", "--head", "v2")
    assert proc.returncode == 1, proc.stderr
    out = proc.stdout
    assert "script deleted or moved: examples/legacy/run_old_rm.sh" in out
    assert "script deleted or moved: examples/toy_trainer/run_gemma.sh" in out
    assert "config key removed: actor_rollout_ref.actor.toy_load_flag" in out
    assert "new: examples/toy_trainer/run_gemma_2b_fsdp.sh" in out
    assert "new: critic.optim.scheduler.lr_warmup_steps" in out


def test_suggestions_are_table_entries(verl, tmp_path):
    entries = audit.table_entries([])
    result = audit.audit(verl.repo, "v1", "v2", entries)
    assert not result.ok
    table = write_table(tmp_path / "suggested.yaml", result.suggestions)
    loaded = load_table(table)
    covered = audit.audit(verl.repo, "v1", "v2", entries + list(loaded.entries))
    assert covered.ok, (covered.uncovered_scripts, covered.uncovered_keys)


def test_directory_and_subtree_entries_cover(verl, tmp_path):
    table = write_table(tmp_path / "cover.yaml", [
        {"kind": "path-removal", "old": "examples/", "hint": "all examples moved", "pr": 1},
        {"kind": "key-removal", "old": "actor_rollout_ref.*", "action": "warn", "hint": "x", "pr": 1},
        {"kind": "key-rename", "old": "critic.optim.lr_warmup_steps", "new": "critic.optim.scheduler.lr_warmup_steps",
         "pr": 1},
        {"kind": "module-no-action", "old": "verl.legacy", "why": "an empty package", "pr": 1},
        {"kind": "module-move", "old": "verl.utils.tokenizer_utils", "new": "verl.utils.tokenizer.helpers", "pr": 1},
    ])
    proc = run_audit("--repo", str(verl.root), "--base", "v1", "--head", "v2", "--table", str(table))
    # recipe/ is untouched in this history, so examples/, the key and the module entries cover everything
    assert proc.returncode == 0, proc.stdout
    assert "every one is covered" in proc.stdout


def test_partial_coverage_still_fails(verl, tmp_path):
    table = write_table(tmp_path / "partial.yaml", [
        {"kind": "path-removal", "old": "examples/legacy/run_old_rm.sh", "hint": "gone", "pr": 14},
    ])
    proc = run_audit("--repo", str(verl.root), "--base", "v1", "--head", "v2", "--table", str(table))
    assert proc.returncode == 1
    assert "run_old_rm.sh" not in proc.stdout.split("Add entries")[0]


def test_change_without_deletions_passes(tmp_path):
    h = History(tmp_path)
    h.write("examples/a/run_x.sh", script("x"))
    h.config(base_config())
    h.commit("init (#1)")
    h.write("examples/a/run_y.sh", script("y"))
    h.write("examples/a/run_x.sh", script("x", extra="trainer.total_epochs=2 "))
    cfg = base_config()
    cfg["trainer"]["new_flag"] = True
    h.config(cfg)
    h.commit("add things (#2)")
    proc = run_audit("--repo", str(tmp_path), "--base", "HEAD~1")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_base_that_moved_on_is_compared_at_the_fork_point(tmp_path):
    h = History(tmp_path)
    h.write("examples/a/run_x.sh", script("x"))
    h.commit("init (#1)")
    fork = h.repo.head.commit
    h.write("examples/a/run_new_on_main.sh", script("y"))
    h.commit("main adds a script (#2)")
    main = h.repo.active_branch
    feature = h.repo.create_head("feature", fork)
    feature.checkout()
    h.write("README.md", "x\n")
    h.commit("feature touches nothing (#3)")
    proc = run_audit("--repo", str(tmp_path), "--base", main.name)
    assert proc.returncode == 0, proc.stdout  # main's new script is not "deleted" by the feature branch


def test_pr_option_fills_suggestions(tmp_path):
    h = History(tmp_path)
    h.write("examples/a/run_x.sh", script("x"))
    h.commit("init")
    h.rm("examples/a/run_x.sh")
    h.commit("remove it")
    proc = run_audit("--repo", str(tmp_path), "--base", "HEAD~1")
    assert proc.returncode == 1
    assert "pr: PR_NUMBER" in proc.stdout and "--pr N" in proc.stdout
    proc = run_audit("--repo", str(tmp_path), "--base", "HEAD~1", "--pr", "4242")
    assert "pr: 4242" in proc.stdout


def test_dirty_tree_is_refused_when_head_is_implicit(verl, tmp_path):
    h = History(tmp_path)
    h.write("examples/a/run_x.sh", script("x"))
    h.commit("init (#1)")
    h.write("examples/a/run_x.sh", "changed\n")
    proc = run_audit("--repo", str(tmp_path), "--base", "HEAD")
    assert proc.returncode == 2
    assert "uncommitted changes" in proc.stderr and "Traceback" not in proc.stderr
    proc = run_audit("--repo", str(tmp_path), "--base", "HEAD", "--head", "HEAD")
    assert proc.returncode == 0


@pytest.mark.parametrize("case", ["not-a-repo", "unknown-base", "bad-table"])
def test_errors_exit_2(verl, tmp_path, case):
    args = {"not-a-repo": ["--repo", str(tmp_path), "--base", "v1"],
            "unknown-base": ["--repo", str(verl.root), "--base", "v0", "--head", "v2"],
            "bad-table": ["--repo", str(verl.root), "--base", "v1", "--head", "v2", "--table",
                          str(write_table(tmp_path / "bad.yaml", [{"kind": "path-move", "old": "a"}]))]}[case]
    proc = run_audit(*args)
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: ") and "Traceback" not in proc.stderr


def test_shallow_clone_is_explained(verl, tmp_path):
    shallow = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{verl.root}", str(shallow)], check=True)
    proc = run_audit("--repo", str(shallow), "--base", "v1", "--head", "HEAD")
    assert proc.returncode == 2
    assert "shallow clone" in proc.stderr


def test_coverage_matching():
    entries = load_table(FIXTURES / "release_notes" / "tables" / "r1.yaml").entries
    assert audit.is_covered("trainer.old_logger.level", "key", entries)
    assert audit.is_covered("examples/grpo_trainer/run_qwen3-8b_npu.sh", "path", entries)
    assert not audit.is_covered("examples/grpo_trainer/run_qwen3-8b.sh", "path", entries)
    assert not audit.is_covered("trainer.old_logger_x", "key", entries)
    assert history.PR_RE.search("fix things (#6285)").group(1) == "6285"


def test_a_key_removed_from_one_generated_config_only_is_flagged(tmp_path):
    """ppo_megatron_trainer loses a key that ppo_trainer keeps: its launches are refused the key, though the
    union of the configs still has it."""
    h = History(tmp_path)
    h.write("README.md", "x\n")
    h.config(base_config())
    megatron = base_config()
    megatron["actor_rollout_ref"]["actor"]["megatron_only_flag"] = True
    h.config(megatron, "_generated_ppo_megatron_trainer.yaml")
    h.commit("init (#1)")
    kept = base_config()
    kept["actor_rollout_ref"]["actor"]["megatron_only_flag"] = True
    h.config(kept)  # ppo_trainer gains it...
    h.config(base_config(), "_generated_ppo_megatron_trainer.yaml")  # ...the Megatron config loses it
    h.commit("move a flag (#2)")
    proc = run_audit("--repo", str(tmp_path), "--base", "HEAD~1")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert ("config key removed: actor_rollout_ref.actor.megatron_only_flag (from "
            "_generated_ppo_megatron_trainer.yaml only)") in proc.stdout
    suggestion = yaml.safe_load(proc.stdout.split("after checking each one (see docs/table-format.md):")[1])
    (entry,) = suggestion["entries"]
    assert (entry["kind"], entry["old"], entry["scope"]) == \
        ("key-removal", "actor_rollout_ref.actor.megatron_only_flag", ["ppo_megatron_trainer"])
