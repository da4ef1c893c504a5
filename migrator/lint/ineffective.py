"""VM112 ineffective key (the rewrite's code for a warn-only key; the lint's VM004 before): an override
the mapping tables mark warn-only (accepted but has no effect, or deprecated, or needs a person), or
remove while the target config still accepts it (a deprecated alias that is ignored); reported with
the table's note and hint.

Example: `actor_rollout_ref.rollout.engine_kwargs.vllm.enable_expert_parallel=True` (verl#6066): the
key sits under a free-form dict, so Hydra accepts it, but vLLM's server launch overrides it.
A key that is also gone from the target config is reported once, as VM003.
"""

from __future__ import annotations

from migrator.lint.hydra_overrides import verdicts
from migrator.lint.registry import Problem, check
from migrator.pulls import pr_name


@check("VM112", "ineffective-key", severity="warning")
def ineffective_keys(script):
    verdict = verdicts(script)
    schema = None if all(o.start in verdict.judged for o in script.overrides) else script.schema
    for o in script.overrides:
        if o.prefix == "~" or "." not in o.key:
            continue
        change = script.mappings.key(o.key, script.context)
        if change is None or change.action == "rename":
            continue
        if o.start in verdict.judged:  # Hydra's own word on whether the key is in the config
            if o.start in verdict.rejected:
                continue  # VM007 reports it, with the table's hint
            accepted = o.prefix not in ("+", "++")  # an accepted `+key` was not there: Hydra added it
        else:
            accepted = schema is not None and schema.knows(o.key)
        if change.action == "warn" and not accepted and schema is not None and o.prefix not in ("+", "++"):
            continue  # VM003 reports it
        if change.action == "remove" and not accepted:
            continue  # VM003 reports a plain override; a `+` addition of a removed key is harmless
        yield Problem(o.start, *ineffective_message(o.key, change))


def ineffective_message(key: str, change) -> tuple[str, str | None]:
    """(message, hint) of a VM112 finding on `key`, whose composed change is warn-only or a removal the
    target still accepts: the one wording for an override and a key in a YAML config."""
    note = next((e.note for e in reversed(change.entries) if e.note), None)
    prs = ", ".join(pr_name(pr) for pr in change.prs)
    what = note or "the tables mark this key warn-only"
    return f"`{key}`: {what} ({prs})", change.hint
