"""`ast_front.fstring_parts` must split an f-string token exactly as libcst does, or decline.

The `ast` front-end hands the literal parts it finds to the locator as libcst's FormattedStringText
spans; a part off by one byte would move an edit. Generated tokens (every piece libcst and the f-string
grammar treat specially: doubled braces, escapes, named escapes, conversions, specs, slices, nested
strings and spec fields) are compared with libcst's parts.
"""

from __future__ import annotations

import warnings

import libcst as cst
from hypothesis import given, settings
from hypothesis import strategies as st

from migrator.rewrite.python.ast_front import fstring_parts

PIECES = ["a", " ", "key.b=1", "{{", "}}", "{x}", "{x!r}", "{x:>10}", "{a[1:2]}", "{d = }", "{x:{w}}",
          "{d['k']}", '{d["k"]}', "\\N{EM DASH}", "\\{x}", "\\\\", "\\n", "{(y:=1)}", "{f(a, b)}", "é", "\n"]


def _libcst_parts(token: str) -> list[tuple[bool, str | None]]:
    expression = cst.parse_expression(token)
    return [(True, p.value) if isinstance(p, cst.FormattedStringText) else (False, None) for p in expression.parts]


def _compiles(token: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(token, "<token>", "eval")
    except (SyntaxError, ValueError):
        return False
    return True


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(["f", "F", "rf", "fR"]), st.sampled_from(['"', "'", '"""', "'''"]),
       st.lists(st.sampled_from(PIECES), max_size=8))
def test_parts_are_libcsts(prefix, quote, pieces):
    body = "".join(pieces)
    token = f"{prefix}{quote}{body}{quote}"
    if not _compiles(token):
        return
    parts = fstring_parts(token.encode())
    if parts is None:
        return
    data = token.encode()
    mine = [(True, data[start:end].decode()) if is_text else (False, None) for is_text, start, end in parts]
    assert mine == _libcst_parts(token)


def test_the_common_shapes_are_read_not_declined():
    for token in ('f"{x} key.b=1"', "f'{x!r:>10} {{a}} {y[1:2]}'", 'rf"\\{x}"', 'f"\\N{EM DASH}{x}"', 'f"""\n{a}\n"""'):
        parts = fstring_parts(token.encode())
        assert parts is not None, token
        mine = [(True, token.encode()[s:e].decode()) if t else (False, None) for t, s, e in parts]
        assert mine == _libcst_parts(token), token


def test_fields_libcst_reads_differently_are_declined():
    for token in ("f\"{d['k']}\"", 'f"{x:{w}}"', 'f"{ {1: 2}[1] }"'):
        assert fstring_parts(token.encode()) is None, token
