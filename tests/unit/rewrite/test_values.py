"""Value entries applied by every rewriter (golden fixtures in tests/fixtures/values, migrated to v0.9.0
with the built-in tables), and the loader's rules for them.

`NAME.in.EXT` must become `NAME.out.EXT` (no `.out`: nothing changes) with exactly the findings of
`NAME.findings` (`line:col: severity: message`), and a second run must change nothing.
"""

from __future__ import annotations

from functools import lru_cache

import pytest

from migrator.fileprocess import process_file
from migrator.mapping import TableError, compose, load_builtin, load_table
from migrator.rewrite.values import value_at
from tests.helpers import FIXTURES

FIXTURES = FIXTURES / "values"
CASES = sorted(FIXTURES.glob("*.in.*"))


@lru_cache(maxsize=None)
def builtin(from_release=None, to_release="v0.9.0"):  # noqa: D103
    return compose(load_builtin(), from_release, to_release)


def migrate(data: bytes, name: str, maps=None):
    return process_file(name, name, maps or builtin(), data=data)


def finding_lines(result) -> list[str]:
    return [f"{f.line}:{f.col}: {f.severity}: {f.message}" for f in result.findings]


@pytest.mark.parametrize("path", CASES, ids=[p.name for p in CASES])
def test_golden(path):
    name = path.name.replace(".in.", ".")
    release = path.with_name(path.name.split(".in.")[0] + ".from")  # the script's release, when given
    maps = builtin(release.read_text().strip()) if release.exists() else builtin()
    result = migrate(path.read_bytes(), name, maps)
    assert result.status in ("changed", "unchanged"), result.reason
    out = path.with_name(path.name.replace(".in.", ".out."))
    if out.exists():
        assert result.status == "changed"
        assert result.after.decode() == out.read_text()
        assert migrate(result.after, name, maps).status == "unchanged"
    else:
        assert result.status == "unchanged", result.after.decode()
    expected = path.with_name(path.name.split(".in.")[0] + ".findings").read_text().splitlines()
    assert finding_lines(result) == expected


def test_a_mandatory_key_is_added_only_when_the_scripts_release_is_known():
    src = b"python3 -m verl.trainer.main_ppo data.train_batch_size=8 trainer.total_epochs=1\n"
    assert migrate(src, "run.sh").status == "unchanged"
    assert migrate(src, "run.sh", builtin("v0.5.0")).after == src[:-1] + b" actor_rollout_ref.rollout.name=vllm\n"
    assert migrate(src, "run.sh", builtin("v0.6.0")).status == "unchanged"  # mandatory already: set elsewhere


def test_a_mandatory_key_is_not_added_to_a_command_its_author_did_not_end_there():
    src = b"python3 -m verl.trainer.main_ppo \\\n    data.train_files=x \\ # TODO\n    trainer.total_epochs=1\n"
    result = migrate(src, "run.sh", builtin("v0.5.0"))
    assert result.status == "unchanged"
    assert "broken line continuation" in result.findings[0].message


def test_every_file_kind_has_a_value_fixture():
    kinds = {p.suffix for p in FIXTURES.glob("*.out.*")}
    assert kinds >= {".sh", ".yaml", ".py", ".md"}


@pytest.mark.parametrize("src, expected", [
    (b"k=sync rest", ("sync", None)),
    (b'k="sync" rest', ("sync", None)),
    (b"k='a b' rest", ("a b", None)),
    (b"k=$MODE rest", ("", "MODE")),
    (b"k=${MODE} rest", ("", "MODE")),
    (b"k=${MODE:-sync} rest", ("", "?")),
    (b'k=a"b" rest', None),
    (b"k=pre$X rest", ("", "?")),
])
def test_value_token(src, expected):
    token = value_at(src, 2, len(src))
    assert (None if token is None else (token.text, token.variable)) == expected


def test_an_expansion_is_never_edited_and_its_literal_assignment_is_reported():
    src = b"MODE=sglang_async\npython3 -m verl.trainer.main_ppo actor_rollout_ref.rollout.name=$MODE x.y=1\n"
    result = migrate(src, "run.sh")
    assert result.status == "unchanged"
    assert finding_lines(result) == ["1:1: manual: MODE=sglang_async is passed as actor_rollout_ref.rollout.name: "
                                     "write actor_rollout_ref.rollout.name=sglang by hand"]


@pytest.mark.parametrize("assignment, key, code", [
    (b"MODE=sglang_async", "actor_rollout_ref.rollout.name", "VM164"),  # a value-rename: write the new value
    (b"MODE=sync", "actor_rollout_ref.rollout.mode", "VM161"),  # a value-removal with action remove: drop it
])
def test_a_value_passed_through_a_variable_has_its_entrys_code(assignment, key, code):
    src = assignment + b"\npython3 -m verl.trainer.main_ppo " + key.encode() + b"=$MODE x.y=1\n"
    (finding,) = migrate(src, "run.sh").findings
    assert (finding.kind, finding.severity, finding.code) == ("value-variable", "manual", code)


def test_value_entries_follow_the_key_through_later_renames():
    maps = builtin()
    old = maps.value("custom_reward_function.path", "verl/utils/reward_score/math.py")
    new = maps.value("reward.custom_reward_function.path", "verl/utils/reward_score/math.py")
    assert old.new == new.new == "verl/utils/reward_score/math_reward.py"
    assert maps.value("custom_reward_function.path", "my/math.py") is None
    # Before the release that renamed the value, nothing happens.
    assert builtin(None, "v0.5.0").value("custom_reward_function.path", "verl/utils/reward_score/math.py") is None


def test_a_boolean_is_never_copied_into_a_level():
    maps = builtin()
    assert maps.value("algorithm.rollout_is", "true") is None  # the key entry reports it, with its hint
    assert maps.value("algorithm.rollout_is", "false").action == "remove"
    change = maps.value("algorithm.rollout_correction.use_policy_gradient", "True")
    assert (change.new_key, change.new) == ("algorithm.rollout_correction.loss_type", "reinforce")


def test_optional_renames_are_not_applied():
    assert builtin().value("trainer.logger", "tracking") is None


def _table(tmp_path, body: str):
    path = tmp_path / "t.yaml"
    path.write_text("release: v9\nentries:\n" + body)
    return path


@pytest.mark.parametrize("body, message", [
    ("- {kind: value-rename, key: a.b, new: c, pr: 1}\n", "exactly one of old and old-pattern"),
    ("- {kind: value-rename, key: a.b, old: x, old-pattern: 'x', new: c, pr: 1}\n", "exactly one of old"),
    ("- {kind: value-rename, key: a.b, old-pattern: '.*', new: c, pr: 1}\n", "matches an empty value"),
    ("- {kind: value-removal, key: a.b, old: x, hint: h, action: drop, pr: 1}\n", "action must be 'remove'"),
    ("- {kind: value-map, old-key: a.b, new-key: a.c, pr: 1}\n", "exactly one of map and template"),
    ("- {kind: target-move, old: a.B, new: a.B, pr: 1}\n", "old and new are the same"),
    ("- {kind: value-rename, key: a.b, old: x, new: y, pr: 1}\n- {kind: value-rename, key: a.b, old: x, new: z, pr: 1}\n",
     "duplicate"),
])
def test_the_loader_rejects_broken_value_entries(tmp_path, body, message):
    with pytest.raises(TableError) as err:
        load_table(_table(tmp_path, body))
    assert message in str(err.value)


def test_the_loader_reads_every_value_kind(tmp_path):
    table = load_table(_table(tmp_path, (
        "- {kind: value-rename, key: a.b, old-pattern: '(.*/)?m\\.py', new: '\\1n.py', pr: 1, commit: abcdef1}\n"
        "- {kind: value-removal, key: a.b, old: x, hint: gone, action: remove, pr: 1}\n"
        "- {kind: value-map, old-key: a.c, new-key: a.d, map: {true: enabled, false: null}, pr: 1}\n"
        "- {kind: value-default, key: a.e, old-default: vllm, new-default: '???', action: insert, pr: 1}\n"
        "- {kind: target-move, old: p.A, new: q.A, key: n._target_, when: {strategy: megatron}, pr: 1}\n")))
    rename, removal, value_map, default, target = table.entries
    assert rename.renamed("x/m.py") == "x/n.py" and rename.renamed("m.pyc") is None
    assert removal.action == "remove" and value_map.mapped("True") == (True, "enabled")
    assert value_map.mapped("false") == (True, None) and value_map.mapped("maybe") == (False, None)
    assert default.old_default == "vllm" and target.when == (("strategy", "megatron"),)


@pytest.mark.parametrize("value, new", [
    (b"$VERL/verl/utils/reward_score/math.py", b"$VERL/verl/utils/reward_score/math_reward.py"),
    (b'"${VERL_HOME}/verl/utils/reward_score/math.py"', b'"${VERL_HOME}/verl/utils/reward_score/math_reward.py"'),
])
def test_a_value_after_a_directory_expansion_is_renamed_in_its_literal_part(value, new):
    """The pattern renames the file whatever directory holds it (`(.*/)?verl/utils/reward_score/math.py`, #3378):
    the literal part after `$VERL` is edited, the expansion kept."""
    src = b"python3 -m verl.trainer.main_ppo custom_reward_function.path=" + value + b" actor_rollout_ref.rollout.name=vllm\n"
    result = migrate(src, "run.sh", builtin("v0.5.0", "v0.6.1"))
    assert result.after == src.replace(value, new)


@pytest.mark.parametrize("value", [
    b"$A/$B/verl/utils/reward_score/math.py",  # two expansions: the literal part is not one path's tail
    b"$(pwd)/verl/utils/reward_score/math.py",  # a command substitution
    b"${VERL:-/opt}/verl/utils/reward_score/math.py",  # an expansion with a default
    b"$VERL.py",  # not a directory
])
def test_a_value_with_other_expansions_stays(value):
    src = b"python3 -m verl.trainer.main_ppo custom_reward_function.path=" + value + b" actor_rollout_ref.rollout.name=vllm\n"
    result = migrate(src, "run.sh", builtin("v0.5.0", "v0.6.1"))
    assert result.after in (None, src)


def test_a_change_that_depends_on_the_directory_is_not_made_on_the_literal_part(tmp_path):
    """A pattern anchored at the start (`verl/...` only at the root) would give another result under a
    directory: the literal part alone proves nothing, so the value stays."""
    table = tmp_path / "t.yaml"
    table.write_text("entries:\n- {kind: value-rename, key: trainer.hook, old-pattern: 'hooks/a\\.py', "
                     "new: hooks/b.py, pr: 1}\n")
    maps = compose(load_builtin(), "main", "main", [table])
    src = b"python3 -m verl.trainer.main_ppo trainer.hook=$ROOT/hooks/a.py trainer.hook2=/hooks/a.py\n"
    result = migrate(src, "run.sh", maps)
    assert result.after in (None, src)


def test_the_removed_mindspeed_engine_is_a_manual_step_at_main():
    """#7374 deleted model_engine/mindspeed.yaml: Hydra at main cannot compose `model_engine=mindspeed`."""
    change = builtin("v0.9.0", "main").value("model_engine", "mindspeed")
    assert change is not None and change.action == "warn" and change.prs == (7374,)
    assert "model_engine=megatron" in change.hint
    assert builtin("v0.8.0", "v0.9.0").value("model_engine", "mindspeed") is None
