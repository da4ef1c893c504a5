"""Every entry of the verl tables has its verdict from verl's history in mappings/verl/facts/table-proofs.tsv
(scripts/prove_tables.py), and an entry the history does not prove says why. The judging functions of the
script are tested here on small, made-up histories: no verl clone is needed."""

from __future__ import annotations

from collections import Counter

import pytest

from migrator.config import known_releases
from migrator.mapping.facts import ReleaseFacts, fact_lines
from tests.helpers import REPO, load_script, yaml_data

VERL = REPO / "mappings" / "verl"
PROOFS = VERL / "facts" / "table-proofs.tsv"


prove_tables = load_script("prove_tables")
ROWS = [line.split("\t") for line in fact_lines(PROOFS)]
RELEASES = tuple(known_releases())


def _entries():
    for release in RELEASES[1:]:
        for entry in yaml_data(VERL / f"{release}.yaml")["entries"]:
            yield release, entry


def _identity(release: str, entry: dict) -> tuple[str, str, str, str]:
    return release, entry["kind"], prove_tables.entry_name(entry), str(entry["pr"])


def test_every_entry_has_one_verdict_and_nothing_else_has_one():
    """A table edited without running the script again fails here."""
    assert Counter(tuple(row[:4]) for row in ROWS) == Counter(_identity(r, e) for r, e in _entries())
    assert {row[4] for row in ROWS} <= {"proven", "unproven"}


def test_an_entry_the_history_does_not_prove_says_why():
    unproven = {tuple(row[:4]): row[5] for row in ROWS if row[4] == "unproven"}
    missing = [(key, unproven[key]) for r, e in _entries() if (key := _identity(r, e)) in unproven and not e.get("why")]
    assert not missing, missing
    # the harness proves nearly all of them: a drop means a table or a fact went wrong
    assert len(unproven) <= 10 and len(ROWS) > 800


def test_every_unproven_row_names_what_failed():
    for row in ROWS:
        assert row[5].strip(), row
        if row[4] == "unproven":
            assert any(w in row[5] for w in ("not ", "no ", "still ", "lacks", "less", "more")), row


# ---------------------------------------------------------------- the judging functions
FACTS = ReleaseFacts(VERL / "facts")
MINDSPEED = "examples/grpo_trainer/run_qwen3_30b_a3b_mindspeed.sh"  # added after v0.7.1, moved before v0.8.0
ADDED = (MINDSPEED, ("c0", "A", ""))
ASCEND = "examples/ascend_extras/grpo_trainer/run_qwen3_30b_a3b_mindspeed.sh"


def _context(before: str, release: str, history, **fields):
    return prove_tables.Context(FACTS, RELEASES, before, release, history, **fields)


def _history(files=(), deleted=(), added=(), prs=()):
    history = prove_tables.PairHistory()
    history.pr.update(dict(prs))
    for path, event in files:
        history.files[path].append(event)
    for name, commit in deleted:
        history.deleted_keys[name].add(commit)
    for name, commit in added:
        history.added_keys[name].add(commit)
    return history


def _verdict(entry, ctx):
    proof = prove_tables.prove(entry, ctx)
    return proof.failed


def test_a_script_move_is_proven_by_its_rename_and_its_pr():
    history = _history(files=[ADDED, (MINDSPEED, ("c1", "R", ASCEND)), (ASCEND, ("c1", "A", MINDSPEED))], prs=[("c1", 6285)])
    entry = {"kind": "path-move", "old": MINDSPEED, "new": ASCEND, "pr": 6285}
    assert _verdict(entry, _context("v0.7.1", "v0.8.0", history)) == []


def test_a_script_move_credited_to_another_pr_is_not_proven():
    history = _history(files=[ADDED, (MINDSPEED, ("c1", "R", ASCEND)), (ASCEND, ("c1", "A", MINDSPEED))],
                       prs=[("c1", 6285), ("c2", 6066)])
    failed = _verdict({"kind": "path-move", "old": MINDSPEED, "new": ASCEND, "pr": 6066},
                      _context("v0.7.1", "v0.8.0", history))
    assert failed == ["#6066 did not make it"]
    failed = _verdict({"kind": "path-move", "old": MINDSPEED, "new": ASCEND, "pr": 1},
                      _context("v0.7.1", "v0.8.0", history))
    assert failed == ["#1 is not in v0.7.1..v0.8.0"]


def test_a_move_onto_a_path_the_release_lacks_or_with_no_rename_is_not_proven():
    history = _history(files=[ADDED, (MINDSPEED, ("c1", "D", ""))], prs=[("c1", 6285)])
    failed = _verdict({"kind": "path-move", "old": MINDSPEED, "new": "examples/nowhere/run.sh", "pr": 6285},
                      _context("v0.7.1", "v0.8.0", history))
    assert "examples/nowhere/run.sh absent at v0.8.0" in failed
    assert "the history holds no rename onto it" in failed


def test_a_key_rename_onto_an_undeclared_key_is_not_proven():
    old = "actor_rollout_ref.rollout.update_weights_bucket_megabytes"
    new = "actor_rollout_ref.rollout.checkpoint_engine.update_weights_bucket_megabytes"
    history = _history(deleted=[("update_weights_bucket_megabytes", "c1")], added=[("checkpoint_engine", "c1")],
                       prs=[("c1", 4001)])
    right = {"kind": "key-rename", "old": old, "new": new, "pr": 4001}
    assert _verdict(right, _context("v0.7.0", "v0.7.1", history)) == []
    wrong = dict(right, new="actor_rollout_ref.rollout.no_such_node.update_weights_bucket_megabytes")
    assert _verdict(wrong, _context("v0.7.0", "v0.7.1", history)) == [f"{wrong['new']} not declared at v0.7.1"]


def test_a_module_move_onto_a_module_without_the_old_names_needs_symbol_entries():
    history = _history(files=[("verl/utils/rollout_skip.py", ("c1", "D", ""))], prs=[("c1", 6097)])
    entry = {"kind": "module-move", "old": "verl.utils.rollout_skip", "new": "verl.utils.skip.rollout_skip", "pr": 6097}
    failed = _verdict(entry, _context("v0.8.0", "v0.9.0", history))
    assert failed == ["verl.utils.skip.rollout_skip lacks read_dumped_data, wrap_generate_sequences"]
    spoken = frozenset(f"verl.utils.rollout_skip:{n}" for n in ("SkipAction", "read_dumped_data", "wrap_generate_sequences"))
    assert _verdict(entry, _context("v0.8.0", "v0.9.0", history, symbols=spoken)) == []


def test_an_entry_of_verl_recipe_is_unproven_without_its_history():
    entry = {"kind": "config-dir-move", "repo": "verl-recipe", "old": "recipe/gkd/config",
             "new": "recipe/gkd/megatron/config", "pr": 8, "commit": "ad471ea97"}
    assert _verdict(entry, _context("v0.7.0", "v0.7.1", None)) == ["pr not checked"]


@pytest.mark.parametrize("kind", sorted({e["kind"] for _, e in _entries()}))
def test_every_kind_of_the_tables_has_a_proof(kind):
    assert kind in prove_tables.PROOFS
