"""The verdict on a chain of script moves (migrator/mapping/script_moves.py)."""

from __future__ import annotations

from migrator.mapping.script_moves import Difference, MoveProof, chained

SAME = MoveProof(True)
UNPROVEN = MoveProof(None, unproven=("no training command recorded",))


def differs(*triples) -> MoveProof:
    return MoveProof(False, tuple(Difference(*t) for t in triples))


def test_a_chain_is_the_same_only_when_every_step_is():
    assert chained([SAME, SAME]) == SAME
    assert chained([SAME, UNPROVEN]).same is None
    assert chained([SAME, None]) is None and chained([]) is None  # a step without a proof: nothing proven


def test_a_differing_step_makes_the_chain_differ_and_an_unproven_one_is_said_too():
    chain = chained([differs(("a.b", "1", "2")), UNPROVEN])
    assert chain.same is False and chain.differences == (Difference("a.b", "1", "2"),)
    assert chain.summary().endswith("a step of it is not proven either (no training command recorded)")


def test_a_key_two_steps_change_goes_from_the_first_old_value_to_the_last_new_one():
    chain = chained([differs(("a.b", "1", "2"), ("c", "x", "y")), differs(("a.b", "2", "3"), ("c", "y", "x"))])
    assert chain.differences == (Difference("a.b", "1", "3"),)


def test_the_summary_puts_the_first_sections_first_and_counts_what_it_leaves_out():
    proof = differs(*[(f"actor.k{i}", "1", "2") for i in range(7)], ("data.train_files", "a", "b"))
    text = proof.summary(("data",))
    assert text.startswith("trains something else: 8 settings differ (data.train_files a -> b; actor.k0 1 -> 2;")
    assert text.endswith("; and 2 more)")
    assert differs(("k", "v" * 80, "w")).summary() == f"trains something else: 1 setting differs (k {'v' * 57}... -> w)"
