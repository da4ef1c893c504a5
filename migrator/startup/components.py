"""verl's component registries and its accepted-but-ignored keys, per release (facts/components.yaml,
written by scripts/extract_verl_components.py with the line of verl that registers or reads each one).

A value that names a component: `reward.reward_manager.name=remote` picks from the reward managers verl
registers at the release; a name it does not register stops the run ("Unknown reward manager"). A renamed
key may now select a component that did not exist at the user's release (`remote` was a fork's own name
before verl v0.7.0 registered its own): `selects_new_component` says so for the migration to report.
A key a release still declares but no longer reads (`reward_model.*` for main_ppo from v0.9.0, #6710;
`actor.grad_clip` from v0.8.0, where `actor.optim.clip_grad` is read) is accepted by Hydra and ignored.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path


@dataclass(frozen=True)
class Registry:
    name: str  # "reward-manager", "rollout-name", "rollout-mode"
    key: str
    release: str
    names: dict  # registered name -> verl file:line that registers it
    read_at: str  # verl file:line that reads the key
    only_when: dict  # other keys' values under which the key names a registered component


@dataclass(frozen=True)
class IgnoredKey:
    key: str  # a node or a leaf
    release: str  # the first release that no longer reads it
    releases: tuple[str, ...]  # the releases where its absence is proven
    entry_points: tuple[str, ...]
    read_before: str  # release:file:line that read it at the release before
    read_instead: dict  # old key or node -> what verl reads instead
    pr: int

    def instead(self, key: str) -> str | None:
        """What verl reads in place of `key` (under a node, by its longest matching prefix)."""
        best = None
        for old, new in self.read_instead.items():
            if (key == old or key.startswith(old + ".")) and (best is None or len(old) > len(best[0])):
                best = (old, new)
        return None if best is None else best[1] + key[len(best[0]):]


@dataclass(frozen=True)
class NewComponent:
    registry: str
    key: str
    value: str
    defined_at: str  # verl file:line that registers it at the target
    source_names: tuple[str, ...]  # what the same registry knew at the source release


def facts_path() -> Path:
    from migrator.builtin_tables import builtin_mappings_dir

    return builtin_mappings_dir() / "verl" / "facts" / "components.yaml"


@lru_cache(maxsize=2)
def load_components(path: Path | None = None) -> tuple[tuple[Registry, ...], tuple[IgnoredKey, ...]]:
    """The facts at `path` (default: the shipped ones, from the cache while unchanged: a warm run parses no
    YAML)."""
    if path is None:
        from migrator import cache

        return cache.derived("components", [facts_path(), Path(__file__)], lambda: _parse(facts_path()))
    return _parse(path)


def _parse(path: Path) -> tuple[tuple[Registry, ...], tuple[IgnoredKey, ...]]:
    import yaml

    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    registries = tuple(Registry(r["registry"], r["key"], r["release"], dict(r["names"]), r["read_at"],
                                dict(r.get("only_when") or {})) for r in data["registries"])
    ignored = tuple(IgnoredKey(i["key"], i["release"], tuple(i["releases"]), tuple(i["entry_points"]), i["read_before"],
                               dict(i["read_instead"]), i["pr"]) for i in data["ignored"])
    return registries, ignored


def registry_for(key: str, release: str) -> Registry | None:
    return next((r for r in load_components()[0] if r.key == key and r.release == release), None)


def registries_at(release: str) -> list[Registry]:
    return [r for r in load_components()[0] if r.release == release]


def ignored_key(key: str, release: str, entry_point: str) -> IgnoredKey | None:
    """The ignored-key fact covering `key` at `release` for that entry point (a release where the facts
    prove nothing reads it; the caller's config says whether the release still declares it)."""
    for item in load_components()[1]:
        if entry_point in item.entry_points and release in item.releases and \
                (key == item.key or key.startswith(item.key + ".")):
            return item
    return None


def selects_new_component(key: str, value: str, source_release: str, target_release: str) -> NewComponent | None:
    """`key=value` at the target names a component verl registers there that its registry did not have at
    the source release (under any key): the run now selects verl's own component, not what the name meant
    before (a fork's, or an error). None when the value is no registered name at the target, or was one."""
    target = registry_for(key, target_release)
    if target is None or value not in target.names:
        return None
    source = next((r for r in load_components()[0] if r.name == target.name and r.release == source_release), None)
    if source is None or value in source.names:
        return None
    return NewComponent(target.name, key, value, target.names[value], tuple(source.names))


def ignored_advice(key: str, value: str, release: str, entry_point: str,
                   config: tuple | None = None) -> tuple[str, str, int] | None:
    """(message, hint, PR) for an override of `key` (written value `value`) that Hydra accepts at `release`
    and nothing reads for the entry point (VM022, in lint and in the rewrite's run comparison), or None.
    `config` (configs, config dir, config name): the launch's config at `release`, for the hint to be an
    override Hydra takes there (`+reward.reward_kwargs.x=1` where the node declares no `x`); None: the hint
    names the key as verl reads it."""
    from migrator.pulls import pr_name

    item = ignored_key(key, release, entry_point)
    if item is None:
        return None
    instead = item.instead(key)
    if instead and config is not None:  # Hydra's verdict on the launch's own config
        instead = as_hydra_takes(instead, *config)
    read_release, reader = item.read_before.split(":", 1)
    assign = f"={value}" if value else ""
    hint = f"set `{instead}{assign}` instead" if instead else "verl reads no replacement: remove it"
    if instead and (refused := _unregistered(instead.lstrip("+"), value, release)):
        hint = refused
    return (f"`{key}` is accepted by verl {release} but nothing reads it for {entry_point} (read up to "
            f"{read_release} at {reader}; not since {pr_name(item.pr)})", hint, item.pr)


def as_hydra_takes(key: str, configs, config_dir: str, config_name: str) -> str:
    """`key`, or `+key` where Hydra's verdict at the release is that only an add sets it (the config
    declares no such key); `key` where neither is taken (the hint names it as verl reads it)."""
    from migrator.verdict import NEUTRAL_VALUE, judge

    def taken(override: str) -> bool:
        return not judge(configs, config_dir, config_name, [f"{override}={NEUTRAL_VALUE}"]).rejections

    return f"+{key}" if not taken(key) and taken(f"+{key}") else key


def _unregistered(key: str, value: str, release: str) -> str | None:
    """The advice for a value the replacement key's registry lacks (`reward.reward_manager.name=prime`:
    v0.9.0's reward loop registers no `prime`): moving it over would only stop the run (VM023's words)."""
    registry = registry_for(key, release)
    if registry is None or not value or value in registry.names or "$" in value:
        return None
    known = ", ".join(sorted(registry.names))
    return (f"`{key}` is what verl {release} reads, but `{value}` names no {registry.name} of it (it registers "
            f"{known}): set `{key}` to one of them, or your own class through its `source`/`module` settings")


@dataclass(frozen=True)
class Unregistered:
    """An override whose value names no component of the release's registry: the run stops there."""

    override: object  # the launch's override (rewrite/shell/hydra_launches.Override)
    registry: Registry
    value: str

    @property
    def via(self) -> str:
        """` (verl copies it onto reward.reward_manager.name at start-up)` for a legacy key the entry copies."""
        if self.override.key == self.registry.key:
            return ""
        return f" (verl copies it onto {self.registry.key} at start-up)"

    def message(self, release: str) -> str:
        known = ", ".join(sorted(self.registry.names))
        return (f"`{self.override.key}={self.value}` names no {self.registry.name} of verl {release} (it registers "
                f"{known}){self.via}: the run stops when it reads the key ({self.registry.read_at})")

    @property
    def hint(self) -> str:
        return f"one of {', '.join(sorted(self.registry.names))}, or your own class through its `source`/`module` settings"


def unregistered(overrides, entry_point: str | None, release: str, effective, skip=frozenset()):
    """Each override of a launch (at `release`, run by `entry_point`) that names a component the release's
    registry lacks: the registry's own key, or a legacy key the entry point copies onto it at start-up (the
    copy wins). `effective()`: the launch's effective config, asked only for a registry's `only_when`;
    `skip`: keys another check judges (the start-up checks' rollout name and mode)."""
    from migrator.verdict import PLACEHOLDER
    from migrator.verdict.in_use import copy_sources

    for registry in registries_at(release):
        if registry.key in skip:
            continue
        sources = copy_sources(entry_point, release, registry.key)
        setting = [o for o in overrides if o.key in sources and o.prefix != "~"] or \
            [o for o in overrides if o.key == registry.key and o.prefix != "~"]
        if not setting or PLACEHOLDER in setting[-1].text:
            continue
        o = setting[-1]
        value = o.text.partition("=")[2].strip("'\"")
        if value in registry.names or not value or "$" in value:
            continue
        if registry.only_when and any(effective().resolve(k) != v for k, v in registry.only_when.items()):
            continue
        yield Unregistered(o, registry, value)
