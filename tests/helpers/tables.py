"""Small user tables the tests write into `tmp_path`."""

from __future__ import annotations

import textwrap

# A rename that is a manual step in a file the `manual-when` condition matches (an Ascend script), and
# one that is not.
HELD_ON_ASCEND = textwrap.dedent("""
    entries:
      - kind: key-rename
        old: a.b
        new: a.c
        manual-when: {file-matches: ['\\bASCEND_[A-Z_]+']}
        hint: on Ascend set a.npu instead
        pr: 1
      - kind: key-rename
        old: x.y
        new: x.z
        pr: 2
""")


def held_on_ascend_table(tmp_path):
    """HELD_ON_ASCEND as a user's table file (applied after --to)."""
    path = tmp_path / "user.yaml"
    path.write_text(HELD_ON_ASCEND, encoding="utf-8")
    return path
