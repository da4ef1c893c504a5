"""VM021 verl warns at start-up and ignores a value: a check of verl's start-up table (VM020's, in
migrator/lint/startup.py) whose outcome in verl is a warning, not a stop. From v0.7.0 `RolloutConfig`
accepts only `actor_rollout_ref.rollout.mode=async`: any other value but `sync` (a fork's `search`) gets a
DeprecationWarning ("Unknown rollout mode 'search'") in the GPU workers, and verl runs the async rollout.
"""

from __future__ import annotations

from migrator.lint.registry import check
from migrator.lint.startup import found


@check("VM021", "startup-check-warns", severity="warning")
def startup_check_warns(script):
    yield from found(script)[1]
