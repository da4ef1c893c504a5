"""VM008 a mandatory value is left unset: a `???` of the composed config that verl reads and the command
does not set. Hydra composes such a config; verl stops at start-up with OmegaConf's MissingMandatoryValue.

From verl v0.6.0 the PPO configs declare `actor_rollout_ref.rollout.name: ???` (its default was `vllm`),
so a script that relied on the default stops there; `reward.reward_model.rollout.name` is mandatory once
the command sets `reward.reward_model.enable=True`. Found in the same composition as VM007's verdict
(migrator/verdict/mandatory.py); not reported when a key of the command is set at run time, or the command
passes words the script does not show (`"$@"`, an array it never assigns, `"$EXTRA"`, `$(cat args)`).
"""

from __future__ import annotations

from migrator.lint.hydra_overrides import verdicts
from migrator.lint.registry import Problem, check
from migrator.verdict.mandatory import unset_message


@check("VM008", "mandatory-unset")
def mandatory_unset(script):
    for launch, config_name, key in verdicts(script).unset:
        yield Problem(launch.start, unset_message(key, script.rev, config_name), _old_default(script, key), key=key)


def _old_default(script, key: str) -> str | None:
    """The old default the tables record for a key that became mandatory: what the script ran with."""
    from migrator.pulls import pr_name

    for entry in reversed(script.mappings.value_defaults()):
        if entry.key == key and entry.new_default == "???":
            return (f"its default was `{entry.old_default}` before verl {entry.release} ({pr_name(entry.pr)}): "
                    f"add `{key}={entry.old_default}` to run as before")
    return None
