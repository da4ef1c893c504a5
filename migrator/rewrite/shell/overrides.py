"""Read-only views for other tools (lint): what the rewriter would judge, without planning edits."""

from __future__ import annotations

from migrator.mapping import MappingSet
from migrator.rewrite.shell.locator import ScriptWalker
from migrator.rewrite.shell.plan import ScriptPlan
from migrator.rewrite.shell.syntax import parse


def override_occurrences(source: bytes, tree=None) -> list[tuple[str, str, int, int]]:
    """Every Hydra override the rewriter would judge, as (prefix, key, start, end) byte spans of the key.

    The same traversal as `locate` (arguments, array elements, words inside strings, not comments),
    so the lint and the rewriter agree on what an override is.
    """
    recorder = OverrideRecorder(source)
    root = (tree or parse(source)).root_node
    ScriptWalker(ScriptPlan(source, MappingSet("", "", ())), root, keys=recorder, read_comments=False,
                 plan_defaults=False).walk()
    return recorder.found


class OverrideRecorder:
    """Stands in for `KeyEdits`: records each key occurrence the walker meets."""

    def __init__(self, source: bytes):
        self.src = source
        self.found: list[tuple[str, str, int, int]] = []

    def key_occurrence(self, key: str, start: int, end: int, container, limit: int | None = None,
                       reads: bool | bytes = True) -> None:
        prefix = "++" if self.src[max(0, start - 2):start] == b"++" else \
            self.src[start - 1:start].decode("latin-1") if start and self.src[start - 1:start] in (b"+", b"~") else ""
        self.found.append((prefix, key, start, end))

    def plan_renames(self, read: set[bytes]) -> None:
        """Nothing to plan: every occurrence is recorded as it is met."""
