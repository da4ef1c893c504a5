"""YAML rewriter: moves and removals, semantic validation, and hypothesis properties over random configs."""

from __future__ import annotations

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from migrator.rewrite import yaml as yaml_rewriter
from tests.helpers.rewrite import FIXTURES, check_noop, check_transformed, mappings, run

# Names that look like verl's but never spell a key the tables change.
NAMES = ["actor_rollout_ref", "rollout", "critic", "model", "trainer", "fsdp", "name", "checkpoint_engine",
         "update_weights_bucket_megabytes_note", "fsdp_configs", "param_offload", "lr", "data", "ünï"]
SCALARS = st.one_of(
    st.integers(-5, 5000).map(str),
    st.sampled_from(["vllm", "true", "null", "~", "1e-6", "'single ''quoted'''", '"double \\"q\\""',
                     "${actor_rollout_ref.rollout.name}", "'ünïcode ✓'", "[a, b]", "{x: 1}", "\"\"",
                     "bash examples/gsm8k/run.sh"]),
)


def configs(depth=3):
    leaf = SCALARS
    if depth == 0:
        return st.dictionaries(st.sampled_from(NAMES), leaf, min_size=1, max_size=4)
    return st.dictionaries(st.sampled_from(NAMES), st.one_of(leaf, configs(depth - 1)), min_size=1, max_size=4)


def render(data: dict, step: int, comments: list[bool], indent: int = 0) -> str:
    out = []
    for i, (key, value) in enumerate(data.items()):
        pad = " " * indent
        flag = comments[(indent + i) % len(comments)]
        if flag:
            out.append(f"{pad}# about {key}: keep me\n")
        if isinstance(value, dict):
            out.append(f"{pad}{key}:{'  # trailing' if flag else ''}\n")
            out.append(render(value, step, comments, indent + step))
        else:
            out.append(f"{pad}{key}: {value}{'   # note ✓' if flag else ''}\n")
            if flag:
                out.append("\n")
    return "".join(out)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(configs(), st.sampled_from([2, 4]), st.lists(st.booleans(), min_size=1, max_size=5))
def test_random_configs_without_old_keys_survive_byte_for_byte(data, step, comments):
    text = "# @package _global_\n" + render(data, step, comments)
    result = run(text, "config.yaml")
    assert result.status == "unchanged", (result.reason, result.after)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(configs(2), st.sampled_from([2, 4]), st.lists(st.booleans(), min_size=1, max_size=5),
       st.integers(0, 4096))
def test_random_configs_move_the_bucket_key_and_keep_everything_else(data, step, comments, mb):
    data = dict(data)
    arr = dict(data.get("actor_rollout_ref") or {}) if isinstance(data.get("actor_rollout_ref"), dict) else {}
    rollout = dict(arr.get("rollout")) if isinstance(arr.get("rollout"), dict) else {}
    rollout.pop("checkpoint_engine", None)
    rollout["update_weights_bucket_megabytes"] = str(mb)
    arr["rollout"] = rollout
    data["actor_rollout_ref"] = arr
    text = render(data, step, comments)
    result = run(text, "config.yaml")
    assert result.status == "changed", (result.reason, text)
    before, after = yaml.safe_load(text), yaml.safe_load(result.after)
    old_rollout = before["actor_rollout_ref"].pop("rollout")
    new_rollout = after["actor_rollout_ref"].pop("rollout")
    moved = old_rollout.pop("update_weights_bucket_megabytes")
    assert new_rollout.pop("checkpoint_engine") == {"update_weights_bucket_megabytes": moved}
    assert new_rollout == old_rollout
    assert after == before
    # Untouched lines keep their bytes and order.
    kept = [line for line in text.splitlines() if "update_weights_bucket_megabytes:" not in line]
    assert [line for line in result.after.decode().splitlines() if line in kept] == kept
    assert run(result.after, "config.yaml").status == "unchanged"


def test_rename_within_the_same_parent_keeps_quoting():
    check_transformed('critic:\n  model:\n    "fsdp_config": {}\n', 'critic:\n  "fsdp": {}\n', "c.yaml")


def test_creates_missing_parents_with_the_file_step_at_the_end_of_the_nearest_ancestor():
    check_transformed(
        "actor_rollout_ref:\n    rollout:\n        update_weights_bucket_megabytes: 1  # one\n        name: x\n"
        "trainer:\n    a: 1\n",
        "actor_rollout_ref:\n    rollout:\n        name: x\n        checkpoint_engine:\n"
        "            update_weights_bucket_megabytes: 1  # one\ntrainer:\n    a: 1\n", "c.yaml")
    check_transformed("critic:\n  model:\n    fsdp_config:\n      param_offload: true\n  x: 1\n",
                      "critic:\n  x: 1\n  fsdp:\n    param_offload: true\n", "c.yaml")


def test_block_scalar_values_move_with_their_indentation():
    check_transformed(
        "critic:\n  model:\n    fsdp_config:\n      notes: |\n        line one\n          indented\n\n"
        "        after blank\n    path: p\n",
        "critic:\n  model:\n    path: p\n  fsdp:\n    notes: |\n      line one\n        indented\n\n"
        "      after blank\n", "c.yaml")


def test_removal_deletes_the_key_and_its_comments_and_a_parent_left_empty():
    check_transformed("trainer:\n  # legacy\n  use_legacy_worker_impl: auto\nx: 1\n", "x: 1\n", "c.yaml")
    check_transformed("trainer:\n  a: 1\n  # legacy\n  use_legacy_worker_impl: auto\n", "trainer:\n  a: 1\n",
                      "c.yaml")


def test_warn_key_is_reported_and_kept():
    source = "actor_rollout_ref:\n  rollout:\n    engine_kwargs:\n      vllm:\n        enable_expert_parallel: true\n"
    result = run(source, "c.yaml")
    assert result.status == "unchanged"
    assert [(f.kind, f.severity, f.line) for f in result.findings] == [("key-warn", "warning", 5)]


def test_noops():
    check_noop("a:\n  update_weights_bucket_megabytes: 1\n", "c.yaml")  # not under actor_rollout_ref.rollout
    check_noop("actor_rollout_ref:\n  rollout:\n    update_weights_bucket_megabytes_note: 1\n", "c.yaml")
    check_noop("---\nx: 1\n---\ny: 2\n", "c.yaml")


def test_multi_document_files_are_a_manual_step():
    result = run("x: 1\n---\nactor_rollout_ref:\n  rollout:\n    update_weights_bucket_megabytes: 1\n", "c.yaml")
    assert result.status == "unchanged"
    assert "several YAML documents" in result.findings[0].message


def test_package_that_cannot_be_known_leaves_keys_alone():
    check_noop("# @package _group_\nupdate_weights_bucket_megabytes: 1\n", "c.yaml")


def test_validate_compares_data_with_the_table_changes():
    maps = mappings()
    before = b"actor_rollout_ref:\n  rollout:\n    update_weights_bucket_megabytes: 1\n"
    good = b"actor_rollout_ref:\n  rollout:\n    checkpoint_engine:\n      update_weights_bucket_megabytes: 1\n"
    assert yaml_rewriter.validate(before, good, maps) is None
    lost = b"actor_rollout_ref:\n  rollout:\n"
    assert "differ" in yaml_rewriter.validate(before, lost, maps)
    wrong_value = good.replace(b": 1", b": 2")
    assert "differ" in yaml_rewriter.validate(before, wrong_value, maps)
    assert "would not load" in yaml_rewriter.validate(before, b"a: [\n", maps)


def test_keys_inside_sequences_are_not_config_paths():
    source = "- actor_rollout_ref:\n    rollout:\n      update_weights_bucket_megabytes: 1\n"
    check_noop(source, "c.yaml")  # keys inside sequences are not config paths


def _node_marks(node, out):
    out.append((type(node).__name__, node.tag, getattr(node, "style", None) or None,
                node.value if isinstance(node, yaml.ScalarNode) else None,
                (node.start_mark.index, node.start_mark.line, node.start_mark.column),
                (node.end_mark.index, node.end_mark.line, node.end_mark.column)))
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            _node_marks(key, out)
            _node_marks(value, out)
    elif isinstance(node, yaml.SequenceNode):
        for value in node.value:
            _node_marks(value, out)
    return out


LIBYAML_CASES = [p.read_text(encoding="utf-8-sig") for p in sorted((FIXTURES / "yaml").glob("*.y*ml"))] + [
    "a:\n  b: 1\n  c: [1, 2]",  # no final newline: libyaml counts an implicit line break there
    "a:\r\n  b: 1\r\n",
    "a: 1\u2028b: 2\n",
    "x: &anchor\n  y: 1\nz: *anchor\n",
    "---\na: 1\n---\nb: |\n  text\n  more\n",
    "k: 'é ✓'\nl: \"\\u00e9\"\n",
]


@pytest.mark.skipif(not getattr(yaml, "__with_libyaml__", False), reason="PyYAML without libyaml")
@pytest.mark.parametrize("text", LIBYAML_CASES)
def test_libyaml_gives_the_pure_python_loaders_nodes_marks_and_data(text):
    from migrator.rewrite import yaml as yaml_rewriter

    fast = [_node_marks(d, []) for d in yaml_rewriter.compose_all(text) if d is not None]
    slow = [_node_marks(d, []) for d in yaml.compose_all(text) if d is not None]
    assert fast == slow
    assert yaml_rewriter.load_all(text) == list(yaml.safe_load_all(text))
    assert yaml_rewriter.has_anchors(text) == ("&" in text)
