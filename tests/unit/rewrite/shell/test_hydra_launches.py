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
    assert shell_text(script, start, end, at, split) == hydra_launches._read_shell_text(script, start, end, at, split)


@pytest.mark.parametrize("blank", [b" ", b"\t", b"\n"])
def test_a_plain_word_ends_at_a_blank_only_when_split(blank):
    src = b"python3 -m verl.trainer.main_ppo a.b=1" + blank + b"c.d=2"
    script = SimpleNamespace(src=src)
    start = src.index(b"a.b")
    assert shell_text(script, start, len(src), start) == ("a.b=1", start + 5)
    assert shell_text(script, start, len(src), start, split=False) == (src[start:].decode(), len(src))
