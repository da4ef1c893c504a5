"""The condition language of verl's start-up checks (mappings/verl/startup-checks.yaml).

An expression is written in Python's expression syntax and parsed with `ast`, then checked against a
small whitelist, so a table that uses anything else fails on load with its file and line:

- a dotted config key (`data.train_batch_size`), or a name the check binds (`n_gpus`, in `let:`);
- numbers, strings, `True`/`False`/`None`, a list of those (for `in`);
- `+ - * // %`, unary `-`, `not`, `and`, `or`, `x if c else y`;
- comparisons `== != < <= > >=`, `in`/`not in` a list, `is None`/`is not None` (the key's value is null);
- `get(key, default)`: the key's value, or `default` where the release does not declare it (verl's
  `config.x.get("key", default)`), and `gcd(a, b)`;
- `type_name(x)`: the name of the Python type verl's code sees for the value (`list` for a list, `str`,
  `int`, `float`, `bool`, `NoneType`, `dict`), for the config dataclasses' `isinstance` asserts;
- `first_outside(x, [...])`: the first item of `x` (a list, or the characters of a string, as Python's
  `for` walks them) that is not in the list, or None (verl's `for c in x: assert c in [...]`).

Values come from a lookup (the launch's effective config); one the shell decides or Hydra cannot tell is
`UNKNOWN`, and evaluation follows Kleene's logic: `False and UNKNOWN` is False, `1 + UNKNOWN` is UNKNOWN.
A check whose condition is UNKNOWN is skipped, never guessed.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property


class _Unknown:
    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN = _Unknown()  # a value only run time knows
ABSENT = object()  # the release declares no such key


class ExpressionError(ValueError):
    """A condition outside the language; `col` is the 0-based column of the fault in the text."""

    def __init__(self, message: str, col: int = 0):
        super().__init__(message)
        self.col = col


_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.FloorDiv: operator.floordiv,
           ast.Mod: operator.mod}
_COMPARE = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
            ast.Gt: operator.gt, ast.GtE: operator.ge}
_FUNCTIONS = {"get": 2, "gcd": 2, "type_name": 1, "first_outside": 2}


@dataclass(frozen=True)
class Expression:
    text: str
    tree: ast.expression

    def keys(self) -> frozenset[str]:
        """Every config key the expression reads (bindings excluded)."""
        return self._keys

    def names(self) -> frozenset[str]:
        """The bound names it uses."""
        return self._names

    # Both are asked for on every evaluation of every check (lint judges each launch): computed once.
    @cached_property
    def _keys(self) -> frozenset[str]:
        return frozenset(_dotted(node) for node in self._outer if isinstance(node, ast.Attribute)
                         and _dotted(node) is not None)

    @cached_property
    def _names(self) -> frozenset[str]:
        return frozenset(n.id for n in self._outer if isinstance(n, ast.Name) and n.id not in _FUNCTIONS)

    @property
    def _outer(self) -> list[ast.AST]:
        """The nodes that are not the head of a longer dotted key (`a` and `a.b` in `a.b.c`)."""
        heads = {id(node.value) for node in ast.walk(self.tree) if isinstance(node, ast.Attribute)}
        return [node for node in ast.walk(self.tree) if id(node) not in heads]

    def evaluate(self, lookup: Callable[[str], object], bindings: Mapping[str, object] | None = None) -> object:
        return _eval(self.tree.body, lookup, bindings or {})


def parse(text: str, names: frozenset[str] | set[str] = frozenset()) -> Expression:
    """`text` as an Expression; `names` are the bindings it may use. Raises ExpressionError."""
    if not isinstance(text, str) or not text.strip():
        raise ExpressionError("an expression must be a non-empty string")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        raise ExpressionError(f"not an expression: {exc.msg}", max(0, (exc.offset or 1) - 1)) from None
    _validate(tree.body, names)
    return Expression(text.strip(), tree)


def _validate(node: ast.AST, names) -> None:
    def fault(what: str):
        raise ExpressionError(f"{what} is not part of the condition language", getattr(node, "col_offset", 0))

    if isinstance(node, ast.Constant):
        if not isinstance(node.value, (int, float, str, bool, type(None))):
            fault(f"the constant {node.value!r}")
    elif isinstance(node, ast.Name):
        if node.id not in names:
            raise ExpressionError(f"`{node.id}` is neither a dotted config key nor a name bound in `let`"
                                  f" (bound: {', '.join(sorted(names)) or 'none'})", node.col_offset)
    elif isinstance(node, ast.Attribute):
        if _dotted(node) is None:
            fault("an attribute of something other than a dotted key")
    elif isinstance(node, ast.BinOp):
        if type(node.op) not in _BINARY:
            fault(f"the operator {type(node.op).__name__}")
        _validate(node.left, names)
        _validate(node.right, names)
    elif isinstance(node, ast.UnaryOp):
        if not isinstance(node.op, (ast.Not, ast.USub)):
            fault(f"the operator {type(node.op).__name__}")
        _validate(node.operand, names)
    elif isinstance(node, ast.BoolOp):
        for value in node.values:
            _validate(value, names)
    elif isinstance(node, ast.IfExp):
        for part in (node.test, node.body, node.orelse):
            _validate(part, names)
    elif isinstance(node, ast.Compare):
        _validate(node.left, names)
        for op, right in zip(node.ops, node.comparators):
            if isinstance(op, (ast.Is, ast.IsNot)):
                if not (isinstance(right, ast.Constant) and right.value is None):
                    raise ExpressionError("`is` compares with None only", right.col_offset)
            elif isinstance(op, (ast.In, ast.NotIn)):
                if not (isinstance(right, (ast.List, ast.Tuple)) and all(isinstance(e, ast.Constant) for e in right.elts)):
                    raise ExpressionError("`in` takes a list of constants", right.col_offset)
            elif type(op) not in _COMPARE:
                fault(f"the comparison {type(op).__name__}")
            else:
                _validate(right, names)
    elif isinstance(node, ast.Call):
        name = node.func.id if isinstance(node.func, ast.Name) else None
        if name not in _FUNCTIONS or node.keywords or len(node.args) != _FUNCTIONS[name]:
            raise ExpressionError("calls are `get(key, default)`, `gcd(a, b)`, `type_name(x)` and "
                                  "`first_outside(x, [...])` only", node.col_offset)
        if name == "get" and not (isinstance(node.args[0], ast.Attribute) and _dotted(node.args[0])):
            raise ExpressionError("get() takes a dotted config key first", node.col_offset)
        if name == "first_outside":
            right = node.args[1]
            if not (isinstance(right, (ast.List, ast.Tuple)) and all(isinstance(e, ast.Constant) for e in right.elts)):
                raise ExpressionError("first_outside() takes a list of constants second", node.col_offset)
            _validate(node.args[0], names)
            return
        for arg in node.args:
            _validate(arg, names)
    else:
        fault(f"`{type(node).__name__}`")


def _dotted(node: ast.AST) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def _eval(node: ast.AST, lookup, bindings) -> object:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        return bindings.get(node.id, UNKNOWN)
    if isinstance(node, ast.Attribute):
        value = lookup(_dotted(node))
        return UNKNOWN if value is ABSENT else value
    if isinstance(node, (ast.List, ast.Tuple)):
        return [e.value for e in node.elts]
    if isinstance(node, ast.BoolOp):
        return _bool_op(isinstance(node.op, ast.And), [lambda v=v: _eval(v, lookup, bindings) for v in node.values])
    if isinstance(node, ast.UnaryOp):
        value = _eval(node.operand, lookup, bindings)
        if value is UNKNOWN:
            return UNKNOWN
        if isinstance(node.op, ast.Not):
            return not value
        return _arith(operator.neg, value)
    if isinstance(node, ast.IfExp):
        test = _eval(node.test, lookup, bindings)
        if test is UNKNOWN:
            body, orelse = _eval(node.body, lookup, bindings), _eval(node.orelse, lookup, bindings)
            return body if body is not UNKNOWN and _same(body, orelse) else UNKNOWN
        return _eval(node.body if test else node.orelse, lookup, bindings)
    if isinstance(node, ast.BinOp):
        left, right = _eval(node.left, lookup, bindings), _eval(node.right, lookup, bindings)
        return _arith(_BINARY[type(node.op)], left, right)
    if isinstance(node, ast.Compare):
        return _compare(node, lookup, bindings)
    if isinstance(node, ast.Call):
        if node.func.id == "get":
            value = lookup(_dotted(node.args[0]))
            return _eval(node.args[1], lookup, bindings) if value is ABSENT else value
        if node.func.id == "type_name":
            return _type_name(_eval(node.args[0], lookup, bindings))
        if node.func.id == "first_outside":
            return _first_outside(_eval(node.args[0], lookup, bindings), [e.value for e in node.args[1].elts])
        a, b = (_eval(arg, lookup, bindings) for arg in node.args)
        if any(v is UNKNOWN or not _is_int(v) for v in (a, b)):
            return UNKNOWN
        return math.gcd(a, b)
    raise AssertionError(f"unvalidated node {node!r}")


_TYPE_NAMES = ((bool, "bool"), (int, "int"), (float, "float"), (str, "str"), (type(None), "NoneType"),
               ((list, tuple), "list"), (dict, "dict"))


def _type_name(value) -> object:
    """What `type(x).__name__` gives in verl once Hydra built the node (`_convert_="partial"`: a list is a list)."""
    if value is UNKNOWN:
        return UNKNOWN
    return next((name for types, name in _TYPE_NAMES if isinstance(value, types)), UNKNOWN)


def _first_outside(value, allowed: list) -> object:
    if value is UNKNOWN or not isinstance(value, (str, list, tuple)):
        return UNKNOWN  # verl's `for` over a number is a TypeError: not this check's verdict
    if any(item is UNKNOWN for item in value):
        return UNKNOWN
    return next((item for item in value if item not in allowed), None)


def _bool_op(is_and: bool, values) -> object:
    """Kleene's `and`/`or` with Python's short-circuit: a deciding operand wins over an unknown one."""
    result, unknown = (True if is_and else False), False
    for thunk in values:
        value = thunk()
        if value is UNKNOWN:
            unknown = True
            continue
        if bool(value) != is_and:
            return value
        result = value
    return UNKNOWN if unknown else result


def _compare(node: ast.Compare, lookup, bindings) -> object:
    left = _eval(node.left, lookup, bindings)
    unknown = False
    for op, right_node in zip(node.ops, node.comparators):
        right = _eval(right_node, lookup, bindings)
        if left is UNKNOWN or right is UNKNOWN:
            unknown, left = True, right
            continue
        if isinstance(op, ast.Is):
            ok = left is None
        elif isinstance(op, ast.IsNot):
            ok = left is not None
        elif isinstance(op, (ast.In, ast.NotIn)):
            ok = (left in right) == isinstance(op, ast.In)
        else:
            try:
                ok = _COMPARE[type(op)](left, right)
            except TypeError:
                return UNKNOWN
        if not ok:
            return False
        left = right
    return UNKNOWN if unknown else True


def _arith(function, *values) -> object:
    if any(v is UNKNOWN or v is None or isinstance(v, bool) or not isinstance(v, (int, float)) for v in values):
        # verl would fail on arithmetic with null or text (a TypeError): not this check's verdict
        return UNKNOWN
    try:
        return function(*values)
    except ZeroDivisionError:
        return UNKNOWN


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _same(a, b) -> bool:
    return type(a) is type(b) and a == b
