"""Hostile inputs, YAML (docs/robustness.md, "Hostile use"): each test fails without the guard it pins."""

from __future__ import annotations

import pytest
import yaml

from tests.helpers.rewrite import run

BUCKET = "update_weights_bucket_megabytes"


# -- 15: duplicate keys ----------------------------------------------------------------------------------
@pytest.mark.parametrize("source, key, line", [
    (f"actor_rollout_ref:\n  rollout:\n    {BUCKET}: 1\nactor_rollout_ref:\n  x: 1\n", "actor_rollout_ref", 4),
    (f"actor_rollout_ref:\n  rollout:\n    {BUCKET}: 1\n  rollout:\n    y: 2\n", "actor_rollout_ref.rollout", 4),
    (f"actor_rollout_ref:\n  rollout:\n    {BUCKET}: 1\n    {BUCKET}: 2\n",
     f"actor_rollout_ref.rollout.{BUCKET}", 4),
    ("steps:\n  - run: echo\n    run: echo again\n", "steps[0].run", 3),
])
def test_duplicate_keys_are_a_clear_skip_reason(source, key, line):
    result = run(source, "c.yaml")
    assert result.status == "skipped", (result.status, result.reason)
    assert result.reason == f"duplicate key {key} at line {line}"


# -- 11: line endings of inserted lines --------------------------------------------------------------------
@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
@pytest.mark.parametrize("final", [True, False])
def test_inserted_lines_keep_the_files_line_ending_and_its_missing_final_newline(newline, final):
    lines = ["actor_rollout_ref:", "  rollout:", f"    {BUCKET}: 1", "    name: vllm"]
    source = newline.join(lines) + (newline if final else "")
    result = run(source, "c.yaml")
    assert result.status == "changed", (result.status, result.reason)
    expected = ["actor_rollout_ref:", "  rollout:", "    name: vllm", "    checkpoint_engine:", f"      {BUCKET}: 1"]
    assert result.after.decode() == newline.join(expected) + (newline if final else "")
    assert yaml.safe_load(result.after)["actor_rollout_ref"]["rollout"]["checkpoint_engine"][BUCKET] == 1


def test_insertion_in_the_middle_of_a_cr_only_file_uses_cr():
    source = f"actor_rollout_ref:\r  rollout:\r    {BUCKET}: 1\r    name: vllm\rtrainer:\r  x: 1"
    result = run(source, "c.yaml")
    assert b"\n" not in result.after and result.after.endswith(b"  x: 1"), result.after


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_moving_or_removing_the_last_key_keeps_the_missing_final_newline(newline):
    source = newline.join(["actor_rollout_ref:", "  rollout:", "    name: vllm", f"    {BUCKET}: 1"])
    result = run(source, "c.yaml")
    expected = ["actor_rollout_ref:", "  rollout:", "    name: vllm", "    checkpoint_engine:", f"      {BUCKET}: 1"]
    assert result.after.decode() == newline.join(expected)
    source = newline.join(["trainer:", "  x: 1", "  use_legacy_worker_impl: auto"])
    result = run(source, "c.yaml")
    assert result.after.decode() == newline.join(["trainer:", "  x: 1"])


# -- 9: relative interpolations ------------------------------------------------------------------------
@pytest.mark.parametrize("before, after", [
    # the value stays, the key it names moves
    (f"actor_rollout_ref:\n  rollout:\n    {BUCKET}: 1\n    b: ${{.{BUCKET}}}\n",
     f"actor_rollout_ref:\n  rollout:\n    b: ${{.checkpoint_engine.{BUCKET}}}\n    checkpoint_engine:\n"
     f"      {BUCKET}: 1\n"),
    (f"actor_rollout_ref:\n  rollout:\n    {BUCKET}: 1\n  b: ${{.rollout.{BUCKET}}}\n",
     f"actor_rollout_ref:\n  rollout:\n    checkpoint_engine:\n      {BUCKET}: 1\n"
     f"  b: ${{.rollout.checkpoint_engine.{BUCKET}}}\n"),
    (f"actor_rollout_ref:\n  rollout:\n    {BUCKET}: 1\n    x:\n      c: ${{oc.select:..{BUCKET},7}}\n",
     f"actor_rollout_ref:\n  rollout:\n    x:\n      c: ${{oc.select:..checkpoint_engine.{BUCKET},7}}\n"
     f"    checkpoint_engine:\n      {BUCKET}: 1\n"),
    # the value moves, the key it names stays
    (f"actor_rollout_ref:\n  rollout:\n    name: vllm\n    {BUCKET}: ${{.name}}\n",
     f"actor_rollout_ref:\n  rollout:\n    name: vllm\n    checkpoint_engine:\n      {BUCKET}: ${{..name}}\n"),
    (f"actor_rollout_ref:\n  rollout:\n    name: vllm\n    {BUCKET}: size_${{..rollout.name}}\n",
     f"actor_rollout_ref:\n  rollout:\n    name: vllm\n    checkpoint_engine:\n"
     f"      {BUCKET}: size_${{..name}}\n"),
    # a whole subtree moves: references inside it keep their text
    ("critic:\n  model:\n    fsdp_config:\n      a: 1\n      b: ${.a}\n    path: x\n",
     "critic:\n  model:\n    path: x\n  fsdp:\n    a: 1\n    b: ${.a}\n"),
    ("critic:\n  model:\n    fsdp_config:\n      a: 1\n      b: ${..path}\n    path: x\n",
     "critic:\n  model:\n    path: x\n  fsdp:\n    a: 1\n    b: ${..model.path}\n"),
    # in a list or a flow mapping, the reference resolves from that node
    (f"actor_rollout_ref:\n  rollout:\n    {BUCKET}: 1\n    sizes: ['${{..{BUCKET}}}', 2]\n",
     f"actor_rollout_ref:\n  rollout:\n    sizes: ['${{..checkpoint_engine.{BUCKET}}}', 2]\n    checkpoint_engine:\n"
     f"      {BUCKET}: 1\n"),
    (f"actor_rollout_ref:\n  rollout:\n    {BUCKET}: 1\n    sizes:\n      - a: ${{...{BUCKET}}}\n",
     f"actor_rollout_ref:\n  rollout:\n    sizes:\n      - a: ${{...checkpoint_engine.{BUCKET}}}\n"
     f"    checkpoint_engine:\n      {BUCKET}: 1\n"),
    (f"actor_rollout_ref:\n  rollout:\n    {BUCKET}: 1\n    m: {{a: '${{..{BUCKET}}}'}}\n",
     f"actor_rollout_ref:\n  rollout:\n    m: {{a: '${{..checkpoint_engine.{BUCKET}}}'}}\n    checkpoint_engine:\n"
     f"      {BUCKET}: 1\n"),
])
def test_relative_interpolations_follow_moves(before, after):
    result = run(before, "c.yaml")
    assert result.status == "changed", (result.status, result.reason, result.findings)
    assert result.after.decode() == after
    assert run(result.after, "c.yaml").status == "unchanged"
    # OmegaConf (when installed: not a dependency) resolves every reference of the result, to the
    # values the original resolved to.
    omegaconf = pytest.importorskip("omegaconf")
    OmegaConf = omegaconf.OmegaConf  # noqa: N806
    resolved = [_leaves(OmegaConf.to_container(OmegaConf.create(text), resolve=True)) for text in (before, after)]
    assert resolved[0] == resolved[1]


def _leaves(data) -> list[str]:
    if isinstance(data, dict):
        return sorted(leaf for value in data.values() for leaf in _leaves(value))
    if isinstance(data, list):
        return sorted(leaf for value in data for leaf in _leaves(value))
    return [str(data)]


def test_relative_interpolation_of_a_removed_key_is_reported():
    source = "trainer:\n  use_legacy_worker_impl: auto\n  x: ${.use_legacy_worker_impl}\n"
    result = run(source, "c.yaml")
    assert any("removed" in f.message and f.line == 3 for f in result.findings), result.findings


def test_relative_reference_is_the_shortest_path_up_then_down():
    from migrator.rewrite.yaml.relative import relative_reference
    assert relative_reference(("a", "b"), ("a", "b", "c")) == ".c"
    assert relative_reference(("a", "b", "c"), ("a", "b", "d")) == "..d"
    assert relative_reference(("a", "b"), ("a", "x", "y")) == "..x.y"
    assert relative_reference(("a", "b"), ("a", "b")) == "..b"
    assert relative_reference((), ("a",)) == ".a"


# -- round three: loadable inputs that were internal errors, and flow mappings at the root -------------------
@pytest.mark.parametrize("value", ["1" * 5_001, "2001-13-45"])
def test_a_value_python_cannot_make_is_kept_as_it_is_and_the_file_migrated(value):
    """PyYAML's int() past Python's int-string limit (4,300 digits), and its date(), raised ValueError."""
    result = run(f"actor_rollout_ref:\n  rollout:\n    {BUCKET}: 512\n    seed: {value}\n", "c.yaml")
    assert result.status == "changed", (result.status, result.reason)
    assert result.after.decode() == (f"actor_rollout_ref:\n  rollout:\n    seed: {value}\n    checkpoint_engine:\n"
                                     f"      {BUCKET}: 512\n")


@pytest.mark.parametrize("source", [
    f"!!set\n? a\nactor_rollout_ref:\n  rollout:\n    {BUCKET}: 1\n",
    f"--- !!set\n? actor_rollout_ref.rollout.{BUCKET}\n? b\n",
    f"actor_rollout_ref: !!set\n  ? rollout\n  ? {BUCKET}\n",
])
def test_a_set_is_no_mapping_of_config_keys(source):
    """A `!!set` loads as a Python set: planning moves in it was an internal TypeError."""
    result = run(source, "c.yaml")
    assert result.status == "unchanged", (result.status, result.reason)


@pytest.mark.parametrize("source, line", [
    (f"{{actor_rollout_ref: {{rollout: {{{BUCKET}: 512}}}}}}\n", 1),
    (f'{{"actor_rollout_ref": {{"rollout": {{"{BUCKET}": 512}}}}}}\n', 1),
    (f"{{\n  actor_rollout_ref: {{\n    rollout: {{{BUCKET}: 512}}\n  }}\n}}\n", 3),
])
def test_a_flow_mapping_at_the_root_is_reported_like_a_nested_one(source, line):
    result = run(source, "c.yaml")
    assert result.status == "unchanged", (result.status, result.reason)
    assert [(f.line, f.code, f.message) for f in result.findings] == [
        (line, "VM113", f"actor_rollout_ref.rollout.{BUCKET} changes, but it is inside a flow mapping ({{...}}); "
                        "edit it by hand")]
    nested = run(f"actor_rollout_ref: {{rollout: {{{BUCKET}: 512}}}}\n", "c.yaml")
    assert [f.code for f in nested.findings] == ["VM113"]


@pytest.mark.parametrize("shape", ["flow", "block"])
def test_a_file_nested_past_what_the_data_check_survives_is_a_clear_skip(shape):
    """500 levels: copying and comparing the loaded data recursed per level (an internal RecursionError);
    libyaml itself refuses 1,000."""
    def source(n: int) -> str:
        deep = ("x: " + "[" * n + "]" * n + "\n") if shape == "flow" else \
            "".join(" " * i + "k:\n" for i in range(n)) + " " * n + "k: 1\n"
        return f"actor_rollout_ref:\n  rollout:\n    {BUCKET}: 1\n" + deep

    assert run(source(150), "c.yaml").status == "changed"
    for n in (500, 990):
        result = run(source(n), "c.yaml")
        assert result.status == "skipped", (n, result.status, result.reason)
        assert result.reason.startswith("nested too deeply to check safely (") and result.reason.endswith(
            "levels; at most 200)")
