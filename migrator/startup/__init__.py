"""verl's own start-up checks (checks.py, over the condition language of expr.py) on a launch's effective
config, and verl's component registries and accepted-but-ignored keys (components.py).

    table = load_checks()
    outcomes = judge(table, effective_config(configs, "verl/trainer/config", "ppo_trainer", overrides))
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from migrator.startup.checks import Check, ChecksError, Outcome, StartupChecks, evaluate, first_stop, load_checks
from migrator.startup.expr import ABSENT, UNKNOWN

__all__ = ["ABSENT", "UNKNOWN", "Check", "ChecksError", "Outcome", "StartupChecks", "config_lookup", "evaluate",
           "first_stop", "judge", "load_checks"]


def config_lookup(effective, unknown_keys: Iterable[str] = ()) -> Callable[[str], object]:
    """`lookup(key)` over an EffectiveConfig: ABSENT where the release has no such key, UNKNOWN where the
    shell decides the value (or a key above it), where an interpolation cannot be followed, where it is
    `???`, or for `unknown_keys` (set in branches that never run together)."""
    from migrator.verdict import NEUTRAL_VALUE
    from migrator.verdict.effective import MISSING
    from migrator.verdict.effective import UNKNOWN as UNRESOLVED

    undecided = set(effective.symbolic) | set(unknown_keys)

    def lookup(key: str) -> object:
        if key not in effective.leaves:
            return ABSENT
        parts = key.split(".")
        if any(".".join(parts[:n]) in undecided for n in range(1, len(parts) + 1)):
            return UNKNOWN
        raw = effective.leaves[key]
        if isinstance(raw, str) and "${" in raw and any(name in raw for name in undecided):
            return UNKNOWN  # an interpolation of a value the shell decides
        value = effective.resolve(key)
        if value is UNRESOLVED or value == MISSING or isinstance(value, str) and NEUTRAL_VALUE in value:
            return UNKNOWN
        return value

    return lookup


def judge(table: StartupChecks, effective, release: str | None = None,
          unknown_keys: Iterable[str] = ()) -> list[Outcome]:
    """Every start-up check of the effective config's release (or `release`), in verl's order."""
    from migrator.startup.conversion import node_children

    children = node_children(effective.leaves, effective.added)
    return evaluate(table, release or effective.release, config_lookup(effective, unknown_keys), children=children)
