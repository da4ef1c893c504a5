"""The nesting guard of the Python rewriter: the estimate bounds the depth of the tree, it counts what
only code nests (not strings or comments), every parser survives every shape at the bound, and a file
above it is skipped with the reason before any parser sees it."""

from __future__ import annotations

import ast
import json
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from migrator.edits import SourceNotParsed
from migrator.rewrite import python as py_rewriter
from migrator.rewrite.python.nesting import (
    MAX_FSTRING_NESTING,
    MAX_NESTING,
    MAX_NESTING_FOR_LIBCST,
    UNBOUNDED,
    nesting_depth,
)
from tests.helpers import HANG_GUARD, REPO
from tests.helpers.rewrite import mappings, run

sys.path.insert(0, str(REPO / "bench"))
from parse_limits import PYTHON_SHAPES  # noqa: E402 - the shapes bench/parse_limits.py measures

OLD_IMPORT = "import verl.utils.npu_utils\n"  # moved in the test table: the rewriter parses the whole file
# An old key in an f-string with a string in a field: the `ast` front-end declines, libcst reads it.
FOR_LIBCST = 'x = f"{a[\'k\']} +actor_rollout_ref.rollout.update_weights_bucket_megabytes=1"\n'

# The estimate counts a statement from its first operator; the tree adds a Module, the statement and a leaf.
TREE_OVER_ESTIMATE = 3


def tree_depth(source: str) -> int:
    deepest, stack = 0, [(ast.parse(source), 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node)
                     if not isinstance(child, ast.expr_context))
    return deepest


def largest_within_bound(shape: str, bound: int = MAX_NESTING) -> int:
    """The largest N whose source the guard lets through (the estimate grows with N)."""
    make, low, high = PYTHON_SHAPES[shape], 1, 4 * bound
    while low < high:
        middle = (low + high + 1) // 2
        if nesting_depth(make(middle).encode()) <= bound:
            low = middle
        else:
            high = middle - 1
    return low


@pytest.mark.parametrize("shape", sorted(PYTHON_SHAPES))
def test_the_estimate_bounds_the_tree_of_every_measured_shape(shape):
    for n in (1, 7, 60, 150):
        source = PYTHON_SHAPES[shape](n)
        try:
            tree_depth(source)
        except SyntaxError:  # more than 200 brackets or 100 indents: Python's own limits
            continue
        assert nesting_depth(source.encode()) + TREE_OVER_ESTIMATE >= tree_depth(source), (shape, n)


_LEAVES = st.sampled_from(["a", "1", "'s'", "f'{a}'", "b.c", "None"])


def _wrap(children):
    one, two = children
    return st.sampled_from([
        f"-{one}", f"not {one}", f"({one} + {two})", f"{one} ** {two}", f"{one}.attr", f"{one}({two})",
        f"{one}[{two}]", f"[{one}, {two}]", f"{{{one}: {two}}}", f"({one} if {two} else {one})",
        f"(lambda: {one})", f"({one} and {two})", f"{one} < {two}", f"f'{{{one}}}'", f"[x for x in {one}]",
        f"{one}.b.c({two}, k={one})", f'f"{{{one}!r:>{{{two}}}}}"',
    ])


_EXPRESSIONS = st.recursive(_LEAVES, lambda inner: st.tuples(inner, inner).flatmap(_wrap), max_leaves=60)


@settings(max_examples=300, deadline=None)
@given(_EXPRESSIONS, st.integers(min_value=0, max_value=4))
def test_the_estimate_bounds_the_tree_of_random_expressions(expression, indent):
    source = "".join("    " * i + "if a:\n" for i in range(indent)) + "    " * indent + f"x = {expression}\n"
    try:
        depth = tree_depth(source)
    except (SyntaxError, RecursionError, MemoryError):  # nested f-string quotes before 3.12
        return
    assert nesting_depth(source.encode()) + TREE_OVER_ESTIMATE >= depth


@pytest.mark.parametrize("source", [
    b'x = "' + b"-" * 5000 + b'"\n',
    b"x = '''\n" + b"((((-----\n" * 1000 + b"'''\n",
    b"# " + b"(" * 5000 + b"\n" + b"x = 1\n",
    b'x = f"' + b"-" * 5000 + b'{a}"\n',
    b'x = f"{{' + b"(" * 5000 + b'}}"\n',
    b"x = [r'\\d+('" + b", r'(('" * 2000 + b"]\n",
    b"data = [" + b"(-1, -2.5e-3, a.b), " * 5000 + b"]\n",
    b"x = (1 +\n" + b"     2, \\\n" * 2000 + b"3)\n",
    b"".join(b"def f%d(a, b=-1):\n    return a.b(c)[d] if not e else -f\n" % i for i in range(3000)),
])
def test_strings_comments_and_siblings_do_not_count_as_nesting(source):
    assert nesting_depth(source) < 20


@pytest.mark.parametrize("source, at_least", [
    (b'x = f"{' + b"-" * 2000 + b'a}"\n', 2000),
    (b"x = f'{a!r:{" + b"-" * 2000 + b"b}}'\n", 2000),
    (b'x = rf"\\{' + b"-" * 2000 + b'a}"\n', 2000),
    (b"x = f'''{\n" + b"-" * 2000 + b"a}'''\n", 2000),
    (b'x = f"{f\'{' + b"-" * 2000 + b'a}\'}"\n', 2000),
    (b"x = '''" + b"a" * 10 + b"'''; y = " + b"-" * 2000 + b"a\n", 2000),
    (b"x = (" + b"\n-" * 2000 + b"a)\n", 2000),
    (b"x = a \\\n" + b"+ a \\\n" * 2000 + b"\n", 2000),
    (b"if a:\n    pass\n" + b"elif a:\n    pass\n" * 2000, 2000),
    (b"(" * 2000 + b"\n", 2000),  # left open at the end of the file
])
def test_code_in_f_strings_continuations_and_elif_chains_counts(source, at_least):
    assert nesting_depth(source) >= at_least


def test_f_strings_nested_past_what_python_reads_are_too_deep_not_a_recursion_error():
    source = b"x = " + b'f"{' * 2_000 + b"a" + b'}"' * 2_000 + b"\n"  # same quotes nest in Python 3.12
    assert nesting_depth(source) == UNBOUNDED
    result = run(OLD_IMPORT + source.decode(), "deep.py")
    assert result.status == "skipped"
    assert result.reason == ("nested too deeply to parse safely (f-strings more than "
                             f"{MAX_FSTRING_NESTING} deep; at most {MAX_NESTING})")
    assert nesting_depth(b"x = " + b'f"{' * 100 + b"a" + b'}"' * 100 + b"\n") < UNBOUNDED


def test_every_parser_survives_every_shape_at_the_bounds():
    """At MAX_NESTING: `compile` and the whole rewriter; at MAX_NESTING_FOR_LIBCST: both libcst front-ends too.
    In a child process, so that a crash (libcst's native parser) fails the test, not the suite."""
    shapes = {shape: (largest_within_bound(shape), largest_within_bound(shape, MAX_NESTING_FOR_LIBCST))
              for shape in PYTHON_SHAPES}
    code = f"""
import json, sys
sys.path.insert(0, {str(REPO / "bench")!r})
from parse_limits import PYTHON_SHAPES
from migrator.edits import SourceNotParsed
from migrator.rewrite.python import cst_front
from tests.helpers.rewrite import mappings, run
for shape, (n, n_libcst) in json.loads({json.dumps(json.dumps(shapes))}).items():
    source = {OLD_IMPORT!r} + PYTHON_SHAPES[shape](n)
    try:  # Python's own limits (200 brackets, 100 indents, its parser's stack) are errors, not crashes
        compile(source, "<bound>", "exec", dont_inherit=True)
    except (SyntaxError, MemoryError):
        pass
    for text in (source, {FOR_LIBCST!r} + source):
        result = run(text, "bound.py")
        assert result.status != "failed", (shape, n, result.reason)
    source = {OLD_IMPORT!r} + {FOR_LIBCST!r} + PYTHON_SHAPES[shape](n_libcst)
    for front_end in (cst_front.locate_module, cst_front.locate_statements):
        try:
            front_end(source.encode(), mappings())
        except SourceNotParsed:
            pass
    result = run(source, "bound.py")
    assert result.status != "failed", (shape, n_libcst, result.reason)
print("survived", len(PYTHON_SHAPES))
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=HANG_GUARD)
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-3000:])
    assert proc.stdout.split() == ["survived", str(len(PYTHON_SHAPES))]


def test_ordinary_code_is_far_below_the_bounds():
    """This repository's own Python (and the deepest file of verl's examples at any tag is similar)."""
    files = sorted(REPO.glob("migrator/**/*.py")) + sorted(REPO.glob("tests/**/*.py"))
    deepest = max(nesting_depth(path.read_bytes()) for path in files)
    assert len(files) > 100 and deepest < MAX_NESTING_FOR_LIBCST / 2


@pytest.mark.parametrize("shape", ["unary", "binary", "paren", "call", "ternary", "elif"])
def test_a_file_above_the_bound_is_skipped_before_any_parser_sees_it(shape, monkeypatch):
    source = (OLD_IMPORT + PYTHON_SHAPES[shape](largest_within_bound(shape) + 1)).encode()

    def no_parser(*args, **kwargs):
        raise AssertionError("parsed")

    monkeypatch.setattr(ast, "parse", no_parser)
    with pytest.raises(SourceNotParsed, match=rf"^nested too deeply to parse safely \(about \d+ levels; "
                                              rf"at most {MAX_NESTING}\)$"):
        py_rewriter.locate(source, mappings(), "x.py")
    monkeypatch.undo()
    result = run(source, "deep.py")
    assert result.status == "skipped" and result.code == "VM203"


def test_a_file_only_libcst_could_read_is_skipped_above_the_libcst_bound():
    n = largest_within_bound("unary", MAX_NESTING_FOR_LIBCST)
    assert run(OLD_IMPORT + FOR_LIBCST + PYTHON_SHAPES["unary"](n), "ok.py").status == "changed"
    result = run(OLD_IMPORT + FOR_LIBCST + PYTHON_SHAPES["unary"](n + 1), "deep.py")
    assert result.status == "skipped", result.reason
    assert result.reason == (f"nested too deeply to parse safely with libcst, which this file needs (about "
                             f"{MAX_NESTING_FOR_LIBCST + 1} levels; at most {MAX_NESTING_FOR_LIBCST})")
    # the `ast` front-end reads the same nesting without the f-string: migrated
    assert run(OLD_IMPORT + PYTHON_SHAPES["unary"](n + 1), "ast.py").status == "changed"


# The cheap bound the rewriter asks first (`nesting_depth_over`): never below the estimate, and the same
# answer as the estimate to every comparison the guard makes. Pieces of code whose reading differs between a
# scan of the whole code and one that skips strings and comments first: string prefixes that begin a token
# or do not (`xr"a"`, `1f"a"`, `rbf"a"`), `.` before a prefix, f-strings with fields, specs and the same
# quotes nested (Python 3.12), triple quotes across lines, comments holding quotes and brackets, `#` in
# strings, continuations, `\r` and `\r\n` line ends, keywords glued to strings, `elif` chains, brackets
# that do not pair.
_PIECES = st.sampled_from([
    "a", "b.c", "1", "1.5e-3", "0xff", " ", "\n", "\r\n", "\r", "    ", "\t", "\\\n", ",", ";", ":", "=",
    "-", "+", "**", "~", "not ", " and ", " if ", " else ", "lambda: ", " in ", " is ", "elif a:", "else:",
    "(", ")", "[", "]", "{", "}", "f(", "x[", "'s'", '"s"', "'''a\n(b'''", '"""#\n"""', "r'\\d('", "rb'x'",
    "b'('", "xr'('", "1f'('", "rbf'('", "a.f'('", "1.f'{a'", "u'('", "f'{a}'", "F'{a!r:>{b}}'", "f'{a[\"k\"]}'",
    'f"{f\'{a}\'}"', "f'''{\na\n}'''", "f'{{('", "rf'\\{a}'", "f'{a:{b}{c}}'", "# (('\n", "#'\n", "'#'",
    "'a", "\"", "'''", "if a:\n    ", "\n    ", "\xe9in", "_if", "if_", "1if", ")'s'if",
])


@settings(max_examples=500, deadline=None)
@given(st.lists(_PIECES, max_size=40))
def test_the_quick_bound_is_never_below_the_estimate(pieces):
    from migrator.rewrite.python.nesting import _bound

    source = "".join(pieces).encode()
    exact, bound = nesting_depth(source), _bound(source)
    assert bound is None or bound >= exact, (source, bound, exact)


@settings(max_examples=300, deadline=None)
@given(_EXPRESSIONS, st.integers(min_value=0, max_value=4), st.sampled_from(["", "# a (\n", "s = '''\n(\n'''\n"]))
def test_the_quick_bound_is_never_below_the_estimate_of_expressions(expression, indent, before):
    from migrator.rewrite.python.nesting import _bound

    source = (before + "".join("    " * i + "if a:\n" for i in range(indent)) + "    " * indent
              + f"x = {expression}\n").encode()
    bound = _bound(source)
    assert bound is not None and bound >= nesting_depth(source)


@pytest.mark.parametrize("shape", sorted(PYTHON_SHAPES))
def test_the_guard_decides_as_the_estimate_at_every_size_around_the_bounds(shape):
    from migrator.rewrite.python.nesting import nesting_depth_over

    for bound in (MAX_NESTING_FOR_LIBCST, MAX_NESTING):
        n = largest_within_bound(shape, bound)
        for size in (1, n - 1, n, n + 1):
            source = PYTHON_SHAPES[shape](size).encode()
            exact, over = nesting_depth(source), nesting_depth_over(source, MAX_NESTING_FOR_LIBCST)
            assert [over > b for b in (MAX_NESTING_FOR_LIBCST, MAX_NESTING)] == \
                [exact > b for b in (MAX_NESTING_FOR_LIBCST, MAX_NESTING)], (shape, size)
            if exact > MAX_NESTING_FOR_LIBCST:
                assert over == exact  # the reason a skipped file gives is the estimate's


def test_ordinary_code_needs_only_the_quick_bound():
    from migrator.rewrite.python.nesting import _bound

    files = sorted(REPO.glob("migrator/**/*.py")) + sorted(REPO.glob("tests/**/*.py"))
    bounds = [_bound(path.read_bytes()) for path in files]
    assert None not in bounds
    assert sum(b > MAX_NESTING_FOR_LIBCST for b in bounds) <= len(files) // 20


@pytest.mark.parametrize("source", [
    b"x = 1.f'{a' + " + b"-" * 300 + b"a\n",  # a number's `.f`, then a plain string: the operators count
    b"x = xf'{a' + " + b"-" * 300 + b"a\n",  # a name ending in `f`, then a plain string
    b"x = rbf'{a' + " + b"-" * 300 + b"a\n",
    b"x = b'{a' + " + b"-" * 300 + b"a\n",
    b"".join(b"    " * i + b"while a:\r" for i in range(60)) + b"    " * 60 + b"x = 1\r",  # `\r` line ends
    b"".join(b"\t" * i + b"while a:\r\n" for i in range(60)) + b"\t" * 60 + b"x = 1\r\n",
    b"if a:\n    pass\n" + b"elif a:\n    pass\n" * 300,
    b"x = (a \\\n" + b" if a else a \\\n" * 300 + b")\n",
    b"x = f'{a:{b}{" + b"-" * 300 + b"c}}'\n",
    b"x = ('#' + " + b"-" * 300 + b"a)  # )\n",
])
def test_the_quick_bound_holds_where_a_shortcut_would_misread(source):
    from migrator.rewrite.python.nesting import _bound

    bound, exact = _bound(source), nesting_depth(source)
    assert exact >= 60
    assert bound is None or bound >= exact, (bound, exact)


def test_the_quick_bound_leaves_brackets_nested_past_its_rounds_to_the_estimate():
    """Pairing brackets takes a pass over them per level: past `_PAIRING_ROUNDS` levels the estimate decides."""
    from migrator.rewrite.python.nesting import _PAIRING_ROUNDS, _bound, nesting_depth_over

    deep = b"x = " + b"(" * 5000 + b"a" + b")" * 5000 + b"\n"
    assert _bound(deep) is None
    assert nesting_depth_over(deep, MAX_NESTING_FOR_LIBCST) == nesting_depth(deep) > MAX_NESTING
    within = b"x = " + b"(" * (_PAIRING_ROUNDS - 1) + b"a" + b")" * (_PAIRING_ROUNDS - 1) + b"\n"
    assert _bound(within) is not None
