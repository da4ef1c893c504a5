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
    from migrator.startup.components import ignored_advice
    from migrator.verdict import StoreError, release_configs

    rejected = verdicts(script).rejected
    for launch, entry, config_dir, config_name in judged_launches(script):
        try:
            config = (release_configs(script.rev), config_dir, config_name)
        except StoreError:
            config = None
        for o in launch.overrides:
            if o.prefix == "~" or o.start + len(o.prefix) in rejected:
                continue  # VM007 reports what Hydra rejects
            advice = ignored_advice(o.key, o.written.partition("=")[2], script.rev, entry.module, config)
            if advice is not None:
                yield Problem(o.start, advice[0], advice[1], key=o.key, override=o.written)
