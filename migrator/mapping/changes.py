"""The answers a composed `MappingSet` gives: what becomes of one key, path, module, Python name, keyword,
entry point, config name or value from --from to --to, with the entries (and so the PRs) that made it."""

from __future__ import annotations

from dataclasses import dataclass

from migrator.mapping.fields import FileCondition
from migrator.mapping.kind import Entry


class CitesPRs:
    entries: tuple[Entry, ...]

    @property
    def prs(self) -> tuple[int, ...]:
        """The PRs of the entries that made the change, first seen first."""
        return tuple(dict.fromkeys(e.pr for e in self.entries))


@dataclass(frozen=True)
class KeyChange(CitesPRs):
    """What becomes of one config key. `new` is None for removals and warnings."""

    old: str
    new: str | None
    action: str  # "rename" | "remove" | "warn"
    hint: str | None
    entries: tuple[Entry, ...]
    add: bool = False  # `new` is not in the target config: written `+new=...`
    # An entry-point move put the key where the new config has it: a `+` the old config needed must go.
    exists: bool = False
    # A removal that is a manual step (a key the new entry point has no home for), not a clean-up.
    manual: bool = False
    note: str | None = None  # why a precision rule made this a warning (shown instead of the entries' notes)


@dataclass(frozen=True)
class EntryContext:
    """What a command runs (at --from): its entry module and the config that module composes."""

    module: str | None
    config: str | None


@dataclass(frozen=True)
class EntryPointChange(CitesPRs):
    old: str
    new: str | None  # None: removed (a manual step)
    args: tuple[str, ...]
    pins: tuple  # the move's DefaultPins, pin=false ones included: the caller decides
    hint: str | None
    entries: tuple[Entry, ...]


@dataclass(frozen=True)
class ConfigChange(CitesPRs):
    """A `--config-name` or `--config-path` value that moved (new None: removed)."""

    old: str
    new: str | None
    args: tuple[str, ...]
    hint: str | None
    entries: tuple[Entry, ...]
    drop: bool = False  # the new config name is the module's own: drop `--config-name`


@dataclass(frozen=True)
class PathChange(CitesPRs):
    old: str
    new: str | None  # None: removed
    env: tuple[tuple[str, str], ...]
    args: tuple[str, ...]
    hint: str | None
    entries: tuple[Entry, ...]
    # Does the new script train what the old one trained (migrator/mapping/script_moves.py)? None: no
    # proof is shipped for it (a user's table, a directory move): a plain move, as the table says.
    proof: object | None = None


@dataclass(frozen=True)
class ModuleChange(CitesPRs):
    old: str
    new: str | None  # None: removed (a manual step, `hint` says where it went)
    entries: tuple[Entry, ...]
    hint: str | None = None


@dataclass(frozen=True)
class SymbolChange(CitesPRs):
    """What becomes of `pkg.mod:Name`: module entries carry it along, symbol entries move or rename it.
    `new` is None for a removal (`hint` says what to use); `explicit` when a symbol entry decided."""

    old: str
    new: str | None
    entries: tuple[Entry, ...]
    hint: str | None = None
    explicit: bool = False


@dataclass(frozen=True)
class KeywordChange(CitesPRs):
    function: str
    old: str
    new: str
    entries: tuple[Entry, ...]


@dataclass(frozen=True)
class NameRule:
    """An env or shell-variable rule, in release order. `new` None means removal."""

    old: str
    new: str | None
    value: str | None
    when: FileCondition | None
    entry: Entry

    def applies_to(self, source: bytes) -> bool:
        return self.when is None or self.when.matches(source)


@dataclass(frozen=True)
class ValueChange(CitesPRs):
    """What becomes of `key=value`. `new_key` is set when a value map renames the key too; `new` is None
    for a removal (`action` "remove": delete the override; "warn": report it)."""

    key: str
    value: str
    new_key: str | None
    new: str | None
    action: str  # "rename" | "remove" | "warn"
    hint: str | None
    args: tuple[str, ...]
    entries: tuple[Entry, ...]

    def describe(self) -> str:
        new = f"{self.new_key or self.key}={self.new}"
        return f"{self.key}={self.value} -> {new}"
