"""How verl reads a run's effective config (mappings/verl/effective-config.yaml): which optional
components a run starts, decided the way verl's trainer decides it (a setting of a component that does
not run trains nothing, so the before/after comparison skips it), and which nulls verl replaces with
another key's value."""

from __future__ import annotations

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
