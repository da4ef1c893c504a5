"""`derive` on synthetic verl-like histories: what it pairs, its precision and recall, its output."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import git
import pytest

from migrator import derive, history
from migrator.mapping import load_table
from migrator.mapping.compose import MappingSet
from tests.helpers.history import (
    EXPECTED_KEY_REMOVALS,
    EXPECTED_KEY_RENAMES,
    EXPECTED_MODULE_MOVES,
    EXPECTED_PATH_MOVES,
    EXPECTED_PATH_REMOVALS,
    EXPECTED_PRS,
    History,
    build_release_history,
    script,
)


@pytest.fixture(scope="module")
def release_history(tmp_path_factory) -> History:
    return build_release_history(tmp_path_factory.mktemp("verl"))


@pytest.fixture(scope="module")
def drafted(release_history, tmp_path_factory):
    derivation = derive.derive(release_history.repo, "v1", "v2")
    path = tmp_path_factory.mktemp("draft") / "draft.yaml"
    path.write_text(derive.dump_table(derivation))
    return derivation, load_table(path)


def precision_recall(got: set, want: set) -> tuple[float, float]:
    hit = len(got & want)
    return (hit / len(got) if got else 1.0), (hit / len(want) if want else 1.0)


def concrete_key_renames(table, keys) -> set:
    mapping = MappingSet("a", "b", (table,))
    out = set()
    for key in keys:
        change = mapping.key(key)
        if change is not None and change.action == "rename":
            out.add((key, change.new))
    return out


def test_path_moves_precision_and_recall(drafted):
    derivation, _ = drafted
    got = {(d.old, d.fields["new"]) for d in derivation.drafts if d.kind == "path-move"}
    precision, recall = precision_recall(got, EXPECTED_PATH_MOVES)
    assert precision >= 0.99 and recall >= 0.99, (got ^ EXPECTED_PATH_MOVES)


def test_unpaired_deletion_is_a_removal(drafted):
    derivation, _ = drafted
    assert {d.old for d in derivation.drafts if d.kind == "path-removal"} == EXPECTED_PATH_REMOVALS


def test_key_renames_precision_and_recall(drafted, release_history):
    _, table = drafted
    before = derive.ConfigKeys(release_history.repo).at("v1")
    got = concrete_key_renames(table, before)
    precision, recall = precision_recall(got, EXPECTED_KEY_RENAMES)
    assert precision >= 0.99 and recall >= 0.99, (got ^ EXPECTED_KEY_RENAMES)


def test_subtree_move_is_one_entry(drafted):
    derivation, _ = drafted
    renames = {(d.old, d.fields["new"]) for d in derivation.drafts if d.kind == "key-rename"}
    assert ("actor_rollout_ref.rollout.skip.*", "skip.rollout.*") in renames
    assert not any(old.startswith("actor_rollout_ref.rollout.skip.") and not old.endswith("*")
                   for old, _ in renames)


def test_key_removals(drafted):
    derivation, _ = drafted
    assert {d.old for d in derivation.drafts if d.kind == "key-removal"} == EXPECTED_KEY_REMOVALS


def test_module_moves_ignore_license_only_files(drafted):
    derivation, _ = drafted
    got = {(d.old, d.fields["new"]) for d in derivation.drafts if d.kind == "module-move"}
    assert got == EXPECTED_MODULE_MOVES


def test_rewritten_move_is_paired_by_file_name(drafted):
    derivation, _ = drafted
    (draft,) = [d for d in derivation.drafts if d.old.endswith("run_qwen3_30b_a3b_mindspeed.sh")]
    assert draft.kind == "path-move"
    assert "same file name" in draft.evidence


def test_prs_come_from_the_commit_that_made_the_change(drafted):
    derivation, _ = drafted
    prs = {d.old: d.pr for d in derivation.drafts}
    for old, pr in EXPECTED_PRS.items():
        assert prs[old] == pr, old


def test_every_entry_is_marked_for_review(drafted):
    _, table = drafted
    assert table.entries
    for entry in table.entries:
        assert entry.review is True
        assert entry.confidence in ("high", "medium", "low")
        assert entry.evidence


def test_output_is_deterministic(release_history):
    first = derive.dump_table(derive.derive(release_history.repo, "v1", "v2"))
    second = derive.dump_table(derive.derive(release_history.repo, "v1", "v2"))
    assert first == second


def test_works_on_a_bare_clone(release_history, tmp_path, drafted):
    bare = git.Repo.clone_from(str(release_history.root), str(tmp_path / "bare.git"), bare=True)
    text = derive.dump_table(derive.derive(history.open_repo(bare.git_dir), "v1", "v2"))
    assert text == derive.dump_table(drafted[0])


def test_flat_configs_before_generated_ones(tmp_path):
    h = History(tmp_path)
    h.write("verl/trainer/config/ppo_trainer.yaml", "defaults:\n  - actor\ncritic:\n  warmup_ratio: 0.1\n")
    h.commit("flat config (#1)")
    h.tag("old")
    h.rm("verl/trainer/config/ppo_trainer.yaml")
    h.config({"critic": {"optim": {"warmup_ratio": 0.1}}})
    h.commit("generated config (#2)")
    derivation = derive.derive(h.repo, "old", "HEAD")
    (draft,) = derivation.drafts
    assert (draft.kind, draft.old, draft.fields["new"], draft.pr) == (
        "key-rename", "critic.warmup_ratio", "critic.optim.warmup_ratio", 2)


def test_missing_pr_lowers_confidence_and_says_so(tmp_path):
    h = History(tmp_path)
    h.write("examples/a/run_x.sh", script("x"))
    h.commit("init (#1)")
    h.tag("old")
    h.mv("examples/a/run_x.sh", "examples/b/run_x.sh")
    h.commit("move without a PR number")
    h.write("README.md", "x\n")
    h.commit("docs: readme (#9)")
    (draft,) = derive.derive(h.repo, "old", "HEAD").drafts
    assert draft.pr == 9
    assert draft.confidence != "high"
    assert "guessed" in draft.evidence


def test_normalised_names_and_helpers():
    assert derive.normalised_name("examples/x/run_qwen3-8b.sh") == derive.normalised_name("run_qwen3_8b_fsdp.sh")
    assert derive.normalised_name("run_qwen3_8b_megatron_npu.sh") == "run_qwen3_8b"
    assert derive.module_name("verl/utils/__init__.py") == "verl.utils"
    assert derive.module_name("docs/conf.py") is None
    assert derive.is_near_empty(b"# Copyright\n# License\n\n")
    assert not derive.is_near_empty(b"import os\n\ndef f():\n    return os.sep\n")


def test_cli_derive_writes_a_loadable_table(release_history, tmp_path):
    out = tmp_path / "draft.yaml"
    proc = subprocess.run([sys.executable, "-m", "migrator", "derive", "--repo", str(release_history.root),
                           "--from", "v1", "--to", "v2", "-o", str(out)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "review" in proc.stderr
    assert load_table(Path(out)).entries


@pytest.mark.parametrize("args, message", [
    (["--repo", "{missing}", "--from", "v1", "--to", "v2"], "no such directory"),
    (["--repo", "{plain}", "--from", "v1", "--to", "v2"], "not a git repository"),
    (["--repo", "{repo}", "--from", "v0", "--to", "v2"], "unknown revision 'v0'"),
])
def test_cli_derive_errors_exit_2(release_history, tmp_path, args, message):
    (tmp_path / "plain").mkdir()
    subst = {"missing": str(tmp_path / "nope"), "plain": str(tmp_path / "plain"), "repo": str(release_history.root)}
    args = [a.format(**subst) for a in args]
    proc = subprocess.run([sys.executable, "-m", "migrator", "derive", *args], capture_output=True, text=True)
    assert proc.returncode == 2
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr


def test_shallow_clone_lacking_the_revision(release_history, tmp_path):
    shallow = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{release_history.root}", str(shallow)],
                   check=True)
    proc = subprocess.run([sys.executable, "-m", "migrator", "derive", "--repo", str(shallow), "--from",
                           "HEAD~3", "--to", "HEAD"], capture_output=True, text=True)
    assert proc.returncode == 2
    assert "shallow clone" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_module_move_is_high_confidence_only_where_the_new_module_holds_the_old_names(tmp_path):
    """git pairs `verl/workers/actor/dp_actor.py` with a file that defines other classes (v0.7.1 -> v0.8.0:
    verl.workers.actor -> verl.workers.engine.automodel, 72% alike): users' imports would break."""
    from tests.helpers.history import History

    h = History(tmp_path / "verl")
    body = "".join(f"def helper_{i}(x):\n    return x + {i}\n\n\n" for i in range(30))
    h.write("verl/__init__.py", "")
    h.write("verl/kept/__init__.py", "")
    h.write("verl/kept/tools.py", "class Tool:\n    pass\n\n\n" + body)
    h.write("verl/lost/__init__.py", "")
    h.write("verl/lost/actor.py", "class DataParallelActor:\n    pass\n\n\n" + body)
    h.commit("[init] feat: layout (#1)")
    h.tag("v1")
    h.mv("verl/kept/tools.py", "verl/moved/tools.py")
    h.write("verl/moved/__init__.py", "")
    h.rm("verl/kept/__init__.py")
    h.mv("verl/lost/actor.py", "verl/engine/automodel.py")
    h.write("verl/engine/automodel.py", "class AutoModelEngine:\n    pass\n\n\n" + body)
    h.write("verl/engine/__init__.py", "")
    h.rm("verl/lost/__init__.py")
    h.commit("[worker] refactor: engines (#2)")
    h.tag("v2")
    moves = {d.old: d for d in derive.derive(h.repo, "v1", "v2").drafts if d.kind == "module-move"}
    assert moves["verl.kept.tools"].confidence == "high"
    lost = moves["verl.lost.actor"]
    assert lost.fields["new"] == "verl.engine.automodel" and lost.confidence == "low"
    assert "lacks 1 public name(s) of the old: DataParallelActor" in lost.evidence
