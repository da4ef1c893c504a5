"""The Python rewriter's statement fast path (`_locate_statements`) must equal the whole-file path.

`locate` parses with libcst only the top-level statements that hold an old token (and, for
`import a.b` of a moved module, every statement naming `a`); these cases pin that it gives exactly
the edits and findings of `_locate_module`, and that it declines (None) where it cannot be sure.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from migrator.edits import SourceNotParsed
from migrator.mapping import compose, load_builtin
from migrator.rewrite import python as py_rewriter
from tests.helpers import HANG_GUARD
from tests.helpers.rewrite import FIXTURES, mappings

BUCKET = "actor_rollout_ref.rollout.update_weights_bucket_megabytes"
GOLDEN = sorted((FIXTURES / "python").glob("*.in.py"))


def _whole(source: bytes, maps):
    try:
        return py_rewriter._locate_module(source, maps)
    except SourceNotParsed as exc:
        return ("not parsed", str(exc))


def _located(source: bytes, maps):
    try:
        return py_rewriter.locate(source, maps)
    except SourceNotParsed as exc:
        return ("not parsed", str(exc))


@pytest.mark.parametrize("path", GOLDEN, ids=[p.name for p in GOLDEN])
@pytest.mark.parametrize("tables", ["test", "builtin"])
def test_golden_fixtures_agree(path, tables):
    maps = mappings() if tables == "test" else compose(load_builtin())
    source = path.read_bytes()
    assert _located(source, maps) == _whole(source, maps)
    fast = py_rewriter._locate_statements(source, maps)
    assert fast is None or fast == _whole(source, maps)


def test_golden_fixtures_take_the_fast_path():
    taken = [p.name for p in GOLDEN if py_rewriter._locate_statements(p.read_bytes(), mappings()) is not None]
    assert len(taken) == len(GOLDEN), taken


FAST = {
    "function body": (
        'import os\n\nNOTE = "héllo ✓"\n\n\ndef unrelated():\n    return os.sep\n\n\n'
        f"def f(cfg):\n    x = 1  # ✓ done\n    return cfg.{BUCKET} + x\n\n\ndef g():\n    return 'ü'\n"),
    "decorator": (
        f'X = "é"\n\n\n@register("ß")\n@hydra_main(overrides=["{BUCKET}=1"])\n# between decorator and def\n'
        "def main(cfg):\n    pass\n"),
    "statements sharing a line": f'a = "✓"; b = "{BUCKET}=1"; c = 2\nd = 3\n',
    "multi-line string and f-string": (
        f'CMD = """\npython3 -m x \\\n    {BUCKET}=4\n"""\ny = f"é{{a}} {BUCKET}={{b}}"\n'),
    "import a.b with references": (
        "import os\nimport recipe.fully_async_policy\n\n\nclass A:\n    def run(self):\n"
        "        return recipe.fully_async_policy.main.go()\n\n\ndef other():\n    return os.sep\n"),
    "import a.b with a stray use": (
        "import recipe.fully_async_policy\n\n\ndef f():\n    return recipe.__path__\n"),
    "import a.b with the root kept by another import": (
        "import recipe.fully_async_policy\n\nif True:\n    import recipe\n\nrecipe.fully_async_policy.g(recipe.x)\n"),
    "shell command": f'import os\nos.system("OLD=1 python3 -m recipe.fully_async_policy.main {BUCKET}=1")\n',
    "hit only in a trailing comment": f"x = 1  # {BUCKET}\n",
}


@pytest.mark.parametrize("source", FAST.values(), ids=FAST.keys())
def test_fast_path_is_taken_and_agrees(source):
    data = source.encode()
    for maps in (mappings(), compose(load_builtin())):
        whole = _whole(data, maps)
        assert py_rewriter._locate_statements(data, maps) == whole
        assert py_rewriter.locate(data, maps) == whole
    assert _whole(data, mappings()) != py_rewriter.LocateResult((), ())


FALLBACK = {
    "comment between statements": f"import os\n\n# set {BUCKET}\nx = 1\n",
    "comment at the end of a block": f"def f():\n    pass\n    # {BUCKET}\n",
    "comment at the end of the file": f'x = "{BUCKET}=1"\n# {BUCKET}\n',
    "coding cookie": f'# -*- coding: latin-1 -*-\nx = "{BUCKET}=1"\n',
    # Python ends a line at a lone `\r` as well (old Mac line ends), the line numbers here at `\n` alone;
    # `\r\n` line ends agree with libcst (test_crlf_line_ends_agree_with_libcst).
    "lone cr": f'x = 1\ry = "{BUCKET}=1"\r\n',
    "ast rejects, libcst parses": f'f() = "{BUCKET}=1"\n',
    "not Python": f'x = = "{BUCKET}=1"\n',
}


@pytest.mark.parametrize("source", FALLBACK.values(), ids=FALLBACK.keys())
def test_fast_path_declines_when_unsure(source):
    data = source.encode("latin-1") if "latin-1" in source else source.encode()
    assert py_rewriter._locate_statements(data, mappings()) is None
    assert _located(data, mappings()) == _whole(data, mappings())


def test_bom_takes_the_whole_file_path():
    data = f'\ufeffx = "{BUCKET}=1"\nsubprocess.run(["python3", "-m", "verl.trainer.main_ppo", x])\n'.encode()
    assert py_rewriter._locate_statements(data, mappings()) is None
    assert py_rewriter.locate(data, mappings()).edits[0].start == 3 + len('x = "')


# -- the `ast` front-end (`_locate_ast`): libcst's result without libcst, or None ----------------------

@pytest.mark.parametrize("path", GOLDEN, ids=[p.name for p in GOLDEN])
@pytest.mark.parametrize("tables", ["test", "builtin"])
def test_ast_front_end_agrees_on_golden_fixtures(path, tables):
    maps = mappings() if tables == "test" else compose(load_builtin())
    source = path.read_bytes()
    fast = py_rewriter._locate_ast(source, maps)
    assert fast is None or fast == _whole(source, maps)


AST_TAKES = {name: FAST[name] for name in (
    "function body", "decorator", "statements sharing a line", "import a.b with references",
    "import a.b with the root kept by another import", "shell command", "hit only in a trailing comment")}
AST_TAKES.update({
    # Comments: a `#` outside every string token starts one; lines outside statements are comments.
    "comment between statements": FALLBACK["comment between statements"],
    "comment at the end of a block": FALLBACK["comment at the end of a block"],
    "comment at the end of the file": FALLBACK["comment at the end of the file"],
    "hash inside a string before the key": f'x = "#" + "{BUCKET}=1"  # {BUCKET}\n',
    "hash inside a docstring line": f'def f():\n    """\n    # {BUCKET}=1\n    """\n',
    "root named in a comment": "import recipe.fully_async_policy  # recipe\nrecipe.fully_async_policy.go()\n",
    "shebang and header comment": f"#!/usr/bin/env python3\n# {BUCKET}\nimport os\n",
    "indented comment line after a bracket": f"x = [\n    1,\n]\n  # {BUCKET}\ny = 2\n",
    # A token glued to more name characters inside an f-string is no name any rewrite edits there.
    "glued token in an f-string": f'x = "{BUCKET}=1"\ny = f"{BUCKET}_note={{b}}"\n',
    "glued token in joined strings": f'x = "{BUCKET}=1"\ny = ("a"\n     "{BUCKET}2")\n',
    # An f-string's literal parts are libcst's FormattedStringText, found from its bytes (`fstring_parts`).
    "f-string": f'y = f"{BUCKET}={{b}}"\n',
    "f-string with fields, a spec, a conversion and doubled braces": (
        f'y = f"{{{{x}}}} {{a!r:>10}} {BUCKET}={{b}}{{c[1:2]}} -{{d = }}"\n'),
    "raw f-string and a named escape": f'y = rf"\\{{x}} {BUCKET}=1"\nz = f"\\N{{EM DASH}} +{BUCKET}=2"\n',
    # A field that is one name or attribute chain tells the locator what libcst's visit of it does.
    "old key as an attribute chain in an f-string's field": (
        f'import os\ny = f"{{cfg.{BUCKET}!r:>4}} {{ rollout_is = }} {BUCKET}=1"\n'),
    # Implicitly joined strings: each piece as libcst's SimpleString or FormattedString.
    "implicitly joined strings": f'x = ("a"\n     "{BUCKET}=1")\n',
    "joined strings with a comment, an f-string and a name after a piece": (
        f'x = ("{BUCKET}=1 "  # {BUCKET}\n     f"{{a}} +{BUCKET}=2" "{BUCKET}"\n     "" "_x")\n'),
    "joined strings, bytes and a raw piece": f'x = (b"{BUCKET}=1" rb"\\{BUCKET}")\ny = "a" \\\n    "b"\n',
    "triple-quoted f-string": f'y = f"""\n{{a}}\n  {BUCKET}=1 \\\n"""\n',
})


@pytest.mark.parametrize("source", AST_TAKES.values(), ids=AST_TAKES.keys())
def test_ast_front_end_is_taken_and_agrees(source):
    data = source.encode()
    for maps in (mappings(), compose(load_builtin())):
        fast = py_rewriter._locate_ast(data, maps)
        assert fast is not None
        assert fast == _whole(data, maps)


AST_DECLINES = {
    # libcst sees these and `ast` does not (or not at exact positions): libcst must decide.
    "old token in an f-string's replacement field": f'y = f"{{f(cfg.{BUCKET})}} {BUCKET}=1"\n',
    "f-string with a string in a field": f'y = f"{{d[\'k\']}} {BUCKET}=1"\n',
    "f-string with a field in its format spec": f'y = f"{{a:>{{w}}}} {BUCKET}=1"\n',
    "joined strings with a string in an f-string's field": f'x = ("a"\n     f"{{d[\'k\']}} {BUCKET}=1")\n',
    "chain with a line break": f'x = (cfg.actor_rollout_ref\n     .rollout.update_weights_bucket_megabytes, "{BUCKET}=1")\n',
    "root bound by a def": "import recipe.fully_async_policy\n\n\ndef recipe():\n    pass\n",
    "root as a keyword argument": "import recipe.fully_async_policy\nf(recipe=1)\n",
    "root as an attribute of a call": "import recipe.fully_async_policy\nx = g().recipe\n",
    "from-import over a line break": "from \\\n    recipe.fully_async_policy import main\n",
}


@pytest.mark.parametrize("source", AST_DECLINES.values(), ids=AST_DECLINES.keys())
def test_ast_front_end_declines_where_libcst_sees_more(source):
    data = source.encode()
    assert py_rewriter._locate_ast(data, mappings()) is None
    assert _located(data, mappings()) == _whole(data, mappings())


def test_comment_cases_have_work():
    for name in ("hit only in a trailing comment", "comment between statements", "comment at the end of a block",
                 "hash inside a string before the key", "hash inside a docstring line", "shebang and header comment"):
        assert _whole(AST_TAKES[name].encode(), mappings()) != py_rewriter.LocateResult((), ()), name


def test_whole_result_of_a_declined_case_is_not_empty():
    # The declines above matter: libcst finds work in them (the test would pass vacuously otherwise).
    for name in ("old token in an f-string's replacement field", "f-string with a string in a field",
                 "joined strings with a string in an f-string's field", "chain with a line break",
                 "root bound by a def"):
        assert _whole(AST_DECLINES[name].encode(), mappings()) != py_rewriter.LocateResult((), ()), name


def test_ast_front_end_does_not_import_libcst():
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from migrator.mapping import compose, load_builtin\n"
        "from migrator.rewrite import python\n"
        "maps = compose(load_builtin())\n"
        f"result = python.locate({FAST['import a.b with references']!r}.encode(), maps)\n"
        "assert result.edits, result\n"
        "print('libcst' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=HANG_GUARD)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


CRLF_CASES = {**{f"golden {p.name}": p.read_text() for p in GOLDEN}, **FAST, **AST_TAKES, **AST_DECLINES}


@pytest.mark.parametrize("source", CRLF_CASES.values(), ids=CRLF_CASES.keys())
def test_crlf_line_ends_agree_with_libcst(source):
    """`\\r\\n` line ends (a file saved on Windows) take the statement and `ast` paths too: each gives
    exactly libcst's whole-file result, or declines."""
    data = source.replace("\n", "\r\n").encode()
    for maps in (mappings(), compose(load_builtin())):
        whole = _whole(data, maps)
        assert _located(data, maps) == whole
        for front_end in (py_rewriter._locate_ast, py_rewriter._locate_statements):
            fast = front_end(data, maps)
            assert fast is None or fast == whole


def test_crlf_files_take_the_ast_path_a_lone_cr_does_not():
    data = AST_TAKES["function body"].replace("\n", "\r\n").encode()
    assert py_rewriter._locate_ast(data, mappings()) not in (None, py_rewriter.LocateResult((), ()))
    lone = AST_TAKES["function body"].replace("\n", "\r\n", 1).replace("\n", "\r").encode()
    assert py_rewriter._locate_ast(lone, mappings()) is None  # old Mac line ends: Python's lines, not ours


def test_strings_without_an_old_token_skip_the_text_scan_and_the_result_is_libcsts(monkeypatch):
    """A launcher's list of override strings: only the strings holding an old token of Python text go
    through the text scan; the result is libcst's, which scans every string."""
    from migrator.rewrite import literal

    source = ("import subprocess\nARGS = [\n" + '    "trainer.n_gpus_per_node=8",\n' * 40
              + f'    "{BUCKET}=4",\n    "verl.utils.npu_utils",\n' + '    "data.train_batch_size=8",\n' * 40
              + ']\nsubprocess.run(["python3", "-m", "verl.trainer.main_ppo", *ARGS])\n').encode()
    scanned = []
    real = literal.text_edits
    monkeypatch.setattr(literal, "text_edits", lambda src, start, end, *a, **k: (
        scanned.append(src[start:end]), real(src, start, end, *a, **k))[1])
    maps = mappings()
    fast = py_rewriter._locate_ast(source, maps)
    assert sorted(scanned) == sorted([f"{BUCKET}=4".encode(), b"verl.utils.npu_utils"])
    assert fast == _whole(source, maps) and {e.kind for e in fast.edits} >= {"key-rename"}


_BUILTIN_FROM_050 = compose(load_builtin(), "v0.5.0")
_STRING_TEXTS = st.sampled_from([
    "trainer.nnodes=1", "actor_rollout_ref.actor.grad_clip=1.0", "+actor_rollout_ref.actor.grad_clip=1",
    "recipe.dapo", "recipe.dapo.main_dapo", "-m recipe.dapo.main_dapo",
    "verl.single_controller.base.megatron.worker:MegatronWorker", "verl.trainer.config.config.CriticConfig",
    "examples/grpo_trainer/run_qwen3-236b_megatron.sh", "bash examples/grpo_trainer/run_qwen3-236b_megatron.sh",
    "${actor_rollout_ref.actor.grad_clip}", "actor_rollout_ref.rollout.name=sglang", "actor_rollout_ref.actor.grad_clip",
    "VLLM_ATTENTION_BACKEND=XFORMERS", "data.train_batch_size=8 actor_rollout_ref.actor.grad_clip=2", "plain words",
])


@settings(max_examples=40, deadline=None)
@given(st.lists(_STRING_TEXTS, min_size=1, max_size=6))
def test_a_launchers_strings_get_libcsts_result_whichever_skip_the_text_scan(texts):
    """Strings of old keys, modules, symbols, paths, interpolations and values among token-less ones, with the
    built-in tables: the `ast` front-end, which skips the text scan of strings holding no old token, gives
    libcst's result (which scans them all), or declines."""
    source = ("import subprocess\nARGS = [\n" + "".join(f'    "{t}",\n' for t in texts)
              + ']\nsubprocess.run(["python3", "-m", "verl.trainer.main_ppo", *ARGS])\n').encode()
    fast = py_rewriter._locate_ast(source, _BUILTIN_FROM_050)
    assert fast is None or fast == _whole(source, _BUILTIN_FROM_050)
