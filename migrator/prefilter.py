"""Skip files that cannot need an edit: one search over the raw bytes for every old token."""

from __future__ import annotations

import re

from migrator.mapping import MappingSet


def build_prefilter(mappings: MappingSet):
    """A predicate over file bytes: True when some old token of the composed tables occurs."""
    tokens = set(mappings.old_tokens())
    # YAML nests keys and Python splits modules (`from recipe import fully_async_policy`): their last
    # component is all such a file is sure to contain.
    tokens |= {name.rsplit(".", 1)[-1] for name in mappings.old_keys() | mappings.old_modules()}
    tokens = sorted(tokens, key=len, reverse=True)
    if not tokens:
        return lambda data: False
    pattern = re.compile(b"|".join(re.escape(t.encode()) for t in tokens))
    return lambda data: pattern.search(data) is not None
