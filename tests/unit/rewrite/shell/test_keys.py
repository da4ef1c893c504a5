"""The shell rewriter's key planning: where `key=$NAME` looks for NAME's literal value."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from migrator.rewrite.shell.keys import assignments_of


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(["MODE", "MODE=", "XMODE=", "export ", "exportMODE=", "export\t", " ", "\t", "\n",
                                 "\r\n", "\r", "=", "vllm", "$MODE", "# ", "local ", "MODEL=", "MODE=MODE="]),
                max_size=30))
def test_assignments_are_the_lines_the_assignment_pattern_matches(pieces):
    """Exactly the matches of `(?m)^[ \\t]*(?:export[ \\t]+)?NAME=` (the reference, spelt out here), found
    without trying a `^` at every byte."""
    src = "".join(pieces).encode()
    expected = [(m.start(), m.end()) for m in re.finditer(rb"(?m)^[ \t]*(?:export[ \t]+)?MODE=", src)]
    assert list(assignments_of(src, b"MODE")) == expected


def test_a_name_that_begins_like_export_is_still_its_own():
    src = b"exportMODE=1\nexport exportMODE=2\n  exportMODE=3\n"
    assert [src[s:e] for s, e in assignments_of(src, b"exportMODE")] == [
        b"exportMODE=", b"export exportMODE=", b"  exportMODE="]
