"""The Python API kinds (symbol-move/-rename/-removal, keyword-rename, module-no-action, signature-change):
loading errors, composition across releases, and the built-in tables' coverage of verl's modules."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from migrator.mapping import TableError, compose, load_builtin
from migrator.mapping.kinds.module import ModuleNoAction
from migrator.mapping.load import TableSet, load_table
from migrator.mapping.modulefacts import read_module_facts
from tests.helpers import REPO

ROOT = REPO
RELEASES = yaml.safe_load((ROOT / "mappings/verl/releases.yaml").read_text())["releases"]
MODULE_FACTS = read_module_facts(ROOT / "mappings/verl/facts/modules/verl.modules", RELEASES)


def tableset(tmp_path: Path, per_release: dict[str, str]) -> TableSet:
    tables = {}
    for release, body in per_release.items():
        path = tmp_path / f"{release}.yaml"
        path.write_text(f"release: {release}\nentries:\n{body}")
        tables[release] = load_table(path, release=release)
    return TableSet("t", ("r0", *per_release), tables)


@pytest.mark.parametrize("body, problem", [
    ("- kind: symbol-move\n  old: a.b.X\n  new: c:X\n  pr: 1\n", "is not a Python name in a module"),
    ("- kind: symbol-move\n  old: a.b:X\n  new: a.b:X\n  pr: 1\n", "old and new are the same"),
    ("- kind: symbol-rename\n  old: a.b:X\n  new: X\n  pr: 1\n", "old and new are the same"),
    ("- kind: keyword-rename\n  function: a.b:f\n  old: x\n  pr: 1\n", "missing field(s) new"),
    ("- kind: keyword-rename\n  function: a.b\n  old: x\n  new: y\n  pr: 1\n", "function:"),
    ("- kind: module-no-action\n  old: a.b\n  pr: 1\n", "missing field(s) why"),
    ("- kind: signature-change\n  function: a.b:C.run.x\n  param: m\n  hint: h\n  pr: 1\n", "is not a function"),
    ("- kind: symbol-move\n  old: a.b:X\n  new: c.d:X\n  pr: 1\n  commit: xyz\n", "commit must be"),
    ("- kind: symbol-move\n  old: a.b:X\n  new: c.d:X\n  pr: 1\n- kind: symbol-rename\n  old: a.b:X\n  new: Y\n"
     "  pr: 2\n", "duplicate old"),
    ("- kind: symbol-move\n  old: a.b:X\n  new: c.d:X\n  pr: 1\n- kind: symbol-removal\n  old: c.d:X\n  hint: h\n"
     "  pr: 2\n", "renames into something this table removes"),
    ("- kind: keyword-rename\n  function: a.b:f\n  old: x\n  new: y\n  pr: 1\n- kind: keyword-rename\n"
     "  function: a.b:f\n  old: y\n  new: z\n  pr: 1\n", "chains into another rename"),
])
def test_bad_entries_name_file_line_and_entry(tmp_path, body, problem):
    path = tmp_path / "r1.yaml"
    path.write_text(f"release: r1\nentries:\n{body}")
    with pytest.raises(TableError) as exc:
        load_table(path, release="r1")
    message = str(exc.value)
    assert re.match(re.escape(str(path)) + r":\d+: (entry #\d+|[a-z-]+ \S+)", message) and problem in message, message


def test_same_keyword_renamed_in_two_functions_is_no_chain(tmp_path):
    tables = tableset(tmp_path, {"r1": "- kind: keyword-rename\n  function: a.b:f\n  old: x\n  new: y\n  pr: 1\n"
                                       "- kind: keyword-rename\n  function: a.b:g\n  old: y\n  new: z\n  pr: 1\n"})
    assert compose(tables).keyword("a.b:f", "x").new == "y"


def test_symbols_chain_through_symbol_and_module_entries(tmp_path):
    tables = tableset(tmp_path, {
        "r1": "- kind: symbol-move\n  old: a.m:X\n  new: b.m:X\n  pr: 1\n",
        "r2": "- kind: module-move\n  old: b\n  new: c\n  pr: 2\n",
        "r3": "- kind: symbol-rename\n  old: c.m:X\n  new: Y\n  pr: 3\n",
    })
    change = compose(tables).symbol("a.m:X")
    assert (change.new, change.prs, change.explicit) == ("c.m:Y", (1, 2, 3), True)
    assert compose(tables, "r1").symbol("b.m:Z").new == "c.m:Z" and not compose(tables, "r1").symbol("b.m:Z").explicit
    assert compose(tables, "r1").symbol("a.m:X") is None  # before the range
    assert compose(tables, "r0", "r1").symbol("a.m:X").new == "b.m:X"


def test_removal_after_a_move_is_a_removal(tmp_path):
    tables = tableset(tmp_path, {
        "r1": "- kind: module-move\n  old: a.m\n  new: a.n\n  pr: 1\n",
        "r2": "- kind: module-removal\n  old: a.n\n  hint: use a.z\n  pr: 2\n"
              "- kind: symbol-move\n  old: a.n:Kept\n  new: a.z:Kept\n  pr: 2\n",
        "r3": "- kind: symbol-removal\n  old: a.z:Kept\n  hint: gone for good\n  pr: 3\n",
    })
    ms = compose(tables)
    assert (ms.symbol("a.m:X").new, ms.symbol("a.m:X").hint) == (None, "use a.z")
    assert compose(tables, "r0", "r2").symbol("a.m:Kept").new == "a.z:Kept"
    assert (ms.symbol("a.m:Kept").new, ms.symbol("a.m:Kept").hint, ms.symbol("a.m:Kept").prs) == \
        (None, "gone for good", (1, 2, 3))
    assert ms.module("a.m").new is None


def test_keywords_follow_their_function(tmp_path):
    tables = tableset(tmp_path, {
        "r1": "- kind: keyword-rename\n  function: a.m:f\n  old: eos_mask\n  new: response_mask\n  pr: 1\n"
              "- kind: module-move\n  old: a.m\n  new: a.n\n  pr: 1\n",
        "r2": "- kind: keyword-rename\n  function: a.n:f\n  old: response_mask\n  new: mask\n  pr: 2\n",
    })
    ms = compose(tables)
    assert (ms.keyword("a.m:f", "eos_mask").new, ms.keyword("a.m:f", "eos_mask").prs) == ("mask", (1, 2))
    assert ms.keyword("a.m:g", "eos_mask") is None


def test_signature_changes_follow_moves(tmp_path):
    tables = tableset(tmp_path, {
        "r1": "- kind: symbol-move\n  old: a.m:Base\n  new: a.n:Base\n  pr: 1\n",
        "r2": "- kind: signature-change\n  function: a.n:Base.run\n  param: messages\n  hint: h\n  pr: 2\n",
    })
    [entry] = compose(tables).signature_changes("a.m:Base")
    assert (entry.method, entry.param) == ("run", "messages")


def test_no_action_modules_compose_to_no_change(tmp_path):
    tables = tableset(tmp_path, {"r1": "- kind: module-move\n  old: a\n  new: b\n  pr: 1\n"
                                       "- kind: module-no-action\n  old: a.vendored\n  why: internal\n  pr: 1\n"})
    ms = compose(tables)
    assert ms.module("a.vendored.x") is None and ms.module("a.x").new == "b.x"
    assert "a.vendored" not in ms.old_modules()


def test_builtin_python_api_entries():
    tables = load_builtin()
    ms = compose(tables, "v0.7.1", "v0.8.0")
    assert ms.symbol("verl.workers.fsdp_workers:ActorRolloutRefWorker").new == \
        "verl.workers.engine_workers:ActorRolloutRefWorker"
    assert ms.symbol("verl.workers.fsdp_workers:CriticWorker").new is None
    ms = compose(tables, "v0.3.0.post1", "v0.9.0")
    assert ms.keyword("verl.trainer.ppo.core_algos:compute_policy_loss", "eos_mask").new == "response_mask"
    assert {e.param for e in compose(tables, "v0.7.0", "v0.7.1").signature_changes(
        "verl.trainer.ppo.ray_trainer:RayPPOTrainer")} == {"reward_fn", "val_reward_fn"}


def decided(ms, module: str) -> bool:
    return ms.module(module) is not None or any(
        isinstance(e, ModuleNoAction) and (module == e.old or module.startswith(e.old + ".")) for e in ms.entries())


def test_every_module_that_left_verl_has_an_entry():
    """For each module present at one release and gone at the next, the composed table of that step
    decides it (moved, removed, or no action)."""
    tables = load_builtin()
    missing, total = [], 0
    for before, after in zip(RELEASES, RELEASES[1:]):
        ms = compose(tables, before, after)
        gone = sorted(set(MODULE_FACTS[before]) - set(MODULE_FACTS[after]))
        total += len(gone)
        missing += [f"{after}: {m}" for m in gone if not decided(ms, m)]
    assert total > 400
    assert not missing, missing[:20]


def test_moved_modules_land_on_modules_that_exist():
    tables = load_builtin()
    wrong = []
    for before, after in zip(RELEASES, RELEASES[1:]):
        ms = compose(tables, before, after)
        for module in sorted(set(MODULE_FACTS[before]) - set(MODULE_FACTS[after])):
            change = ms.module(module)
            if change is not None and change.new is not None and change.new not in MODULE_FACTS[after]:
                wrong.append(f"{after}: {module} -> {change.new}")
    assert not wrong, wrong
