"""Precision rules every composed entry passes (migrator/mapping/precision.py), against the real tables
and facts: no key the target still has is removed, a subtree move carries only verl's keys, a module
move lands on a module the target ships, and migrate and lint agree on `data.val_batch_size`."""

from __future__ import annotations

from functools import lru_cache

import pytest

from migrator.fileprocess import process_file
from migrator.lint.facts import load_facts
from migrator.lint.runner import lint_source
from migrator.mapping import KeyChange, compose, load_builtin
from migrator.mapping.kind import Origin
from migrator.mapping.kinds.key import KeyRemoval, KeyRename

RUN = b"""#!/bin/bash
python3 -m verl.trainer.main_ppo \\
    data.train_batch_size=1024 \\
    data.val_batch_size=1312 \\
    actor_rollout_ref.rollout.name=vllm \\
    trainer.total_epochs=15
"""


@lru_cache(maxsize=None)
def tables():
    return load_builtin()


@lru_cache(maxsize=None)
def builtin(to_release="v0.9.0"):
    return compose(tables(), None, to_release)


@pytest.mark.parametrize("release", ["v0.4.1", "v0.6.0", "v0.9.0"])
def test_val_batch_size_survives_and_lint_agrees(release):
    maps = builtin(release)
    result = process_file("run.sh", "run.sh", maps, data=RUN)
    assert result.status == "unchanged" and not result.findings
    report = lint_source(RUN, "run.sh", load_facts(), maps, release)
    assert report.skipped is None
    assert not [f for f in report.findings if "val_batch_size" in str(f)]


def test_a_removal_of_a_key_the_target_still_has_becomes_a_warning(tmp_path):
    # A release table that removes or renames a key its own release still has: the facts win.
    user = tmp_path / "v0.9.0.yaml"
    user.write_text("release: v0.9.0\nentries:\n- {kind: key-removal, old: data.train_batch_size, action: remove, "
                    "hint: h, pr: 1}\n")
    maps = compose(tables(), None, "v0.9.0", [user])
    assert maps.key("data.train_batch_size") is None
    assert process_file("run.sh", "run.sh", maps, data=RUN).status == "unchanged"
    # The rule itself, for a change that composition alone would apply (an entry of an older release).
    removal = KeyRemoval(pr=1, origin=Origin("t.yaml", 1, "v0.6.0"), note=None, old="data.train_batch_size",
                         action="remove", hint="h")
    change = KeyChange("data.train_batch_size", None, "remove", "h", (removal,))
    guarded = builtin().precision.still_read(change.old, change)
    assert guarded.action == "warn" and "still has it" in guarded.note, guarded
    # A rename by a table of a release that still shipped the key is a deprecation: it stays a rename.
    rename = KeyRename(pr=1, origin=Origin("t.yaml", 1, "v0.6.0"), note=None, old="trainer.total_epochs",
                       new="trainer.epochs")
    alias = KeyChange("trainer.total_epochs", "trainer.epochs", "rename", None, (rename,))
    assert builtin().precision.still_read(alias.old, alias) is alias
    gone = KeyChange("trainer.no_such_key", None, "remove", "h", (removal,))
    assert builtin().precision.still_read(gone.old, gone) is gone


def test_a_table_of_the_users_own_is_their_call(tmp_path):
    user = tmp_path / "fork.yaml"  # no release: applies after the target
    user.write_text("entries:\n- {kind: key-rename, old: trainer.total_epochs, new: trainer.epochs, pr: 1}\n")
    assert compose(tables(), None, "v0.9.0", [user]).key("trainer.total_epochs").new == "trainer.epochs"


def test_a_deprecated_alias_the_table_renamed_knowingly_is_still_renamed():
    change = builtin().key("reward_model.enable")
    assert change.action == "rename" and change.new == "reward.reward_model.enable"


def test_a_subtree_move_leaves_a_forks_own_keys_and_reports_them():
    maps = builtin()
    assert maps.key("custom_reward_function.path").new == "reward.custom_reward_function.path"
    fork = maps.key("custom_reward_function.overlong_buffer.enable")
    assert fork.action == "warn" and "your own key" in fork.hint
    src = (b"python3 -m verl.trainer.main_ppo actor_rollout_ref.rollout.name=vllm custom_reward_function.path=r.py "
           b"custom_reward_function.overlong_buffer.enable=True\n")
    result = process_file("run.sh", "run.sh", maps, data=src)
    assert result.after == src.replace(b" custom_reward_function.path", b" reward.custom_reward_function.path")
    assert [(f.severity, f.code) for f in result.findings] == [("manual", "VM198")]  # Hydra rejects it at the target


def test_a_subtree_move_in_yaml_keeps_the_forks_key_in_place():
    src = b"custom_reward_function:\n  path: r.py\n  overlong_buffer:\n    enable: true\n"
    result = process_file("c.yaml", "c.yaml", builtin(), data=src)
    assert b"overlong_buffer" in result.after.split(b"reward:")[0]  # not carried into the moved node
    assert [(f.line, f.severity) for f in result.findings] == [(3, "warning"), (4, "warning")]
    assert all("no verl release has it under custom_reward_function" in f.message for f in result.findings)


def test_a_module_move_only_lands_on_a_module_the_target_ships():
    maps = builtin()
    assert maps.module("recipe.one_step_off_policy.main_ppo").new == "verl.experimental.one_step_off_policy.main_ppo"
    # A module no verl release had under the moved package: the prefix move would invent it.
    gone = maps.module("recipe.one_step_off_policy.async_main_ppo")
    assert gone.new is None and "does not ship" in gone.hint
    # verl's own submodule that the move took along and a later PR deleted has its own removal entry.
    assert maps.module("recipe.one_step_off_policy.fsdp_workers").new is None
    assert maps.module("verl.utils.reward_score.math").new == "verl.utils.reward_score.math_reward"
    result = process_file("run.sh", "run.sh", maps, data=b"python3 -m recipe.one_step_off_policy.fsdp_workers x.y=1\n")
    assert result.status == "unchanged" and [f.severity for f in result.findings] == ["manual"]


def test_every_composed_module_and_path_move_lands():
    facts, releases = tables().facts, tables().releases
    for release in ("v0.7.0", "v0.9.0"):
        maps = builtin(release)
        for module in maps.old_modules():
            change = maps.module(module)
            if change is not None and change.new is not None:
                assert facts.module_exists(change.new, release, releases), change
        for path in maps.old_paths():
            change = maps.path(path)
            if change is not None and change.new is not None and not change.new.endswith("/"):
                assert change.new in facts.paths(release), change
