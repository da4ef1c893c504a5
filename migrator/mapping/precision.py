"""Precision rules every composed change passes, judged against the releases' facts.

A table can be wrong, or right for verl but not for a fork; these rules keep a composed change from
breaking a file that works: a key the target release still reads is never renamed away or removed;
a subtree move carries only keys verl had under the old node (a fork's own keys stay and are
reported); a module or path move must land on something the target release ships. Each rule turns
the change into a warning or a manual step with the reason, never into an edit.
"""

from __future__ import annotations

from migrator.mapping.facts import OPEN_TYPES, ReleaseFacts

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
