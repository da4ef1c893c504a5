"""The run itself: does each migrated launch train what the original trained?

With the files' release named (`--from`), every launch of a verl entry point is composed twice
(migrator.verdict.effective): at the files' release from the original overrides, and at the target from
the migrated ones; the first goes through the composed tables (renamed keys, renamed values) and the two
are compared leaf by leaf, skipping the components neither run starts (verdict/in_use.py). What differs is:

- a default verl changed that the command never set: one finding per launch names every such key with
  its old and new value and the PRs that changed it (mappings/verl/facts/default-changes.yaml). With
  `--unsafe-fixes` the old values are pinned instead, right before the command's first override, so that
  the script's own and the caller's (`"$@"`) still win;
- a setting of the command that the target reads with another value, where no table entry explains it.

Keys the tables remove are their own findings already, and not compared here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from migrator.builtin_tables import builtin_mappings_dir
from migrator.edits import Edit, Finding, Unsafe
from migrator.mapping.fields import PIN_VALUE_RE
from migrator.rewrite.shell.hydra_launches import Launch, ShellScript, launches

DEFAULTS_CHANGED_CODE = "VM194"
SETTING_CHANGED_CODE = "VM195"
NOT_COMPARED_CODE = "VM196"
REFUSED_VALUE_CODE = "VM197"
NEW_COMPONENT_CODE = "VM189"
IGNORED_KEY_CODE = "VM022"
DEFAULT_PIN_KIND = "default-pin"
# A pin the migration's own edit leaves no place for (the first override is removed): in neither mode is it
# written, so the hint must not promise that --unsafe-fixes writes it.
UNPLACED_PIN_HINT = ("set the old values on the command by hand to train as before (the migration's own edit "
                     "takes the place where --unsafe-fixes would write them)")


@dataclass(frozen=True)
class LaunchEffect:
    """What one launch's comparison found: its findings and, with unsafe fixes, the pins to write."""

    findings: tuple[Finding, ...] = ()
    pins: tuple[Edit, ...] = ()


def run_differences(before: bytes, after: bytes, to_original: Callable, mappings, target_configs,
                    launch_config: Callable) -> LaunchEffect:
    """Compare each launch of `before` (at `mappings.from_release`) with its migrated self in `after` (at
    the target). `to_original` maps offsets of `after` back; `launch_config(configs, launch)` gives the
    (config dir, config name) a launch composes, or None (not verl's)."""
    from migrator.verdict import StoreError, release_configs

    if not compares_runs(mappings):
        return LaunchEffect()
    try:
        source_configs = release_configs(mappings.from_release)
    except StoreError:
        return LaunchEffect()
    originals = {}
    for launch in launches(ShellScript(before)):
        config = launch_config(source_configs, launch)
        if config is not None:
            originals[launch.start] = (launch, config)
    findings: list[Finding] = []
    pins: list[Edit] = []
    for launch, config in _migrated(after, target_configs, launch_config):
        at = to_original(launch.start)
        if at not in originals:
            continue
        original, source_config = originals[at]
        found = _compare(original, source_config, launch, config, source_configs, target_configs, mappings)
        if isinstance(found, str):
            findings.append(Finding(at, "run-not-compared", found, None, (), "info", NOT_COMPARED_CODE))
            continue
        defaults, settings = found
        findings += _new_components(launch, to_original, mappings)
        moved = _entry_point_move(original, mappings) is not None
        pin = _pin_edit(before, original, defaults, mappings) if defaults and not moved else None
        if pin is not None:  # (a moved entry word is the move's own edit) unsafe: it changes what verl runs
            left = [d for d in defaults if not _pinnable(d, mappings.to_release)]
            made = (_defaults_finding(at, left, mappings),) if left else ()
            pins.append(dataclasses.replace(pin, unsafe=Unsafe(made, (_defaults_finding(at, defaults, mappings),))))
        elif defaults:
            findings.append(_defaults_finding(at, defaults, mappings))
        findings += [_setting_finding(at, d, mappings) for d in settings]
        said = {d.key for d in settings if _refused(dataclasses.replace(d, mapped=d.after), mappings.to_release)}
        findings += _unregistered(original, source_config, launch, config, to_original, mappings,
                                  (source_configs, target_configs), said)
        findings += _unread_settings(launch, after, to_original, mappings, (target_configs, *config))
    return LaunchEffect(tuple(findings), tuple(pins))


def _unregistered(original: Launch, source_config, launch: Launch, config, to_original: Callable, mappings,
                  configs: tuple, said: set) -> list[Finding]:
    """A value the migrated launch gives that names no component of the target's registry, whether or not
    the migration changed it (`reward.reward_manager.name=prime` from v0.7.1: v0.9.0's reward loop has no
    `prime`): Hydra accepts it and verl stops at start-up (VM197). `said`: keys a setting finding names."""
    from migrator.startup.components import unregistered
    from migrator.verdict.effective import effective_config

    source_configs, target_configs = configs

    def effective_at(release_configs, where, which: Launch):
        return lambda: effective_config(release_configs, *where, [o.text for o in which.overrides])

    module = launch_module(launch)
    before = {(u.registry.name, u.value) for u in unregistered(
        original.overrides, launch_module(original), mappings.from_release,
        effective_at(source_configs, source_config, original))}
    written = {o.start: o for o in original.overrides}
    found = []
    for u in unregistered(launch.overrides, module, mappings.to_release, effective_at(target_configs, config, launch)):
        at = to_original(u.override.start)
        was = written.get(at)
        if u.override.key in said or was is not None and _table_speaks_of(was, mappings):
            continue  # a setting finding, or the table's own value entry (VM162), says it already
        already = f" (verl {mappings.from_release} refused it too: the original did not run either)" \
            if (u.registry.name, u.value) in before else ""
        found.append(Finding(at, "setting-refused",
                             f"{u.message(mappings.to_release)}{already}", u.hint, (), "manual", REFUSED_VALUE_CODE))
    return found


def _table_speaks_of(override, mappings) -> bool:
    """Does a value entry of the range name this override's value (the rewrite reports it at the value)?"""
    return mappings.value(override.key, override.text.partition("=")[2].strip("'\"")) is not None


def _unread_settings(launch: Launch, after, to_original: Callable, mappings, config: tuple) -> list[Finding]:
    """An override the migrated launch still gives that Hydra accepts at the target and nothing reads
    there for its entry point (facts/components.yaml `ignored`), where the files' release read it: the
    run no longer has the setting (VM022, lint's code for the same problem)."""
    from migrator.startup.components import ignored_advice, ignored_key

    module = launch_module(launch)
    if module is None:
        return []
    found = []
    for o in launch.overrides:
        if o.prefix == "~" or ignored_key(o.key, mappings.from_release, module) is not None:
            continue  # deleted, or already unread at the files' release: the run is the same
        advice = ignored_advice(o.key, o.written.partition("=")[2], mappings.to_release, module, config)
        if advice is not None:
            message, hint, pr = advice
            found.append(Finding(to_original(o.start), "ignored-key", message, hint, (pr,), "warning",
                                 IGNORED_KEY_CODE))
    return found


def compares_runs(mappings) -> bool:
    """Only between two releases, the files' named (`--from`) and an older one than the target."""
    releases = list(mappings.history.releases) if mappings.history is not None else []
    return (mappings.from_release_given and mappings.from_release in releases and mappings.to_release in releases
            and releases.index(mappings.from_release) < releases.index(mappings.to_release))


def _migrated(after: bytes, target_configs, launch_config):
    for launch in launches(ShellScript(after)):
        config = launch_config(target_configs, launch)
        if config is not None:
            yield launch, config


def _compare(original: Launch, source_config, launch: Launch, target_config, source_configs, target_configs,
             mappings):
    """(default differences, unexplained setting differences), or why the launch was not compared."""
    from migrator.verdict.effective import compare_through_tables, effective_config
    from migrator.verdict.in_use import as_read, inactive

    after = effective_config(target_configs, *target_config, [o.text for o in launch.overrides])
    # An override the target rejects is a finding of its own (the launch fails there); what it selected
    # before (`model_engine=mindspeed`: the strategy, the optimizer) is no default verl changed. The
    # original is read without the same words, so that only verl's own changes are compared.
    refused = {launch.overrides[i].text for i in after.rejected}
    before = effective_config(source_configs, *source_config,
                              [o.text for o in original.overrides if o.text not in refused])
    before, after = as_read(before, launch_module(original)), as_read(after, launch_module(launch))
    for config, release in ((before, mappings.from_release), (after, mappings.to_release)):
        if config.failure is not None:
            return (f"the launch's config does not compose at verl {release}, so what it trains there was not "
                    f"compared with the original: {config.failure.splitlines()[0][:200]}")
    context = mappings.context(original.entry if original.is_module else None, source_config[1])

    differences = [d for d in compare_through_tables(before, after, mappings, context, inactive).differences
                   if not same_as_read(d, before, after, launch_module(original))]
    moved = _entry_point_move(original, mappings)
    if moved is not None:  # the move's own defaults the table leaves to the target: said with its reason
        reasons = {pin.key: pin.note for pin in moved.pins if not pin.pin}
        differences = [dataclasses.replace(d, cause="default", note=reasons[d.key]) if d.key in reasons else d
                       for d in differences]
    defaults = [d for d in differences if d.cause == "default"]
    # What the tables map and still differs (two keys onto one, a value they do not follow) is said too.
    settings = [d for d in differences if d.cause == "setting"]
    return defaults, settings


def _entry_point_move(launch: Launch, mappings):
    """The tables' move of the launch's entry point, or None."""
    module = launch_module(launch)
    return mappings.entry_point(module) if module is not None else None


def same_as_read(d, before, after, source_entry: str | None = None) -> bool:
    """The same value as verl reads it (verdict/in_use.py): a null verl fills from another key, or a key the
    source's entry point ignores for another (`source_entry`, a module), equal to the other side's value."""
    from migrator.verdict.effective import UNKNOWN, same_value
    from migrator.verdict.in_use import null_means, read_instead

    for value, other, config, key in ((d.after, d.mapped, after, d.key), (d.mapped, d.after, before, d.source_key)):
        means = null_means(key) if value is None else None
        if means is not None and means in config.leaves:
            filled = config.resolve(means)
            if filled is not UNKNOWN and same_value(filled, other):
                return True
    reads = read_instead(source_entry, d.source_key)
    if reads is not None and reads in before.leaves:
        value = before.resolve(reads)
        return value is not UNKNOWN and same_value(value, d.after)
    return False


def launch_module(launch: Launch) -> str | None:
    """The module a launch runs (`-m module`, or a script path under verl's roots)."""
    from migrator.rewrite.shell.entrypoint import module_of_path

    if launch.is_module:
        return launch.entry
    found = module_of_path(launch.entry.encode())
    return found[0] if found is not None else None


def _new_components(launch: Launch, to_original: Callable, mappings) -> list[Finding]:
    """A name the migrated launch gives that selects a component verl registered only after the files'
    release (`reward.reward_manager.name=remote`: a fork's manager before verl v0.7.0 had its own)."""
    from migrator.startup.components import selects_new_component

    out = []
    for o in launch.overrides:
        value = o.text.partition("=")[2].strip("'\"")
        found = selects_new_component(o.key, value, mappings.from_release, mappings.to_release)
        if found is not None:
            known = ", ".join(found.source_names) or "none"
            out.append(Finding(to_original(o.start), "new-component",
                               f"{o.key}={value} now selects verl's own {found.registry} `{value}` "
                               f"({found.defined_at}), which verl {mappings.from_release} did not have "
                               f"(it registered: {known}): what the name ran before (a fork's own) is not run",
                               "keep the fork's component registered under another name, or check verl's",
                               (), "warning", NEW_COMPONENT_CODE))
    return out


def _defaults_finding(at: int, defaults: list, mappings) -> Finding:
    from migrator.verdict.effective import shown

    prs = sorted({pr for d in defaults for pr in default_change_prs(d.key, mappings)})
    listed = "; ".join(f"{d.key} {shown(d.mapped)} -> {shown(d.after)}"
                       + "".join(f" (#{pr})" for pr in default_change_prs(d.key, mappings))
                       + _refused(d, mappings.to_release) + (f" ({d.note})" if d.note else "") for d in defaults)
    count = f"{len(defaults)} default{'s' if len(defaults) != 1 else ''}"
    return Finding(at, "default-change", f"the command leaves {count} to verl that verl {mappings.to_release} "
                                         f"changed since {mappings.from_release}: {listed}",
                   "set the old values on the command to train as before (--unsafe-fixes writes them)",
                   tuple(prs), "warning", DEFAULTS_CHANGED_CODE)


def _setting_finding(at: int, d, mappings) -> Finding:
    from migrator.verdict.effective import shown

    refused = _refused(dataclasses.replace(d, mapped=d.after), mappings.to_release)
    if refused:  # Hydra accepts it; verl's registry does not, after the job has its GPUs
        return Finding(at, "setting-refused", f"{d.key}={shown(d.after)}: Hydra accepts it, but verl "
                                              f"{mappings.to_release} stops at start-up{refused}",
                       "set a value verl registers, or keep the fork that reads it", (), "manual",
                       REFUSED_VALUE_CODE)

    source = f" (set as {d.source_key})" if d.source_key != d.key else ""
    return Finding(at, "setting-change", f"{d.key}: the original command trains with {shown(d.mapped)}{source} "
                                         f"at verl {mappings.from_release}, the migrated one with {shown(d.after)} "
                                         f"at verl {mappings.to_release}", "check which value the run needs",
                   tuple(default_change_prs(d.key, mappings)), "warning", SETTING_CHANGED_CODE)


def _refused(d, release: str) -> str:
    """` (verl v0.9.0 accepts only async)` when `d.mapped` names a component the target does not register."""
    from migrator.startup.components import registry_for
    from migrator.verdict.effective import shown

    registry = registry_for(d.key, release)
    if registry is None or shown(d.mapped) in registry.names:
        return ""
    return f" (verl {release} accepts only {', '.join(sorted(registry.names))})"


def _pinnable(d, release: str) -> bool:
    return _pin_word(d, release) is not None


def _pin_word(d, release: str) -> bytes | None:
    """`key=old` as a Hydra override the shell passes as one word, or None (a mapping, an odd string, a
    component the target no longer has)."""
    from migrator.verdict.effective import shown

    if isinstance(d.mapped, dict) or d.note or _refused(d, release):
        return None  # `note`: the tables chose the target's value
    value = shown(d.mapped)
    if isinstance(d.mapped, str) and _reads_as_another_type(value) or not PIN_VALUE_RE.match(value):
        return None  # a string that reads as another type, or one the shell would split: by hand
    word = f"{d.key}={value}".encode()
    return b"'" + word + b"'" if any(c in word for c in b"[]?*,") else word


def _reads_as_another_type(text: str) -> bool:
    """Would Hydra read this string's text as null, a bool or a number (`1`, `1e-5`, `inf`)?"""
    if text.lower() in ("null", "true", "false", ""):
        return True
    try:
        float(text)
    except ValueError:
        return False
    return True


def _pin_edit(src: bytes, launch: Launch, defaults: list, mappings) -> Edit | None:
    """The old defaults, right before the command's first override: every later override (the caller's too)
    wins, and Hydra's own flags (`--config-name`) stay where its parser takes them (an override before a flag
    and another after it is an error: "unrecognized arguments"). None when the command shows no override of
    its own to place them before."""
    words = [w for w in (_pin_word(d, mappings.to_release) for d in defaults) if w is not None]
    first = min((o.start for o in launch.overrides if o.start > launch.start and src[o.start - 1:o.start] in b" \t\n"),
                default=None)
    if not words or first is None:
        return None
    line_start = src.rfind(b"\n", 0, first) + 1
    indent = src[line_start:first]
    if indent.strip(b" \t") or b"\\\n" not in src[launch.start:first]:
        text = b"".join(w + b" " for w in words)  # on the first override's line
    else:
        text = b"".join(w + b" \\\n" + indent for w in words)  # one argument a line, as the command is written
    keys = ", ".join(w.decode().strip("'").partition("=")[0] for w in words)
    prs = tuple(sorted({pr for d in defaults for pr in default_change_prs(d.key, mappings)}))
    return Edit(first, first, text, DEFAULT_PIN_KIND, f"kept the defaults of verl {mappings.from_release}: {keys}", prs)


@lru_cache(maxsize=1)
def _default_changes() -> dict[str, list[tuple[str, tuple[int, ...]]]]:
    """key -> [(release it changed in, PRs)], from the shipped facts (from the cache while they are unchanged)."""
    from pathlib import Path

    from migrator import cache

    path = builtin_mappings_dir() / "verl" / "facts" / "default-changes.yaml"
    return cache.derived("default-changes", [path, Path(__file__)], lambda: _read_default_changes(path))


def _read_default_changes(path) -> dict[str, list[tuple[str, tuple[int, ...]]]]:
    import yaml

    rows = (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("changes") or []
    out: dict[str, list[tuple[str, tuple[int, ...]]]] = {}
    for row in rows:
        out.setdefault(row["key"], []).append((row["release"], tuple(row.get("prs") or ())))
    return out


def default_change_prs(key: str, mappings) -> tuple[int, ...]:
    """The PRs that changed `key`'s default in a release after the files' and up to the target."""
    releases = list(mappings.history.releases) if mappings.history is not None else []
    if mappings.from_release not in releases or mappings.to_release not in releases:
        return ()
    first, last = releases.index(mappings.from_release), releases.index(mappings.to_release)
    found = [pr for release, prs in _default_changes().get(key, ()) if release in releases
             and first < releases.index(release) <= last for pr in prs]
    return tuple(dict.fromkeys(found))
