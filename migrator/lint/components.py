"""VM023 a value that names no component of the target release: `reward.reward_manager.name=prime` at
v0.9.0 names no reward manager verl registers there, and the run stops ("Unknown reward manager").

Read from verl's registries per release (facts/components.yaml, migrator/startup/components.py: each name
with the line of verl that registers it, and the line that reads the key). A rollout name or mode the
start-up checks judge (VM020/VM021) is left to them.
"""

from __future__ import annotations

from migrator.lint.hydra_overrides import verdicts
from migrator.lint.registry import Problem, check
from migrator.verdict import StoreError, release_configs


@check("VM023", "unknown-component")
def unknown_component(script):
    from migrator.startup import load_checks
    from migrator.startup.components import registries_at, unregistered
    from migrator.verdict.effective import effective_config

    try:
        judged = frozenset(k for c in load_checks().at(script.rev) for k in c.fails.keys())
    except ValueError:
        judged = frozenset()
    if not any(r.key not in judged for r in registries_at(script.rev)):
        return
    configs = release_configs(script.rev)
    for launch, entry, config_dir, config_name in judged_launches(script):
        def effective(launch=launch, config_dir=config_dir, config_name=config_name):
            return effective_config(configs, config_dir, config_name, [x.text for x in launch.overrides])

        for found in unregistered(launch.overrides, entry.module, script.rev, effective, judged):
            o = found.override
            yield Problem(o.start, found.message(script.rev), found.hint, key=o.key, override=o.written)


def judged_launches(script):
    """(launch, its entry point at the target, config dir, config name) for each launch VM007 judged."""
    composed = verdicts(script).composed
    if not composed:
        return
    try:
        configs = release_configs(script.rev)
    except StoreError:
        return
    for launch, config_dir, config_name in composed:
        entry = configs.entry_by_module(launch.entry) if launch.is_module else configs.entry_by_script(launch.entry)
        if entry is not None:
            yield launch, entry, config_dir, config_name

