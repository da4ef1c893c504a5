"""VM003 unknown or stale override key: a Hydra override that the target release's config does not have.

Judged only for scripts that run `verl.trainer.main_ppo` (the configs whose key lists ship:
ppo_trainer, ppo_megatron_trainer, and from v0.7.1 ppo_veomni_trainer and ppo_torchtitan_trainer,
picked by `--config-name` or a `model_engine=` choice). Hydra rejects such a key at start-up
(`Could not override ... Key ... is not in struct`), after the cluster is allocated.

Not findings: keys under a node whose default is `{}` or `null` (they take any sub-key), `+key`/`++key`
additions (Hydra adds them), `hydra.*`, and undotted group choices. A renamed key says what it became
(run verl-migrate); keys of another engine's config are each reported with the one choice that fixes
them all; a key that was never in verl (a fork's own) is "unknown", with a near spelling under
the same parent as the only did-you-mean (VM007's rule).
"""

from __future__ import annotations

import difflib

from migrator.layout import verl_layout
from migrator.lint.hydra_overrides import verdicts
from migrator.lint.registry import Problem, check
from migrator.pulls import pr_label
from migrator.verdict.judge import SPELLING_CUTOFF


@check("VM003", "unknown-key")
def unknown_keys(script):
    judged = verdicts(script).judged  # VM007 has Hydra's own verdict on these
    if all(o.start in judged for o in script.overrides):
        return
    schema = script.schema
    if schema is None:
        return
    replaced = script.replaced_packages
    unknown = []
    for o in script.overrides:
        if o.start in judged or "." not in o.key or o.key.startswith("hydra.") or schema.knows(o.key):
            continue
        if any(o.key.startswith(package + ".") for package in replaced):
            continue  # `group@package=choice` swapped that node's config for one we have no key list of
        unknown.append(o)
    mismatch = _other_config(script, schema, unknown)
    if mismatch:
        yield from mismatch
        return
    for o in unknown:
        if o.prefix in ("+", "++"):
            # An addition: Hydra creates the key. Only a rename matters (the value no longer reaches verl);
            # a removed key added this way is read by nothing (VM112 reports it if the tables warn).
            change = script.mappings.key(o.key, script.context)
            problem = stale_key(script, schema, o) if change is not None and change.action == "rename" else None
            if problem is not None:
                yield problem
            continue
        problem = stale_key(script, schema, o)
        if problem is not None:
            yield problem
            continue
        yield Problem(o.start, f"unknown key `{o.key}` for verl {script.rev} ({schema.config})",
                      did_you_mean(schema, o.key))


def _other_config(script, schema, unknown) -> list[Problem]:
    """When the script's unknown keys belong to another engine's config (it selects the wrong one): a finding
    at each of those keys, all with the one hint (the text report shows it once above their places)."""
    for other in script.facts.configs(script.rev):
        other_schema = script.facts.schema(script.rev, other)
        if other == schema.config or other_schema is None:
            continue
        hits = [o for o in unknown if o.key in other_schema.leaves and o.prefix not in ("+", "++")]
        if hits:
            engine = next((e for e, c in verl_layout().ppo_engines.items() if c == other), None)
            choice = f"model_engine={engine}" if engine else f"--config-name={other}"
            script.notes.append(f"keys not judged one by one: they fit {other}, not {schema.config}")
            hint = "; ".join(filter(None, [f"select the engine with `{choice}`", _group_hint(unknown)]))
            return [Problem(o.start, f"`{o.key}` is a key of {other}, but this script runs {schema.config}", hint)
                    for o in hits]
    return []


def _group_hint(unknown) -> str | None:
    for o in unknown:
        if o.key.rpartition(".")[2] == "model_engine":
            return f"`{o.key}` is not a key (`model_engine` is a top-level Hydra group)"
    return None


def stale_key(script, schema, o) -> Problem | None:
    """A key the tables rename or remove, or one an older release (or another config) had."""
    key, rev = o.key, script.rev
    change = script.mappings.key(key, script.context)
    if change is not None and change.action == "rename" and schema.knows(change.new):
        release = _release(change.entries[-1])
        return Problem(o.start, f"`{key}` was renamed to `{change.new}` ({release}, "
                                f"{', '.join(pr_label(pr) for pr in change.prs)})",
                       f"run `verl-migrate --to {rev}` on this script")
    if change is not None and change.action in ("remove", "warn"):
        return Problem(o.start, f"`{key}` was removed ({_release(change.entries[-1])})", change.hint)
    before, after = script.facts.around(key, rev)
    if before or after:
        was = f"it was there in {before}" if before else f"it is first in verl {after}"
        return Problem(o.start, f"`{key}` is not in verl {rev} ({schema.config}); {was}", did_you_mean(schema, key))
    return None


def _release(entry) -> str:
    return f"verl {entry.origin.release}" if entry.origin.release else f"table {entry.origin.file}"


def did_you_mean(schema, key: str) -> str | None:
    """The same rule as VM007's: a near spelling of the last segment among the same parent's keys only."""
    parent, _, leaf = key.rpartition(".")
    if leaf == "model_engine":
        return "`model_engine` is a Hydra group chosen at the top level: write `model_engine=...`"
    siblings = schema.children.get(parent, [])
    match = difflib.get_close_matches(leaf, siblings, n=1, cutoff=SPELLING_CUTOFF)
    if match:
        return f"did you mean `{parent}.{match[0]}`?"
    return None
