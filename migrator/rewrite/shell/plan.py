"""One script's plan: its bytes, the composed mappings, and the edits and findings every planner adds to.

The planners (`removals`, `launches`, `keys`, `moves`, `variables`, `defaults`) each keep their own state
and are handed this plan, and the collaborators they need, by the walker (`locator`)."""

from __future__ import annotations

import bisect
import re

from migrator.edits import Edit, Finding
from migrator.mapping import MappingSet


class ScriptPlan:
    def __init__(self, source: bytes, mappings: MappingSet):
        self.src = source
        self.maps = mappings
        self.edits: list[Edit] = []  # in the order the planners found them
        self.findings: list[Finding] = []
        self._line_starts: list[int] | None = None

    def line_of(self, offset: int) -> int:
        """1-based line of a byte offset, from one index of line starts (no rescan per call)."""
        if self._line_starts is None:
            self._line_starts = [0] + [m.end() for m in re.finditer(rb"\n", self.src)]
        return bisect.bisect_right(self._line_starts, offset)
