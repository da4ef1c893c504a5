"""VM004 ineffective key: an override the mapping tables mark warn-only (accepted but has no effect,
or needs a person), reported with the table's hint.

Example: `actor_rollout_ref.rollout.engine_kwargs.vllm.enable_expert_parallel=True` (verl#6066): the
key sits under a free-form dict, so Hydra accepts it, but vLLM's server launch overrides it.
A key that is also gone from the target config is reported once, as VM003.
"""

from __future__ import annotations

from migrator.lint import Problem, check


@check("VM004", "ineffective-key", severity="warning")
def ineffective_keys(script):
    schema = script.schema
    for o in script.overrides:
        if o.prefix == "~" or "." not in o.key:
            continue
        change = script.mappings.key(o.key)
        if change is None or change.action == "rename":
            continue
        if schema is not None and not schema.knows(o.key):
            continue  # VM003 reports it
        if change.action == "remove" and schema is None:
            continue
        note = next((e.note for e in reversed(change.entries) if e.note), "") or ""
        if note.lower().startswith("has no effect"):
            note = note[len("has no effect"):].lstrip(" ,:;")
        prs = ", ".join(f"verl#{pr}" for pr in change.prs)
        yield Problem(o.start, f"`{o.key}` has no effect" + (f": {note}" if note else "") + f" ({prs})",
                      change.hint)
