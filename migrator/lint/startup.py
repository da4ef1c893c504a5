"""VM020 verl's own start-up check stops the launch (VM021, startup_warnings.py: one that only warns).

Hydra accepting a command is not the end: verl then checks the composed config itself and stops, from
v0.9.0 in `main_ppo.main` before Ray starts, in v0.6.0-v0.8.0 in the TaskRunner after `ray.init`, up to
v0.5.0 in `RayPPOTrainer.__init__`, and in the GPU workers once the job has its GPUs (the rollout's mode).
For each launch VM007 judges, the effective config at the target (verl's composed defaults plus the
command's accepted overrides, migrator/verdict/effective.py) is judged by verl's checks as data
(mappings/verl/startup-checks.yaml, migrator/startup/): batch size against the GPU count, micro-batch
settings, mini against micro batch, validation temperature, LoRA rank, rollout name and mode.

A check whose inputs the shell decides (`$X` without one literal value, a key set in branches that never
run together) is not judged; nor is any check of a command that passes `"$@"` or words the script does
not show: the caller may set any key. `lint -v` says how many were left out.
"""

from __future__ import annotations

from migrator.lint.hydra_overrides import verdicts
from migrator.lint.launch import exclusive
from migrator.lint.registry import Problem, check
from migrator.verdict import StoreError, release_configs

_FOUND = "_startup_findings"
WHERE = {"main": "before Ray starts", "task-runner": "in its TaskRunner, after ray.init",
         "trainer-init": "when the trainer starts, after ray.init",
         "worker": "in the GPU workers, once the job has its GPUs"}


@check("VM020", "startup-check-fails")
def startup_check_fails(script):
    yield from found(script)[0]


def found(script) -> tuple[list[Problem], list[Problem]]:
    """(the checks that stop the launch, the ones that warn): judged once per script, read by VM020 and VM021."""
    cached = script.__dict__.get(_FOUND)
    if cached is None:
        cached = script.__dict__[_FOUND] = _judge(script)
    return cached


def _judge(script) -> tuple[list[Problem], list[Problem]]:
    from migrator.startup import ChecksError, judge, load_checks
    from migrator.startup.checks import run_as_verl
    from migrator.verdict.effective import effective_config

    errors: list[Problem] = []
    warnings: list[Problem] = []
    composed = verdicts(script).composed
    if not composed:
        return errors, warnings
    try:
        table = load_checks()
        configs = release_configs(script.rev)
    except (ChecksError, StoreError) as exc:
        script.notes.append(f"start-up checks not run: {exc}")
        return errors, warnings
    checks = table.at(script.rev)
    skipped = 0
    for launch, config_dir, config_name in composed:
        entry = configs.entry_by_module(launch.entry) if launch.is_module else configs.entry_by_script(launch.entry)
        mine = [c for c in checks if entry is not None and entry.module in c.entry_points and config_name in c.configs]
        if not mine:
            continue
        if launch.passes_all_args or launch.unseen_args:
            skipped += len(mine)
            continue
        effective = effective_config(configs, config_dir, config_name, [o.text for o in launch.overrides])
        if effective.failure is not None:
            continue  # VM007 says why
        undecided = {o.key for o in launch.overrides if any(p.key == o.key and exclusive(p, o) for p in launch.overrides)}
        outcomes = judge(table, effective, unknown_keys=undecided)
        skipped += sum(o.status == "unknown" for o in outcomes)
        for validator in dict.fromkeys(o.check.validator for o in outcomes):
            ran = [o for o in outcomes if o.check.validator == validator]
            stop, warned = run_as_verl(ran)
            failing = [o for o in ran if o.status == "fails" and o.check.severity == "error"]
            errors.extend(_problem(script, launch, o, o is stop) for o in failing)
            warnings.extend(_problem(script, launch, o, False) for o in warned)
    if skipped:
        script.notes.append(f"{skipped} start-up check(s) not judged: their inputs are set at run time "
                            "(a shell value, \"$@\", words the script does not show)")
    return errors, warnings


def _problem(script, launch, outcome, first: bool) -> Problem:
    from migrator.pulls import pr_name

    check = outcome.check
    keys = {k: v for k, v in outcome.values.items() if "." in k}
    shown = ", ".join(f"{k}={_shown(v)}" for k, v in keys.items())
    phase = check.phases.get(script.rev, "")
    said = outcome.message or (f"a bare assert ({outcome.hint})" if outcome.hint else "a bare assert")
    verb = "warns" if check.severity == "warning" else "stops the launch"
    message = (f"verl {script.rev} {verb} at start-up ({check.validator}, {WHERE.get(phase, phase)}): {said}"
               + (f" [{shown}]" if shown else ""))
    if check.severity == "error" and not first:
        message += " (after an earlier check stops it)"
    hint = outcome.hint if outcome.message else None
    if check.prs:
        hint = (hint + "; " if hint else "") + "see " + ", ".join(pr_name(pr) for pr, _ in check.prs)
    override = _override_of(launch, [check.fix.key, *keys] if check.fix.key else list(keys))
    offset = override.start if override is not None else launch.start
    return Problem(offset, message, hint, key=override.key if override is not None else next(iter(keys), None),
                   override=override.written if override is not None else None)


def _override_of(launch, keys):
    """The last override of the launch that sets one of the check's keys (the one to change)."""
    for key in keys:
        found = [o for o in launch.overrides if o.key == key]
        if found:
            return found[-1]
    return None


def _shown(value) -> str:
    from migrator.startup import UNKNOWN
    from migrator.verdict.effective import shown

    return "?" if value is UNKNOWN else shown(value)
