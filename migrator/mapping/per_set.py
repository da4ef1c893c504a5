"""`per_table_set`: a value derived from a composed table set, computed once per process for the set
in use and each state of its views. A run has one set (workers inherit it), so the last one is kept; it
is held, not its `id()`, which a freed set could hand to another."""

from __future__ import annotations

import functools


def per_table_set(derive):
    """Cache `derive(mappings)` for the last set it was asked about, one value per view state of it
    (`MappingSet.view_state`: a file's manual steps, ...), so the views made per file share them."""
    last: list = []  # [set, {view state: value}]

    @functools.wraps(derive)
    def cached(mappings):
        viewed = getattr(mappings, "viewed", mappings)
        if not last or last[0] is not viewed:
            last[:] = [viewed, {}]
        values = last[1]
        state = getattr(mappings, "view_state", ())
        try:
            return values[state]
        except KeyError:
            value = values[state] = derive(mappings)
            return value

    return cached
