"""VM022 an override of a key verl accepts but no longer reads.

The key (or the node above it) is still declared at the target, so Hydra accepts the override, but nothing
reads it for this entry point: v0.9.0's `main_ppo` no longer migrates the legacy `reward_model.*`,
`custom_reward_function.*` and `sandbox_fusion.*` nodes (#6710: set `reward.*`), and from v0.8.0
`actor_rollout_ref.actor.grad_clip` is declared but `actor_rollout_ref.actor.optim.clip_grad` is read
(#6067). Read from verl's facts (facts/components.yaml, migrator/startup/components.py: the line that read
the key at the release before, and the file that no longer does).
"""

from __future__ import annotations

from migrator.lint.components import judged_launches
from migrator.lint.hydra_overrides import verdicts
from migrator.lint.registry import Problem, check


@check("VM022", "ignored-key", severity="warning")
def ignored_key_set(script):
    from migrator.pulls import pr_name
    from migrator.startup.components import ignored_key

    rejected = verdicts(script).rejected
    for launch, entry, _dir, _name in judged_launches(script):
        for o in launch.overrides:
            if o.prefix == "~" or o.start + len(o.prefix) in rejected:
                continue  # VM007 reports what Hydra rejects
            item = ignored_key(o.key, script.rev, entry.module)
            if item is None:
                continue
            instead = item.instead(o.key)
            release, reader = item.read_before.split(":", 1)
            hint = (f"set `{instead}{_value(o)}` instead" if instead else "verl reads no replacement: remove it")
            if instead and (refused := _unregistered(instead, _value(o)[1:], script.rev)):
                hint = refused
            yield Problem(o.start, f"`{o.key}` is accepted by verl {script.rev} but nothing reads it for "
                                   f"{entry.module} (read up to {release} at {reader}; not since {pr_name(item.pr)})",
                          hint, key=o.key, override=o.written)


def _unregistered(key: str, value: str, release: str) -> str | None:
    """The advice for a value the replacement key's registry lacks (`reward.reward_manager.name=prime`:
    v0.9.0's reward loop registers no `prime`): moving it over would only stop the run (VM023's words)."""
    from migrator.startup.components import registry_for

    registry = registry_for(key, release)
    if registry is None or not value or value in registry.names or "$" in value:
        return None
    known = ", ".join(sorted(registry.names))
    return (f"`{key}` is what verl {release} reads, but `{value}` names no {registry.name} of it (it registers "
            f"{known}): set `{key}` to one of them, or your own class through its `source`/`module` settings")


def _value(override) -> str:
    value = override.written.partition("=")[2]
    return f"={value}" if value else ""
