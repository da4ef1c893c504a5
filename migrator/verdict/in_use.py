"""How verl reads a run's effective config (mappings/verl/effective-config.yaml): which optional
components a run starts, decided the way verl's trainer decides it (a setting of a component that does
not run trains nothing, so the before/after comparison skips it), and which nulls verl replaces with
another key's value."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import lru_cache

from migrator.builtin_tables import TableError, builtin_mappings_dir

TABLE = "effective-config.yaml"
DISPLAY = f"mappings/verl/{TABLE}"


@dataclass(frozen=True)
class Component:
    node: str
    enabled_by: str | None = None
    otherwise_when: tuple[tuple[str, tuple[object, ...]], ...] = ()
    when_any_true: tuple[str, ...] = ()

    def runs(self, config) -> bool:
        """Does the run with this effective config (verdict.effective.EffectiveConfig) start it?"""
        if self.enabled_by is not None:
            value = _value(config, self.enabled_by)
            if value is not None:
                return value is True or value == "true"
        if any(_value(config, key) in values for key, values in self.otherwise_when):
            return True
        return any(_value(config, key) in (True, "true") for key in self.when_any_true)

    def holds(self, key: str) -> bool:
        return key == self.node or key.startswith(self.node + ".")


def _value(config, key: str):
    from migrator.verdict.effective import UNKNOWN

    if key not in config.leaves:
        return None
    value = config.resolve(key)
    return None if value is UNKNOWN else value


@lru_cache(maxsize=1)
def _table() -> dict:
    """The table's data, from the cache while the file is unchanged (a warm run parses no YAML)."""
    from pathlib import Path

    from migrator import cache

    path = builtin_mappings_dir() / "verl" / TABLE
    return cache.derived("effective-config", [path, Path(__file__)], lambda: _read(path))


def _read(path) -> dict:
    import yaml

    try:
        return yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise TableError(DISPLAY, None, f"unreadable: {exc}") from None


@lru_cache(maxsize=1)
def components() -> tuple[Component, ...]:
    out = []
    for n, row in enumerate(_table().get("components") or [], 1):
        if not isinstance(row, dict) or not isinstance(row.get("node"), str):
            raise TableError(DISPLAY, None, "each component needs a `node`", f"component {n}")
        when = row.get("otherwise_when") or {}
        out.append(Component(row["node"], row.get("enabled_by"),
                             tuple((key, tuple(values)) for key, values in when.items()),
                             tuple(row.get("when_any_true") or ())))
    return tuple(out)


def inactive(config, key: str) -> bool:
    """Is `key` a setting of a component this run does not start?"""
    return any(c.holds(key) and not c.runs(config) for c in components())


@lru_cache(maxsize=1)
def _derived() -> tuple[tuple[str, str], ...]:
    rows = _table().get("derived_when_null") or []
    if not all(isinstance(r, dict) and isinstance(r.get("key"), str) and isinstance(r.get("means"), str)
               for r in rows):
        raise TableError(DISPLAY, None, "each derived_when_null row needs a `key` and a `means`")
    return tuple((r["key"], r["means"]) for r in rows)


def null_means(key: str) -> str | None:
    """The key whose value verl uses where `key` is null (`critic.model.tokenizer_path` -> `critic.model.path`)."""
    node, _, leaf = key.rpartition(".")
    for pattern, means in _derived():
        suffix = pattern.removeprefix("*.")
        if key == pattern or pattern.startswith("*.") and (key == suffix or key.endswith("." + suffix)):
            return f"{node}.{means}" if node else means
    return None


@lru_cache(maxsize=1)
def _read_instead() -> dict[tuple[str, str], str]:
    rows = _table().get("read_instead") or []
    if not all(isinstance(r, dict) and all(isinstance(r.get(f), str) for f in ("entry_point", "key", "reads"))
               for r in rows):
        raise TableError(DISPLAY, None, "each read_instead row needs an `entry_point`, a `key` and `reads`")
    return {(r["entry_point"], r["key"]): r["reads"] for r in rows}


def read_instead(entry_point: str | None, key: str) -> str | None:
    """The key the entry point reads in place of `key` (which its config declares and it ignores), or None."""
    return _read_instead().get((entry_point, key)) if entry_point else None


@dataclass(frozen=True)
class Copy:
    """One copy an entry point makes before it reads its config (`copied_at_start`)."""

    source: str  # a leaf, or a node (`whole`, or `node.*`: leaf by leaf)
    target: str
    whole: bool = False

    def apply(self, leaves: dict, set_keys: set) -> None:
        if self.source.endswith(".*"):
            node, into = self.source[:-2], self.target.removesuffix(".*")
            for key, value in list(leaves.items()):
                if key.startswith(node + ".") and value is not None:
                    self._put(leaves, set_keys, key, into + key[len(node):], value)
            return
        if not self.whole:
            if leaves.get(self.source) is not None:
                self._put(leaves, set_keys, self.source, self.target, leaves[self.source])
            return
        under = {key: value for key, value in leaves.items() if key == self.source or key.startswith(self.source + ".")}
        if all(value is None for value in under.values()):
            return
        for key in [k for k in leaves if k == self.target or k.startswith(self.target + ".")]:
            del leaves[key]
            set_keys.discard(key)
        for key, value in under.items():
            self._put(leaves, set_keys, key, self.target + key[len(self.source):], value)

    @staticmethod
    def _put(leaves: dict, set_keys: set, source: str, target: str, value) -> None:
        leaves[target] = value
        if source in set_keys or any(source.startswith(k + ".") for k in set_keys):
            set_keys.add(target)


@lru_cache(maxsize=1)
def _copies() -> tuple[tuple[str, frozenset[str], tuple[Copy, ...], tuple[str, ...]], ...]:
    out = []
    for n, row in enumerate(_table().get("copied_at_start") or [], 1):
        if not (isinstance(row, dict) and isinstance(row.get("entry_point"), str)
                and isinstance(row.get("releases"), list) and isinstance(row.get("copies"), dict)):
            raise TableError(DISPLAY, None, "each copied_at_start row needs an `entry_point`, `releases` and "
                                            "`copies`", f"copied_at_start {n}")
        copies = []
        for source, target in row["copies"].items():
            if isinstance(target, dict) and isinstance(target.get("to"), str):
                copies.append(Copy(source, target["to"], bool(target.get("whole"))))
            elif isinstance(target, str):
                copies.append(Copy(source, target))
            else:
                raise TableError(DISPLAY, None, f"`{source}`: a key, or `{{to: key, whole: true}}`",
                                 f"copied_at_start {n}")
        deletes = row.get("deletes") or []
        if not isinstance(deletes, list) or not all(isinstance(d, str) for d in deletes):
            raise TableError(DISPLAY, None, "`deletes`: a list of nodes", f"copied_at_start {n}")
        out.append((row["entry_point"], frozenset(map(str, row["releases"])), tuple(copies), tuple(deletes)))
    return tuple(out)


def copy_sources(entry_point: str | None, release: str, key: str) -> tuple[str, ...]:
    """The leaves the entry point copies onto `key` at start-up at `release` (`reward_model.reward_manager`
    onto `reward.reward_manager.name` at v0.7.1): a launch that sets one sets `key`, and the copy wins."""
    return tuple(copy.source for entry, releases, copies, _ in _copies() if entry == entry_point and release in releases
                 for copy in copies if not copy.whole and not copy.source.endswith(".*") and copy.target == key)


def as_read(config, entry_point: str | None):
    """The effective config (verdict.effective.EffectiveConfig) as the entry point reads it at the config's
    release: after the copies it makes at start-up (v0.7.1's main_ppo moving the legacy `reward_model.*`
    into `reward.*`). The config itself when it makes none."""
    rows = [(copies, deletes) for entry, releases, copies, deletes in _copies()
            if entry == entry_point and config.release in releases]
    if not rows or config.failure is not None:
        return config
    from migrator.verdict.effective import Leaves

    leaves, set_keys = dict(config.leaves), set(config.set_keys)
    for copies, deletes in rows:
        for copy in copies:
            copy.apply(leaves, set_keys)
        for node in deletes:  # what the run no longer has: the comparison maps nothing from it
            for key in [k for k in leaves if k == node or k.startswith(node + ".")]:
                del leaves[key]
    return dataclasses.replace(config, leaves=Leaves(leaves), set_keys=frozenset(set_keys))
