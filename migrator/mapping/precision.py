"""Precision rules every composed change passes, judged against the releases' facts.

A table can be wrong, or right for verl but not for a fork; these rules keep a composed change from
breaking a file that works: a key the target release still reads is never renamed away or removed;
a subtree move carries only keys verl had under the old node (a fork's own keys stay and are
reported); a module or path move must land on something the target release ships. Each rule turns
the change into a warning or a manual step with the reason, never into an edit.
"""

from __future__ import annotations

from migrator.mapping.changes import KeyChange
from migrator.mapping.facts import OPEN_TYPES, ReleaseFacts
from migrator.mapping.kind import Entry, Role

# The component the YAML rewriter appends to ask "does this whole subtree move?" (literal.key_target).
SUBTREE_PROBE = "__verl_migrate_probe__"


def still_read(facts: ReleaseFacts, key: str, release: str) -> bool:
    """Does `release` still have `key` in its config (so a script setting it works as it is)?"""
    return key in facts.keys(release)


def known_in_some_release(facts: ReleaseFacts, key: str, releases) -> bool:
    """Was `key` (or an open node holding it: `{}`/null defaults take any sub-key) in some release?"""
    parts = key.split(".")
    for release in releases:
        types = facts.key_types(release)
        if key in facts.nodes(release):
            return True
        for n in range(len(parts) - 1, 0, -1):
            if types.get(".".join(parts[:n])) in OPEN_TYPES:
                return True
    return False


def module_lands(facts: ReleaseFacts, module: str, release: str, order) -> bool:
    return not facts.has_modules or facts.module_exists(module, release, order)


def path_lands(facts: ReleaseFacts, path: str, release: str) -> bool:
    paths = facts.paths(release)
    if not paths:
        return True  # no tree facts for this release: nothing to judge by
    if path.endswith("/"):
        return any(p.startswith(path) for p in paths)
    return path in paths


class PrecisionRules:
    """The rules over the releases' facts of a table set (`history`), for a run to `to_release`."""

    def __init__(self, history, to_release: str):
        self.history = history
        self.to_release = to_release

    @property
    def facts(self) -> ReleaseFacts | None:
        history = self.history
        return history.facts if history is not None and self.to_release in history.releases else None

    def all_indexed(self, entries) -> bool:
        """Do the entries all come from the release index's own tables (not a user's `--table`)?"""
        if self.history is None:
            return False
        # Computed each time: ids must not outlive the process (a composed set is pickled by tablecache).
        indexed = {id(e) for t in self.history.tables.values() for e in t.entries}
        return all(id(e) in indexed for e in entries)

    def facts_for(self, entries) -> ReleaseFacts | None:
        """The facts to judge a change by, when the built-in tables made it (a user's table may name their own)."""
        return self.facts if self.all_indexed(entries) else None

    def fork_key_in_subtree(self, key: str, entry: Entry) -> KeyChange | None:
        """A subtree entry meets a key verl never had under that node: it stays, reported. Only for the
        built-in tables' subtrees (generated key shims mirror composition without facts)."""
        builtin = entry.origin.file.startswith("mappings/verl/") and self.all_indexed((entry,))
        facts = self.facts if builtin else None
        # Probes (`x.__verl_migrate_probe__`, release notes' `x.__subtree__`) ask about the node as a whole.
        if facts is None or not getattr(entry, "is_subtree", False) or key.rpartition(".")[2].startswith("__"):
            return None
        node = entry.old[:-2]
        if key == node or known_in_some_release(facts, key, self.history.releases):
            return None
        verb = "moved" if entry.unit.role is Role.MOVE else "removed"
        return KeyChange(key, None, "warn", "it is your own key: move or keep it where your code reads it",
                         (entry,), note=f"not moved: no verl release has it under {node}, which verl {verb}")

    def still_read(self, key: str, change: KeyChange | None) -> KeyChange | None:
        """A release table's removal or rename of a key the target release still has becomes a warning,
        unless it renamed the key knowingly in a release that still shipped it (a deprecated alias)."""
        facts = self.facts
        if facts is None or change is None or change.action == "warn" or not still_read(facts, key, self.to_release):
            return change
        if not all(e.origin.release for e in change.entries):
            return change  # a table of the user's own that applies after the target: their call
        if change.action == "rename" and all(e.origin.release and still_read(facts, key, e.origin.release)
                                             for e in change.entries):
            return change
        what = "removal" if change.new is None else f"rename to {change.new}"
        return KeyChange(key, None, "warn", "check that the override still does what you mean", change.entries,
                         note=f"verl {self.to_release} still has it, so the table's {what} is not applied")
