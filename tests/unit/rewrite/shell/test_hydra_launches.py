"""What bash makes of a launch's words (`hydra_launches.shell_text`): a word with no quote, escape,
expansion or tilde takes a shortcut, which must give exactly what reading it byte by byte gives, for
every word."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from migrator.rewrite.shell import hydra_launches
from migrator.rewrite.shell.hydra_launches import shell_text

# Pieces of overrides and blanks, and of what makes bash read a word differently: quotes, escapes,
# expansions, a tilde after `=` or `:` (bash's tilde expansion).
PIECES = ["a", "b_c", ".", "=", ",", "[", "]", "{", "}", ":", "0", "/", "-", "#", " ", "\t", "\n", "\r",
          "'", '"', "\\", "\\\n", "$a", "${a}", "$(x y)", "`x`", "$@", "~", "=~", ":~"]


@st.composite
def words(draw):
    """(source, start, at, end): a word src[start:end] with `at` inside it."""
    src = b"x " + "".join(draw(st.lists(st.sampled_from(PIECES), min_size=1, max_size=20))).encode() + b" y"
    start, at, end = sorted(draw(st.integers(2, len(src) - 2)) for _ in range(3))
    return src, start, at, end


@settings(max_examples=400, deadline=None)
@given(word=words(), split=st.booleans())
def test_the_shortcut_reads_as_the_byte_by_byte_reading(word, split):
    src, start, at, end = word
    script = SimpleNamespace(src=src, literal_values={"a": "1"})
    assert shell_text(script, start, end, at, split) == byte_by_byte(script, start, end, at, split)
    assert hydra_launches._read_shell_text(script, start, end, at, split) == byte_by_byte(script, start, end, at, split)


def byte_by_byte(script, start: int, end: int, at: int, split: bool) -> tuple[str, int]:
    """What bash makes of the word, read one byte at a time: the reading the runs of `_read_shell_text` must match."""
    src, i, quote, out = script.src, start, "", bytearray()
    start_quote = None
    while i < end:
        if i >= at and start_quote is None:
            start_quote = quote
        c = src[i:i + 1]
        keep = out if i >= at else bytearray()  # before `at`: only the quoting state matters
        if split and start_quote is not None and c in (b" ", b"\t", b"\n") and quote == start_quote:
            end = i
            break
        if quote == "'" or (c == b"'" and not quote):
            if c == b"'":
                quote = "" if quote else "'"
            else:
                keep += c
            i += 1
        elif c == b'"':
            quote, i = ("" if quote == '"' else '"'), i + 1
        elif c == b"\\" and i + 1 < end and (not quote or src[i + 1:i + 2] in b'$`"\\\n'):
            keep += b"" if src[i + 1:i + 2] == b"\n" else src[i + 1:i + 2]
            i += 2
        elif c in (b"$", b"`"):
            i, value = hydra_launches._expansion(script, i, end)
            keep += value.encode("utf-8")
        elif c == b"~" and not quote and src[i - 1:i] in (b"=", b":") and i - 1 >= at:
            keep += hydra_launches.PLACEHOLDER.encode()  # bash expands `key=~/x` to $HOME/x (tilde after `=` or `:`)
            i += 1
        else:
            keep += c
            i += 1
    return out.decode("utf-8", "replace"), end



@pytest.mark.parametrize("blank", [b" ", b"\t", b"\n"])
def test_a_plain_word_ends_at_a_blank_only_when_split(blank):
    src = b"python3 -m verl.trainer.main_ppo a.b=1" + blank + b"c.d=2"
    script = SimpleNamespace(src=src)
    start = src.index(b"a.b")
    assert shell_text(script, start, len(src), start) == ("a.b=1", start + 5)
    assert shell_text(script, start, len(src), start, split=False) == (src[start:].decode(), len(src))
