"""mappings/verl/facts/script-moves.yaml covers every path-move of a script in the release tables: whether
the new script trains what the old one trained, proven by composing both runs (scripts/prove_script_moves.py)."""

from __future__ import annotations

from migrator.config import known_releases
from tests.helpers import REPO, yaml_data

VERL = REPO / "mappings" / "verl"
FACTS = VERL / "facts" / "script-moves.yaml"
ROWS = yaml_data(FACTS)["moves"]


def _script_moves() -> set[tuple[str, str, str]]:
    out = set()
    for release in list(known_releases())[1:]:
        for entry in yaml_data(VERL / f"{release}.yaml")["entries"]:
            if entry["kind"] == "path-move" and not entry["old"].endswith("/") and entry["new"].endswith(".sh"):
                out.add((release, entry["old"], entry["new"]))
    return out


def test_every_script_move_of_the_tables_has_its_proof_and_nothing_else_does():
    assert {(r["release"], r["old"], r["new"]) for r in ROWS} == _script_moves()


def test_each_row_is_a_verdict_with_its_evidence():
    for row in ROWS:
        assert ("same" in row) != ("unproven" in row), row
        if row.get("same") is False:
            assert row["differences"] and all({"key", "old", "new"} <= set(d) for d in row["differences"]), row
        if row.get("same") is True:
            assert "differences" not in row, row
    assert FACTS.read_text(encoding="utf-8").startswith("# GENERATED VIA scripts/prove_script_moves.py from verl ")


def test_the_move_onto_a_script_that_trains_other_data_is_not_same():
    # #6126 deleted run_qwen3-235b_megatron_96gb.sh (DAPO data, the dapo reward manager) and added
    # run_qwen3_235b_a22b_megatron.sh, which trains on GSM8K with the default reward.
    row = next(r for r in ROWS if r["old"] == "examples/grpo_trainer/run_qwen3-235b_megatron_96gb.sh")
    keys = {d["key"] for d in row["differences"]}
    assert row["same"] is False and {"data.train_files", "reward.reward_manager.name"} & keys
