"""A migrated Python file is not compiled again when its edits provably keep the compiler's verdict:
dotted-name renames with the same first name. Checked against the compiler itself."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from migrator.edits import Edit
from migrator.fileprocess import process_file
from migrator.rewrite.python import validate
from migrator.rewrite.python.validity import edits_keep_validity


def _edit(source: bytes, old: bytes, new: bytes, nth: int = 0) -> Edit:
    at = -1
    for _ in range(nth + 1):
        at = source.index(old, at + 1)
    return Edit(at, at + len(old), new, "module-move", "moved")


def _apply(source: bytes, edits) -> bytes:
    for edit in sorted(edits, key=lambda e: e.start, reverse=True):
        source = source[:edit.start] + edit.replacement + source[edit.end:]
    return source


def _compiles(source: bytes) -> bool:
    try:
        compile(source, "<t>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return False
    return True


@pytest.mark.parametrize("source, old, new", [
    (b"from verl.a.b import x\n", b"verl.a.b", b"verl.c"),
    (b"import verl.a.b\nverl.a.b.run()\n", b"verl.a.b", b"verl.x.y.z"),
    (b"import verl.a.b as m\n", b"verl.a.b", b"verl.q"),
    (b"s = 'verl.a.b'  # verl.a.b\n", b"verl.a.b", b"verl.c.d"),
    (b"f'{verl.a.b}'\n", b"verl.a.b", b"verl.c"),
    (b"match x:\n    case verl.a.b:\n        pass\n    case _:\n        pass\n", b"verl.a.b", b"verl.c"),
    (b"from .verl.a import x\n", b"verl.a", b"verl.b.c"),
])
def test_a_dotted_rename_with_the_same_first_name_keeps_validity(source, old, new):
    edit = _edit(source, old, new)
    assert edits_keep_validity(source, [edit])
    assert _compiles(source) and _compiles(_apply(source, [edit]))


@pytest.mark.parametrize("source, old, new, why", [
    (b"import verl.a\n", b"verl.a", b"recipe.a", "the import would bind another name"),
    (b"import verl.a\n", b"verl.a", b"verl", "no dot: a value pattern would turn into a capture"),
    (b"from x.y import z\n", b"x.y", b"x.class", "a keyword"),
    (b"from __future__.x import y\n", b"__future__.x", b"__future__.y", "__future__ is the compiler's"),
    (b"import verl.ab\n", b"verl.a", b"verl.c", "the name goes on past the edit"),
    (b"s = 'verl.a'\n", b"verl.a", b"verl.a'b", "not a dotted name"),
])
def test_anything_else_is_compiled(source, old, new, why):
    edit = _edit(source, old, new)
    assert not edits_keep_validity(source, [edit]), why


@pytest.mark.parametrize("source, old, new", [
    # `case verl:` captures everything: the case after it can never match, which the compiler refuses
    (b"match v:\n    case verl.a:\n        pass\n    case 1:\n        pass\n", b"verl.a", b"verl"),
    # the import binds `a`, no longer the `verl` an inner function's `nonlocal` needs
    (b"def outer():\n    import verl.x\n    def inner():\n        nonlocal verl\n", b"verl.x", b"a.x"),
])
def test_the_refusals_are_real_the_compiler_would_disagree(source, old, new):
    edit = _edit(source, old, new)
    assert not edits_keep_validity(source, [edit])
    assert _compiles(source) and not _compiles(_apply(source, [edit]))


def test_edits_that_overlap_are_compiled():
    source = b"x = a.b.c.d\n"
    first, second = Edit(4, 9, b"a.q", "module-move", "m"), Edit(6, 11, b"b.r.s", "module-move", "m")
    assert edits_keep_validity(source, [first]) and edits_keep_validity(source, [second])
    assert not edits_keep_validity(source, [first, second])
    assert not edits_keep_validity(source, [])


def test_a_file_that_parses_but_does_not_compile_stays_as_broken():
    # `return` outside a function parses; the compiler refuses it before and after the edit alike.
    source = b"from verl.a.b import x\nreturn x\n"
    edit = _edit(source, b"verl.a.b", b"verl.c")
    assert edits_keep_validity(source, [edit])
    assert not _compiles(source) and not _compiles(_apply(source, [edit]))


_NAMES = st.sampled_from(["verl", "a", "b", "utils", "match", "case", "_", "x1", "type"])
_FIRST = st.sampled_from(["verl", "a"])  # few first names: a rename that binds another one is often tried
_DOTTED = st.tuples(_FIRST, st.lists(_NAMES, min_size=1, max_size=3)).map(lambda t: ".".join([t[0], *t[1]]))
_CONTEXT = st.sampled_from([
    "import {d}\n", "import {d} as alias\n", "from {d} import name\n", "from .{d} import name\n",
    "value = {d}\n", "value = {d}()\n", "@{d}\ndef f(): pass\n", "try:\n    pass\nexcept {d}:\n    pass\n",
    "s = '{d}'\n", "s = b'{d}'\n", "s = f'{{{d}}}'\n", "s = f'x{d}y'\n", "# {d}\n", "def f():\n    return {d}\n",
    "match v:\n    case {d}:\n        pass\n", "class C({d}):\n    pass\n", "x: {d} = 1\n", "del {d}\n",
    "{d} = 1\n", "for {d} in []:\n    pass\n", "nonlocal_ = {d}\n", "lambda: {d}\n",
    "match v:\n    case {d}:\n        pass\n    case 1:\n        pass\n",  # a bare name would capture all
    "def outer():\n    import {d}\n    def inner():\n        nonlocal verl\n",  # needs `verl` bound above
])


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(_CONTEXT, _DOTTED), min_size=1, max_size=4), st.data())
def test_the_proof_never_disagrees_with_the_compiler(lines, data):
    source = "".join(context.format(d=dotted) for context, dotted in lines).encode()
    edits, cursor = [], 0
    for _, dotted in lines:
        at = source.find(dotted.encode(), cursor)
        if at < 0:
            continue
        # the same first name and more parts (what the proof accepts), or anything it must refuse
        tail = data.draw(st.lists(_NAMES, min_size=1, max_size=3))
        first = dotted.split(".")[0]
        other = "a" if first == "verl" else "verl"
        new = data.draw(st.sampled_from([".".join([first, *tail]), ".".join([other, *tail]), first, tail[0],
                                         f"{first}.class"])).encode()
        edits.append(Edit(at, at + len(dotted), new, "module-move", "moved"))
        cursor = at + len(dotted) + 1
    if edits_keep_validity(source, edits):
        assert _compiles(source) == _compiles(_apply(source, edits)), (source, _apply(source, edits))


def test_the_engine_skips_the_compile_only_under_the_proof(monkeypatch, tmp_path):
    from migrator.mapping import compose, load_builtin
    from migrator.rewrite import python as python_rewriter

    compiled = []
    real = python_rewriter.validate
    monkeypatch.setattr(python_rewriter, "validate", lambda b, a, mappings=None: compiled.append(a) or real(b, a))
    maps = compose(load_builtin(), "v0.4.0", "v0.9.0")
    moved = b"import verl.utils.vllm_utils\nverl.utils.vllm_utils.patch()\n"  # verl.utils.vllm.utils (#2782)
    result = process_file("m.py", "m.py", maps, data=moved)
    assert result.status == "changed" and b"verl.utils.vllm.utils" in result.after and compiled == []
    assert validate(moved, result.after) is None
    # a name renamed on its own (a symbol, a keyword argument) is compiled as before: `f(new=1, new=2)`
    call = b"f(old=1, new=2)\n"
    rename = _edit(call, b"old", b"new")
    assert not python_rewriter.edits_keep_validity(call, [rename])
    assert _compiles(call) and not _compiles(_apply(call, [rename]))


def _parsed(source: bytes) -> bytes:
    from migrator.rewrite.python.parsed import parse

    parse(source)  # the proof reads the tree the rewriter parsed
    return source


@pytest.mark.parametrize("source, old, new", [
    (b'ARGS = ["ray_init.num_cpus=4", "x"]\n', b"ray_init.num_cpus", b"ray_kwargs.ray_init.num_cpus"),
    (b"def f():\n    return r'trainer.a=1'\n", b"trainer.a", b"global_profiler.b"),
    (b'CMD = """\npython -m x data.a=1\n"""\n', b"data.a", b"data_b"),
])
def test_a_rename_inside_one_plain_string_keeps_validity(source, old, new):
    edit = _edit(_parsed(source), old, new)
    assert edits_keep_validity(source, [edit])
    assert _compiles(_apply(source, [edit]))


@pytest.mark.parametrize("source, old, new, why", [
    (b'x = f"data.a={y}"\n', b"data.a", b"b", "an f-string's text is parsed"),
    (b'x = b"data.a"\n', b"data.a", b"b\xc3\xa9", "bytes take ASCII only"),
    (b'x = ("q" "data.a")\n', b"data.a", b"b", "joined strings: not one token"),
    (b'x = "data.a"\n', b"data.a", b'b"', "a quote would end the string"),
    (b'x = "\\data.a"\n', b"data.a", b"xb", "the backslash would escape the new text"),
    (b'x = "data.a"\n', b"data.a", b"b{", "a brace"),
    (b"x = 1  # data.a\n", b"data.a", b"b", "a comment: the dotted rule only"),
])
def test_a_string_edit_the_proof_cannot_cover_is_compiled(source, old, new, why):
    assert not edits_keep_validity(_parsed(source), [_edit(source, old, new)]), why


def test_without_the_rewriters_tree_a_string_edit_is_compiled():
    source = b'ARGS = ["ray_init.num_cpus=4"]\n'
    _parsed(b"other = 1\n")
    assert not edits_keep_validity(source, [_edit(source, b"ray_init.num_cpus", b"ray_kwargs.x")])


_STRINGS = st.sampled_from(["'{t}'", '"{t}"', "r'{t}'", "u'{t}'", "'''{t}'''", '"""x\n{t}\n"""', "f'{t}'",
                            "b'{t}'", "'a' '{t}'", "'\\\\{t}'", "'\\{t}'", "'{t}\\\\'"])
_TEXT = st.text(alphabet="ab.=_{}\\'\"\n\x00é", min_size=0, max_size=6)


@settings(max_examples=400, deadline=None)
@given(_STRINGS, _TEXT, st.sampled_from(["x = {s}\n", "def f():\n    return [{s}, 1]\n", "f({s})\n"]))
def test_the_string_proof_never_disagrees_with_the_compiler(shape, new, context):
    source = context.format(s=shape.format(t="data.a=1")).encode()
    try:
        _parsed(source)
    except (SyntaxError, ValueError):
        return
    edit = _edit(source, b"data.a", new.encode())
    if edits_keep_validity(source, [edit]):
        assert _compiles(source) == _compiles(_apply(source, [edit])), (source, _apply(source, [edit]))
