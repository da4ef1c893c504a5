"""The legacy reward nodes (v0.7.1..v0.8.0's main_ppo moved them into reward.*; v0.9.0's reads them no more):
the copies the run comparison makes (mappings/verl/effective-config.yaml `copied_at_start`) and the renames
of v0.9.0's table are the moves verl's facts record (facts/components.yaml `ignored`, extracted from
migrate_legacy_reward_impl), no more and no fewer."""

from __future__ import annotations

from tests.helpers import REPO, yaml_data

VERL = REPO / "mappings" / "verl"
# No declared key at v0.9.0 to rename onto (its own examples add `+reward.reward_kwargs.*`): reported only.
NO_DECLARED_HOME = {"reward_model.reward_kwargs"}


def _moves() -> dict[str, str]:
    ignored = yaml_data(VERL / "facts" / "components.yaml")["ignored"]
    out: dict[str, str] = {}
    for item in ignored:
        if item["release"] == "v0.9.0" and "verl.trainer.main_ppo" in item["entry_points"]:
            out.update(item.get("read_instead") or {})
    return out


def _leaf_or_node(old: str, new: str, renames: dict[str, str]) -> bool:
    return renames.get(old) == new or renames.get(old + ".*") == new + ".*"


def test_v090_renames_every_legacy_key_main_ppo_moved():
    renames = {e["old"]: e["new"] for e in yaml_data(VERL / "v0.9.0.yaml")["entries"] if e["kind"] == "key-rename"}
    moves = _moves()
    assert len(moves) >= 12
    for old, new in moves.items():
        if old in NO_DECLARED_HOME:
            assert old not in renames and old + ".*" not in renames
        else:
            assert _leaf_or_node(old, new, renames), (old, new)


def test_the_comparison_copies_what_main_ppo_moved():
    [row] = [r for r in yaml_data(VERL / "effective-config.yaml")["copied_at_start"]
             if r["entry_point"] == "verl.trainer.main_ppo"]
    copies = {old: (new["to"] if isinstance(new, dict) else new) for old, new in row["copies"].items()}
    assert row["releases"] == ["v0.7.1", "v0.8.0"]
    assert _moves() == {old.removesuffix(".*"): new.removesuffix(".*") for old, new in copies.items()}
