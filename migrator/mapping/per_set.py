"""`per_table_set`: a value derived from a composed table set, computed once per process for the set
in use. A run has one set (workers inherit it), so the last one is kept; it is held, not its `id()`,
which a freed set could hand to another."""

from __future__ import annotations

import functools


def per_table_set(derive):
    """Cache `derive(mappings)` for the last `mappings` it was asked about."""
    last: list[tuple] = []

    @functools.wraps(derive)
    def cached(mappings):
        if last and last[0][0] is mappings:
            return last[0][1]
        value = derive(mappings)
        last[:] = [(mappings, value)]
        return value

    return cached
