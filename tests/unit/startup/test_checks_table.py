"""The start-up checks table: validated on load with file:line errors, and evaluated in verl's order."""

from __future__ import annotations

import textwrap

import pytest

from migrator.startup.checks import ChecksError, evaluate, load_checks, run_as_verl
from migrator.startup.expr import ABSENT

RELEASES = ("v1", "v2", "v3")
GOOD = """\
bindings:
  - name: n_gpus
    releases: v1..v3
    value: trainer.n_gpus_per_node * trainer.nnodes
validators:
  - name: validate
    releases: v1..v3
    source: verl/utils/config.py:validate_config
    phase: main
    entry_points: [verl.trainer.main_ppo]
    configs: [ppo_trainer]
    checks:
      - id: batch
        fails: data.train_batch_size % n_gpus != 0
        error: AssertionError
        message: "batch ({data.train_batch_size}) by {n_gpus}"
        messages:
          - {releases: v1..v1, message: "old wording {n_gpus}"}
        fix: {key: data.train_batch_size, multiple_of: n_gpus}
      - id: mode
        releases: v2..v3
        severity: warning
        fails: rollout.mode != "async"
        error: DeprecationWarning
        message: "Unknown rollout mode '{rollout.mode}'"
"""


def table(tmp_path, text: str):
    path = tmp_path / "startup-checks.yaml"
    path.write_text(textwrap.dedent(text))
    return load_checks(path, RELEASES)


def run(t, release: str, **values):
    config = {k.replace("__", "."): v for k, v in values.items()}
    return evaluate(t, release, lambda key: config.get(key, ABSENT))


def test_evaluates_in_order_with_messages_per_release_and_the_nearest_fix(tmp_path):
    t = table(tmp_path, GOOD)
    assert [c.id for c in t.at("v1")] == ["batch"] and [c.id for c in t.at("v3")] == ["batch", "mode"]
    values = dict(trainer__n_gpus_per_node=8, trainer__nnodes=1, data__train_batch_size=60, rollout__mode="search")
    batch, mode = run(t, "v2", **values)
    assert (batch.status, batch.message) == ("fails", "batch (60) by 8")
    assert batch.hint == "set data.train_batch_size to 56 or 64 (a multiple of 8)"
    assert batch.values["trainer.n_gpus_per_node"] == 8 and batch.values["n_gpus"] == 8
    assert (mode.status, mode.message) == ("fails", "Unknown rollout mode 'search'")
    stop, warned = run_as_verl([batch, mode])
    assert stop is batch and warned == []  # verl stops before it would warn
    (old,) = run(t, "v1", **values)
    assert old.message == "old wording 8"


@pytest.mark.parametrize("change, line, fault", [
    (("fails: data.train_batch_size % n_gpus != 0", "fails: data.train_batch_size ** 2"), 14, "Pow"),
    (("fails: data.train_batch_size % n_gpus != 0", "fails: data.x % undefined_name"), 14, "undefined_name"),
    (("releases: v2..v3\n        severity", "releases: v2..v9\n        severity"), 21, "unknown release `v9`"),
    (("phase: main", "phase: somewhere"), 9, "unknown phase"),
    (("message: \"batch", "mesage: \"batch"), 16, "unknown field `mesage`"),
    (("    value: trainer", "    value: trainer.n ** 2 or trainer"), 4, "Pow"),
    (("{n_gpus}\"\n        messages", "{gpus}\"\n        messages"), 16, "`{gpus}`"),
    (("source: verl/utils/config.py:validate_config", "source: validate_config"), 8, "path/to/file.py:function"),
])
def test_a_broken_table_names_its_line(tmp_path, change, line, fault):
    old, new = change
    assert old in GOOD
    with pytest.raises(ChecksError) as error:
        table(tmp_path, GOOD.replace(old, new, 1))
    assert f"startup-checks.yaml:{line}:" in str(error.value) and fault in str(error.value)


def test_a_binding_must_exist_at_every_release_that_uses_it(tmp_path):
    with pytest.raises(ChecksError, match=r"`n_gpus` is not bound at v3"):
        table(tmp_path, GOOD.replace("releases: v1..v3\n    value", "releases: v1..v2\n    value", 1))


def test_the_shipped_table_loads_and_covers_the_required_checks():
    t = load_checks()
    for release in ("v0.2.0.post2", "v0.5.0", "v0.6.1", "v0.7.1", "v0.9.0"):
        ids = {c.id for c in t.at(release)}
        assert {"batch-divisible", "actor-micro-batch-unset", "actor-micro-batch-both",
                "rollout-log-prob-micro-batch-unset", "rollout-log-prob-micro-batch-both"} <= ids, release
    assert "validation-sampling-temperature" in {c.id for c in t.at("v0.3.0.post1")}
    assert {"rollout-mode-sync-removed", "rollout-mode-unknown"} <= {c.id for c in t.at("v0.9.0")}
    assert "rollout-name-mode-unknown" in {c.id for c in t.at("v0.6.1")}


CONVERTS = GOOD + """\
      - id: convert
        converts: actor
        error: TypeError
        message: "{class}.__init__() got an unexpected keyword argument '{key}'"
dataclasses:
  - class: verl.utils.profiler.config.ProfilerConfig
    releases: v1..v3
    source: verl/utils/profiler/config.py:ProfilerConfig.__post_init__
    checks:
      - id: ranks
        let: {kind: type_name(self.ranks)}
        fails: kind != "list"
        error: AssertionError
        message: "Profiler ranks must be of type list, got <class '{kind}'>"
        fix: {text: "{node}.ranks as a list"}
"""


def test_conversions_and_dataclass_checks_load_and_are_validated(tmp_path):
    t = table(tmp_path, CONVERTS)
    assert [c.id for c in t.at("v2")] == ["batch", "mode", "convert"]
    (ranks,) = t.post_init_at("v2", "verl.utils.profiler.config.ProfilerConfig")
    assert ranks.validator == "ProfilerConfig.__post_init__"
    for n, (old, new, fault) in enumerate([
            ("type_name(self.ranks)", "type_name(trainer.ranks)", "only its node's keys"),
            ("converts: actor\n", "converts: actor\n        fails: a.b\n", "takes no `fails`")]):
        (tmp_path / str(n)).mkdir()
        with pytest.raises(ChecksError, match=fault):
            table(tmp_path / str(n), CONVERTS.replace(old, new))


def test_a_nodes_keys_come_in_the_configs_order_with_added_keys_last():
    from migrator.startup.conversion import node_children

    # effective.py lists leaves last key first; `+a.z` was appended by the command
    leaves = {"a.c.y": 1, "a.c.x": 2, "a.b": 3, "a.empty": {}, "a.z": 4}
    children = node_children(leaves, ("a.z",))
    assert children("") == ["a"]
    assert children("a") == ["empty", "b", "c", "z"]
    assert children("a.c") == ["x", "y"] and children("a.empty") == [] and children("a.b") is None


def test_a_leaf_that_interpolates_a_node_is_that_node():
    from migrator.startup.conversion import node_children

    leaves = {"r.p.tools": "${oc.select:a.p.tools,null}", "r.q": "${..r.p.tools}", "r.n": "${oc.select:a.none,null}",
              "a.p.tools.npu.contents": (), "a.p.tools.npu._target_": "x.NPU"}
    nodes = node_children(leaves)
    assert nodes.alias("r.p.tools") == "a.p.tools" and nodes("a.p.tools") == ["npu"]
    assert nodes.alias("r.q") == "a.p.tools"  # a leaf naming a leaf that names the node
    assert nodes.alias("r.n") is None and nodes.alias("a.p.tools.npu.contents") is None
