"""Skip files that cannot need an edit: one search over the raw bytes for every old token."""

from __future__ import annotations

import re

from migrator.mapping import MappingSet


def build_prefilter(mappings: MappingSet):
    """A predicate over file bytes: True when some old token of the composed tables occurs."""
    tokens = sorted(mappings.old_tokens(), key=len, reverse=True)
    if not tokens:
        return lambda data: False
    pattern = re.compile(b"|".join(re.escape(t.encode()) for t in tokens))
    return lambda data: pattern.search(data) is not None
