"""The condition language of the start-up checks: what it accepts, refuses, and how it treats unknowns."""

import pytest

from migrator.startup.expr import ABSENT, UNKNOWN, ExpressionError, parse


def run(text, values=None, names=None):
    values = values or {}
    return parse(text, set(names or ())).evaluate(lambda k: values.get(k, ABSENT), names or {})


def test_arithmetic_and_divisibility_over_dotted_keys():
    values = {"data.train_batch_size": 60, "actor_rollout_ref.rollout.n": 5, "trainer.n_gpus_per_node": 8}
    assert run("data.train_batch_size * actor_rollout_ref.rollout.n % trainer.n_gpus_per_node != 0", values) is True
    assert run("data.train_batch_size * actor_rollout_ref.rollout.n // trainer.n_gpus_per_node", values) == 37


def test_names_null_membership_conditional_and_functions():
    assert run("a.b is None and a.c is not None", {"a.b": None, "a.c": 1}) is True
    assert run("a.mode not in ['sync', 'async']", {"a.mode": "search"}) is True
    assert run("x * 2 if a.s == 'megatron' else x", {"a.s": "fsdp"}, {"x": 4}) == 4
    assert run("gcd(a.n, 8)", {"a.n": 12}) == 4
    assert run("get(a.missing, 1) + 1") == 2
    assert run("get(a.present, 1)", {"a.present": 3}) == 3


def test_unknown_propagates_unless_the_other_operand_decides():
    assert run("a.x % 8 != 0", {"a.x": UNKNOWN}) is UNKNOWN
    assert run("not a.dyn and a.x % 8 != 0", {"a.dyn": True, "a.x": UNKNOWN}) is False
    assert run("a.dyn or a.x > 1", {"a.dyn": True, "a.x": UNKNOWN}) is True
    assert run("a.dyn and a.x > 1", {"a.dyn": UNKNOWN, "a.x": 0}) is False
    assert run("a.absent + 1") is UNKNOWN  # a key the release does not declare: verl would raise, not judged
    assert run("a.x % a.zero", {"a.x": 4, "a.zero": 0}) is UNKNOWN
    assert run("a.x * 2", {"a.x": "text"}) is UNKNOWN
    assert run("1 if a.c else 1", {"a.c": UNKNOWN}) == 1  # both branches agree


@pytest.mark.parametrize("text, fault", [
    ("__import__('os')", "calls are"),
    ("a.b ** 2", "Pow"),
    ("lambda: 1", "Lambda"),
    ("a.b is 3", "`is` compares with None only"),
    ("a.b in other.list", "`in` takes a list of constants"),
    ("undefined_name > 1", "neither a dotted config key nor a name bound"),
    ("a.b[0]", "Subscript"),
    ("a.b >", "not an expression"),
    ("", "non-empty"),
])
def test_refused_forms_name_the_fault(text, fault):
    with pytest.raises(ExpressionError, match=fault.replace("*", r"\*").replace("(", r"\(")):
        parse(text)


def test_keys_and_names_read():
    e = parse("get(a.b.c, 1) * n_gpus + d.e", {"n_gpus"})
    assert e.keys() == {"a.b.c", "d.e"}
    assert e.names() == {"n_gpus"}


def test_type_names_and_the_first_item_outside_a_list():
    assert run("type_name(a.x)", {"a.x": (1, 2)}) == "list"
    assert [run("type_name(a.x)", {"a.x": v}) for v in ("s", 1, 1.5, True, None, {})] == \
        ["str", "int", "float", "bool", "NoneType", "dict"]
    assert run("type_name(a.x)", {"a.x": UNKNOWN}) is UNKNOWN
    assert run("first_outside(a.x, ['npu', 'cpu'])", {"a.x": ("npu", "gpu", "tpu")}) == "gpu"
    assert run("first_outside(a.x, ['npu', 'cpu'])", {"a.x": ("cpu",)}) is None
    assert run("first_outside(a.x, ['cpu'])", {"a.x": "cpu"}) == "c"  # a string is walked by its characters
    assert run("first_outside(a.x, ['cpu'])", {"a.x": 3}) is UNKNOWN
    with pytest.raises(ExpressionError, match="list of constants"):
        parse("first_outside(a.x, a.y)")
