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


def _step_mappings():
    """The built-in tables composed over each release step (the release before a table's to its own)."""
    from migrator.tablecache import composed

    releases = list(known_releases())
    return {release: composed(releases[i], release, ())[0] for i, release in enumerate(releases[1:])}


def test_every_script_move_of_the_tables_has_its_verdict_and_each_one_not_proven_the_same_yields_the_finding():
    from migrator.fileprocess import process_file

    steps = _step_mappings()
    for row in ROWS:
        mappings = steps[row["release"]]
        change = mappings.path(row["old"])
        assert change is not None and change.new == row["new"] and change.proof is not None, row
        assert change.proof.same is row.get("same"), row
        result = process_file("run.sh", "run.sh", mappings, data=f"bash {row['old']}\n".encode())
        if change.proof.plain:
            assert row["new"].encode() in result.after and not result.findings, row
            continue
        assert result.status == "unchanged" and [f.code for f in result.findings] == ["VM103"], (row, result.findings)
        message = result.findings[0].message
        if row.get("same") is False:
            n = len(row["differences"])
            assert f"{n} setting{'s' if n != 1 else ''} differ" in message, (row, message)
        else:
            assert "is not proven to train" in message and row["unproven"] in message, (row, message)
