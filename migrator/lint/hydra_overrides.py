"""VM007 Hydra rejects the override: what Hydra itself says at start-up, for every bad override at once.

For each command that runs a verl entry point with a known config (any `@hydra.main` script of the target
release: `verl.trainer.main_ppo`, `verl.trainer.sft_trainer`, `main_generation`, `main_eval`, fully_async,
one_step_off, recipes ...; `--config-path`/`--config-name` into verl's tree), the overrides it passes
(its own words and the arrays and strings it expands) are parsed, composed and applied by Hydra against
the target release's shipped config tree (migrator/verdict). Findings: an unknown key without `+`, `+` on a
key that exists, `~` on a missing key, a group choice that does not exist, a key under a value that is not
a mapping, an override Hydra cannot parse, a config that does not compose.

Not judged: values and keys the shell decides (`$X`, `$(cmd)`: the key is judged with a neutral value; a key
built at run time is not), `"$@"`, an entry point of a fork (named once with -v), verl's own validation
after Hydra. Where this check runs, VM003 stays silent; VM003 judges the scripts this one cannot.
"""

from __future__ import annotations

import posixpath
from functools import lru_cache

from migrator.lint.launch import exclusive, launches
from migrator.lint.registry import Problem, check
from migrator.rewrite.shell.hydra_launches import config_dir_of_launch
from migrator.verdict import NEUTRAL_VALUE, StoreError, judge, release_configs
from migrator.verdict.store import configs_dir

_VERDICTS = "_hydra_verdicts"  # where a Script keeps its judged launches (computed once, read by three checks)


@check("VM007", "hydra-rejects")
def hydra_rejects(script):
    for problem in verdicts(script).problems:
        yield problem


class ScriptVerdicts:
    """What the verdict found in one script, and which override offsets it judged."""

    def __init__(self):
        self.problems: list[Problem] = []
        self.judged: set[int] = set()  # key offsets of overrides Hydra judged
        self.rejected: set[int] = set()
        self.launches_judged = 0
        self.unset: list[tuple] = []  # (launch, config name, key): mandatory values a judged command leaves unset
        self.composed: list[tuple] = []  # (launch, config dir, config name): the judged launches (VM020-VM023)


def verdicts(script) -> ScriptVerdicts:
    cached = script.__dict__.get(_VERDICTS)
    if cached is None:
        cached = script.__dict__[_VERDICTS] = _judge_script(script)
    return cached


def _judge_script(script) -> ScriptVerdicts:
    out = ScriptVerdicts()
    found = launches(script)
    if not found:
        return out
    try:
        configs = release_configs(script.rev)
    except StoreError as exc:
        script.notes.append(f"overrides not judged by Hydra: {exc}")
        return out
    for launch in found:
        target = _config_of(script, configs, launch, out)
        if target is None:
            continue
        config_dir, config_name = target
        if launch.passes_all_args:
            script.notes.append(f"`{launch.entry}`: overrides passed through \"$@\" are not judged (set by the caller)")
        if not launch.overrides:
            continue
        searchpath = next((o for o in launch.overrides if o.key == "hydra.searchpath"), None)
        if searchpath is not None:
            script.notes.append(f"`{launch.entry}`: `{searchpath.written}` adds configs from outside verl: "
                                "its overrides are not judged")
            continue
        out.launches_judged += 1
        out.composed.append((launch, config_dir, config_name))
        rejections, failure, skipped, unset = _judge_launch(script, configs, config_dir, config_name,
                                                            launch.overrides)
        if not launch.passes_all_args and not launch.unseen_args:  # words we cannot see may set it
            out.unset.extend((launch, config_name, key) for key in unset)
        if failure is not None:
            out.problems.append(Problem(launch.start, f"Hydra cannot compose {config_dir}/{config_name}.yaml of "
                                                      f"verl {script.rev}: {failure}"))
            continue
        out.judged.update(o.start + len(o.prefix) for n, o in enumerate(launch.overrides) if n not in skipped)
        for o, rejection in rejections:
            out.rejected.add(o.start + len(o.prefix))
            key = rejection.key or o.key
            value = o.written.partition("=")[2]
            message, hint = advice(script, key, rejection.message.replace(NEUTRAL_VALUE, value), rejection.hint,
                                   value, launch.entry if launch.is_module else None,
                                   (configs, config_dir, config_name))
            out.problems.append(Problem(o.start, f"Hydra rejects `{o.written}`: {message}", hint, key=key,
                                        override=o.written))
    return out


def _judge_launch(script, configs, config_dir, config_name, overrides):
    """([(override, rejection)], failure, positions not judged). Overrides in different branches of an
    `if`/`case` never run together: one that shares its key with such an earlier one is judged without it."""
    shadowed = set()
    earlier_by_key: dict[str, list] = {}  # only an earlier override of the same key can shadow one
    for n, o in enumerate(overrides):
        earlier = earlier_by_key.setdefault(o.key, [])
        if any(exclusive(p, o) for p in earlier):
            shadowed.add(n)
        earlier.append(o)
    passes = [[n for n in range(len(overrides)) if n not in shadowed]]
    for n in sorted(shadowed):
        passes.append([m for m in range(len(overrides))
                       if m == n or not (overrides[m].key == overrides[n].key and exclusive(overrides[m], overrides[n]))])
    found: dict[int, object] = {}
    skipped: set[int] = set()
    unset: list[str] = []
    for number, indices in enumerate(passes):
        verdict = judge(configs, config_dir, config_name, [overrides[m].text for m in indices])
        if number == 0:
            script.notes.extend(f"{config_name}: {note}" for note in verdict.notes)
            skipped.update(indices[n] for n in verdict.skipped)
            unset = verdict.unset
        if verdict.failure is not None:
            return [], verdict.failure, skipped, []
        for rejection in verdict.rejections:
            m = indices[rejection.index]
            if number == 0 or m == sorted(shadowed)[number - 1]:
                found.setdefault(m, rejection)
    return [(overrides[m], found[m]) for m in sorted(found)], None, skipped, unset


def _config_of(script, configs, launch, out) -> tuple[str, str] | None:
    """(config dir, config name) the launch composes at the target, or None with a note or a finding."""
    entry = configs.entry_by_module(launch.entry) if launch.is_module else configs.entry_by_script(launch.entry)
    if entry is None and not launch.is_module and "/" not in launch.entry:
        entry = _beside(configs, launch.entry, script.path)
    if entry is None:
        last = _last_release_with(launch.entry, launch.is_module)
        if last is None:
            script.notes.append(f"`{launch.entry}` is not a verl entry point: its overrides are not judged")
        elif _exists(script, launch) is None:
            script.notes.append(f"`{launch.entry}` is gone in verl {script.rev} (VM006): its overrides are not judged")
        else:
            what = "reads no Hydra config" if _exists(script, launch) else "is not"
            out.problems.append(Problem(launch.start, f"`{launch.entry}` {what} in verl {script.rev} (it was a Hydra "
                                                      f"entry point up to {last}): its overrides are not judged"))
        return None
    config_dir, config_name = entry.config_path, entry.config_name
    if launch.config_path is not None:
        config_dir = config_dir_of_launch(configs, entry, launch.config_path)
        if config_dir is None:
            script.notes.append(f"`{launch.entry}`: --config-path={launch.config_path} is not one of verl's "
                                "config directories: its overrides are not judged")
            return None
    if launch.config_name is not None:
        if "$" in launch.config_name:
            script.notes.append(f"`{launch.entry}`: --config-name={launch.config_name} is set at run time: "
                                "its overrides are not judged")
            return None
        config_name = launch.config_name.removesuffix(".yaml")
    return config_dir, config_name


def _beside(configs, name: str, script_path: str):
    """`python3 main_ppo_split.py` in examples/split_placement/run.sh: the entry point in the script's own
    directory (the one it is meant to be run from)."""
    directory = posixpath.dirname(script_path.replace("\\", "/"))
    for path, entry in configs.entry_points.items():
        folder, base = posixpath.split(path)
        if base == name and (directory == folder or directory.endswith("/" + folder)):
            return entry
    return None


def _exists(script, launch) -> bool | None:
    """Is the entry point's file in the target's tree? None: it is not, and VM006 says so (it judges .py
    files under that top directory; not recipe/ once it became a submodule)."""
    tree = script.facts.tree(script.rev)
    if tree is None:
        return True
    path = launch.entry.replace(".", "/") + ".py" if launch.is_module else launch.entry
    tails = [path[i:] for i in range(len(path)) if i == 0 or path[i - 1] == "/"]
    if any(tree.exists(tail) for tail in tails):
        return True
    judged_by_vm006 = any("py" in tree.extensions.get(tail.split("/", 1)[0], ()) for tail in tails if "/" in tail)
    return None if judged_by_vm006 else False


@lru_cache(maxsize=256)
def _last_release_with(entry: str, is_module: bool) -> str | None:
    """The newest shipped release whose index has this entry point, or None (never a verl entry point)."""
    from migrator.config import known_releases

    # the order only refines a message: the shipped configs' names when the release index is unreadable
    order = known_releases() or sorted(p.stem for p in (configs_dir() / "releases").glob("*.yaml"))
    for release in reversed(order):
        try:
            configs = release_configs(release)
        except StoreError:
            continue
        found = configs.entry_by_module(entry) if is_module else configs.entry_by_script(entry)
        if found is not None:
            return release
    return None


# Hydra's advice for a key the config does not have; right only for a key that is genuinely new.
_APPEND_ADVICE = "To append to your config use +"


def _without_append_advice(message: str) -> str:
    start = message.find(_APPEND_ADVICE)
    if start < 0:
        return message
    end = start + len(_APPEND_ADVICE)
    while end < len(message) and not message[end].isspace():
        end += 1
    return message[:start].rstrip() + message[end:]


def advice(script, key: str, message: str, hint: str | None, value: str = "",
           entry: str | None = None, config: tuple | None = None) -> tuple[str, str | None]:
    """(message, hint) for a rejected override. Hydra says "To append to your config use +key=..." for every
    key the config lacks; for a typo, a removed key or a fork's key following it silences Hydra and the key
    does nothing. So that advice stays only for a key under a free-form node (`{}`, null: verl passes it
    on); the others get the table's hint, the did-you-mean, or what became of the key. `config` (configs,
    config dir, config name): the launch's config, on which Hydra judges the override a hint advises."""
    if _APPEND_ADVICE not in message:
        return message, _table_hint(script, key) or hint
    hint = _table_hint(script, key) or hint
    if hint is None:
        if script.schema is None or script.schema.under_open_node(key):
            return message, None  # a new key where verl takes any: Hydra's `+key=` is the fix
        hint = _read_instead_hint(script, key, value, entry, config) or _history_hint(script, key)
    return _without_append_advice(message), hint


def _read_instead_hint(script, key: str, value: str, entry: str | None, config: tuple | None) -> str | None:
    """For a key verl read until a release and now reads under another name (components.yaml's ignored keys:
    `reward_model.reward_kwargs.*`, which verl never declared and read up to v0.8.0): what to set."""
    from migrator.startup.components import ignored_advice

    found = ignored_advice(key, value, script.rev, entry, config) if entry else None
    return found[1] if found is not None else None


def _history_hint(script, key: str) -> str:
    """What became of a key no table entry speaks of, from the shipped key lists of every release: another
    config of the target has it (the command runs the wrong one), an older release had it, or a newer one
    brings it."""
    from migrator.config import default_target, known_releases

    elsewhere = _other_config_hint(script, key)
    if elsewhere is not None:
        return elsewhere
    before, after = script.facts.around(key, script.rev)
    if before:
        return f"it was there in verl {before} and is gone in {script.rev}: delete it, or set what replaced it"
    if after:
        order, newest = known_releases(), default_target()
        first = (f"it is only in verl {after}, not yet released" if newest in order
                 and order.index(after) > order.index(newest) else f"it is first in verl {after}")
        return f"verl {script.rev} does not have it yet ({first}): was the script written for a newer verl?"
    return ("no verl release declares this key (a fork's own?): delete it; `+` would only silence Hydra, "
            "verl does not read it")


def _other_config_hint(script, key: str) -> str | None:
    """A key of another of the target's PPO configs (a Megatron key in a command that runs ppo_trainer, before
    `model_engine=megatron` existed): how to select that config."""
    from migrator.layout import verl_layout

    schema = script.schema
    configs = script.facts.configs(script.rev)
    if schema is None or schema.config not in configs:
        return None
    layout = verl_layout()
    for other in configs:
        other_schema = script.facts.schema(script.rev, other)
        if other == schema.config or other_schema is None or not other_schema.knows(key):
            continue
        if other in layout.ppo_config_names:
            return f"pass `--config-name={other}`: the key is in verl {script.rev}'s {other} config"
        engine = next((e for e, c in layout.ppo_engines.items() if c == other), None)
        if engine is not None:
            return f"select `model_engine={engine}`: the key is in verl {script.rev}'s {other} config"
    return None


def _table_hint(script, key: str) -> str | None:
    """What the mapping tables say about this key: its new name, or why it went."""
    change = script.mappings.key(key)
    if change is None:
        return None
    if change.action == "rename":
        return f"renamed to `{change.new}`: run `verl-migrate --to {script.rev}` on this script"
    return change.hint
