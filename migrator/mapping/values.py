"""Value entries: a key kept its name but one of its values changed (docs/table-format.md, "Value entries").

Kept apart from `entries.py` (key, path, module and name entries); the loader reads `ENTRY_KINDS` from both.
Table fields with dashes (`old-pattern`, `old-key`) become attributes with underscores.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from migrator.mapping.entries import (
    COMMON,
    Entry,
    FieldError,
    check_args,
    check_key,
    check_module,
    check_path,
    check_text,
)

# `--config-name` is the one command-line option a value entry may name instead of a config key.
CONFIG_NAME = "--config-name"


def check_value_key(value: object) -> str:
    return CONFIG_NAME if value == CONFIG_NAME else check_key(value)


def check_scalar(value: object) -> str:
    """A literal value as a person writes it in an override (`true`, `0.5`, `sglang`)."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str) or not value or any(c.isspace() for c in value):
        raise FieldError(f"{value!r} is not a one-word value")
    return value


def check_pattern(value: object) -> re.Pattern[str]:
    if not isinstance(value, str) or not value:
        raise FieldError(f"{value!r} is not a regular expression")
    try:
        pattern = re.compile(value)
    except re.error as exc:
        raise FieldError(f"bad regular expression {value!r}: {exc}") from None
    if pattern.fullmatch(""):
        raise FieldError(f"pattern {value!r} matches an empty value")
    return pattern


def check_value_map(value: object) -> tuple[tuple[str, str | None], ...]:
    if not isinstance(value, dict) or not value:
        raise FieldError("map must be a non-empty mapping of old value: new value (null drops the override)")
    return tuple((check_scalar(k), None if v is None else check_scalar(v)) for k, v in value.items())


def check_companion(value: object) -> dict:
    if not isinstance(value, dict) or not value:
        raise FieldError("companion must map a key to {default: v, allowed: [v, ...]}")
    for key, spec in value.items():
        check_key(key)
        if not isinstance(spec, dict) or not set(spec) <= {"default", "allowed"}:
            raise FieldError(f"companion {key}: give default and/or allowed")
    return value


def check_when_sibling(value: object) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, dict) or not value:
        raise FieldError("when must map a sibling key to its value ({strategy: megatron})")
    return tuple((str(k), check_scalar(v)) for k, v in value.items())


def check_commit(value: object) -> str:
    if not isinstance(value, str) or not re.fullmatch(r"[0-9a-f]{7,40}", value):
        raise FieldError(f"commit {value!r} is not a short git sha")
    return value


def check_true(value: object) -> bool:
    if value is not True:
        raise FieldError(f"optional must be true (or left out), got {value!r}")
    return True


def check_default_action(value: object) -> str:
    if value != "insert":
        raise FieldError(f"action must be 'insert', got {value!r}")
    return "insert"


def check_removal_action(value: object) -> str:
    if value != "remove":
        raise FieldError(f"action must be 'remove' (leave it out to report only), got {value!r}")
    return "remove"


PROVENANCE = {"commit": (False, check_commit), "release": (False, check_text), "file": (False, check_path)}


@dataclass(frozen=True)
class _ValueEntry(Entry):
    FAMILY = "value"
    commit: str | None = None
    release: str | None = None
    file: str | None = None

    def matches(self, value: str) -> re.Match | bool:
        old, pattern = getattr(self, "old", None), getattr(self, "old_pattern", None)
        if pattern is not None:
            return pattern.fullmatch(value) or False
        return value == old

    @property
    def identity(self) -> tuple:
        pattern = getattr(self, "old_pattern", None)
        return (self.KIND, getattr(self, "key", None) or getattr(self, "old_key", None),
                getattr(self, "old", None), pattern.pattern if pattern is not None else None)

    def describe(self) -> str:
        what = getattr(self, "key", None) or getattr(self, "old_key", None) or ""
        old = getattr(self, "old", None)
        pattern = getattr(self, "old_pattern", None)
        return f"{self.KIND} {what}={old if old is not None else pattern.pattern if pattern else ''}".rstrip("=")


@dataclass(frozen=True)
class ValueRename(_ValueEntry):
    KIND = "value-rename"
    FIELDS = {"key": (True, check_value_key), "old": (False, check_scalar), "old-pattern": (False, check_pattern),
              "new": (True, check_scalar), "args": (False, check_args), "optional": (False, check_true),
              **PROVENANCE, **COMMON}
    key: str = ""
    old: str | None = None
    old_pattern: re.Pattern[str] | None = field(default=None, compare=False)
    new: str = ""
    args: tuple[str, ...] = ()
    optional: bool = False

    def renamed(self, value: str) -> str | None:
        m = self.matches(value)
        if not m:
            return None
        return m.expand(self.new) if isinstance(m, re.Match) else self.new


@dataclass(frozen=True)
class ValueRemoval(_ValueEntry):
    KIND = "value-removal"
    FIELDS = {"key": (True, check_value_key), "old": (False, check_scalar), "old-pattern": (False, check_pattern),
              "hint": (True, check_text), "action": (False, check_removal_action), **PROVENANCE, **COMMON}
    key: str = ""
    old: str | None = None
    old_pattern: re.Pattern[str] | None = field(default=None, compare=False)
    hint: str = ""
    action: str | None = None


@dataclass(frozen=True)
class ValueMap(_ValueEntry):
    KIND = "value-map"
    FIELDS = {"old-key": (True, check_key), "new-key": (True, check_key), "map": (False, check_value_map),
              "template": (False, check_text), "companion": (False, check_companion), **PROVENANCE, **COMMON}
    old_key: str = ""
    new_key: str = ""
    map: tuple[tuple[str, str | None], ...] = ()
    template: str | None = None
    companion: dict | None = field(default=None, compare=False, hash=False)

    def mapped(self, value: str) -> tuple[bool, str | None]:
        """(listed, new value): a new value in braces or a template needs other keys: not listed here."""
        if self.template is not None:
            return False, None
        for old, new in self.map:
            if old == value.lower() if old in ("true", "false") else old == value:
                if new is not None and "{" in new:
                    return False, None
                return True, new
        return False, None


@dataclass(frozen=True)
class ValueDefault(_ValueEntry):
    KIND = "value-default"
    FIELDS = {"key": (True, check_key), "old-default": (True, check_scalar), "new-default": (True, check_scalar),
              "action": (True, check_default_action), **PROVENANCE, **COMMON}
    key: str = ""
    old_default: str = ""
    new_default: str = ""
    action: str = "insert"

    @property
    def identity(self) -> tuple:
        return (self.KIND, self.key)


@dataclass(frozen=True)
class TargetMove(_ValueEntry):
    KIND = "target-move"
    FIELDS = {"old": (True, check_module), "new": (True, check_module), "key": (False, check_key),
              "when": (False, check_when_sibling), **PROVENANCE, **COMMON}
    old: str = ""
    new: str = ""
    key: str | None = None
    when: tuple[tuple[str, str], ...] = ()

    @property
    def identity(self) -> tuple:
        return (self.KIND, self.old, self.key)


VALUE_KINDS: tuple[type[Entry], ...] = (ValueRename, ValueRemoval, ValueMap, ValueDefault, TargetMove)


def check_value_entry(entry: Entry) -> str | None:
    """The rule relating a value entry's fields, or None when it holds."""
    if isinstance(entry, (ValueRename, ValueRemoval)) and (entry.old is None) == (entry.old_pattern is None):
        return "give exactly one of old and old-pattern"
    if isinstance(entry, ValueMap) and (not entry.map) == (entry.template is None):
        return "give exactly one of map and template"
    if isinstance(entry, TargetMove) and entry.old == entry.new:
        return "old and new are the same"
    return None
