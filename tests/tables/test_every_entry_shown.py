"""`mappings show` has a row for every entry of the built-in tables, over every range from the baseline
and every single release (an entry whose name an earlier entry already decides is shown too)."""

from __future__ import annotations

import pytest

from migrator.cli.mappings import shown_rows
from migrator.mapping import compose, load_builtin

TABLES = load_builtin()
RANGES = [(None, r) for r in TABLES.releases[1:]] + list(zip(TABLES.releases, TABLES.releases[1:]))


@pytest.mark.parametrize("from_release, to_release", RANGES, ids=[f"{a}-{b}" for a, b in RANGES])
def test_every_entry_has_a_row(from_release, to_release):
    mappings = compose(TABLES, from_release, to_release)
    cited = {id(e) for row in shown_rows(mappings) for e in row.entries}
    missing = [e.describe() for e in mappings.entries() if id(e) not in cited]
    assert missing == []
