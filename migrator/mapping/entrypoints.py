"""Entry kinds for verl's entry points and the configs they compose (docs/table-format.md, "Entry points").

An entry point is a module with `@hydra.main` (`verl.trainer.fsdp_sft_trainer`) composing one config
(`sft_trainer`); a script's Hydra overrides mean something only against that config. These kinds move a
script off an entry point (and remap its overrides), or name configs and config directories that moved.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from migrator.mapping.entries import (
    COMMON,
    SCOPED,
    Entry,
    FieldError,
    check_action,
    check_args,
    check_key,
    check_module,
    check_path,
    check_text,
)
from migrator.pulls import REPOSITORIES as ALL_REPOSITORIES
from migrator.pulls import PullRef, pr_url

# Repositories other than verl whose PRs an entry may cite (`repo:`).
REPOSITORIES = {name: path for name, path in ALL_REPOSITORIES.items() if name != "verl"}
# A pinned default reaches a command line: plain Hydra values and lists (`[0.9,0.95]`), quoted when written.
PIN_VALUE_RE = re.compile(r"[A-Za-z0-9_./:,@%+=\-\[\]?]*\Z")


def check_repo(value: object) -> str:
    if value not in REPOSITORIES:
        raise FieldError(f"repo must be one of {', '.join(REPOSITORIES)} (leave it out for verl), got {value!r}")
    return value  # type: ignore[return-value]


def check_config_name(value: object) -> str:
    if not isinstance(value, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_-]*", value):
        raise FieldError(f"{value!r} is not a Hydra config name")
    return value


def check_names(value: object) -> tuple[str, ...]:
    if not isinstance(value, list) or not value:
        raise FieldError("expected a non-empty list of config names, family names or entry modules")
    return tuple(check_module(v) for v in value)


def hydra_value(value: object) -> str:
    """A YAML scalar as a Hydra override writes it (`true`, `null`, `1e-05`, `[0.9,0.95]`)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    text = str(value).replace(" ", "")
    if not PIN_VALUE_RE.match(text):
        raise FieldError(f"value {value!r} may only use A-Z a-z 0-9 _ . / : , @ % + = - [ ] ?")
    return text


@dataclass(frozen=True)
class KeyMapItem:
    """One key of the old config: its home in the new one (`new`), a manual step, or nothing to do."""

    old: str
    new: str | None
    action: str  # "rename" | "remove" | "warn" | "none"
    hint: str | None = None
    add: bool = False  # `new` is not in the new config: written `+new=...`
    note: str | None = None


@dataclass(frozen=True)
class DefaultPin:
    """A setting whose default changed with the move: `key=old` keeps the old behaviour."""

    key: str
    old: str
    new: str
    pin: bool = True
    note: str | None = None
    since: str | None = None  # the old default held only from this release (before it, another behaviour)

    @property
    def absent(self) -> bool:
        return self.new == "absent"


ITEM_FIELDS = {"old", "new", "action", "hint", "add", "note", "why"}
PIN_FIELDS = {"key", "old", "new", "pin", "note", "since"}


def check_key_map(value: object) -> tuple[KeyMapItem, ...]:
    if not isinstance(value, list):
        raise FieldError("keys must be a list of {old, new} / {old, action, hint} / {old, why}")
    items = []
    for raw in value:
        if not isinstance(raw, dict) or "old" not in raw or set(raw) - ITEM_FIELDS:
            raise FieldError(f"keys item {raw!r} needs 'old' and only {', '.join(sorted(ITEM_FIELDS))}")
        old = check_key(raw["old"])
        note = check_text(raw["note"]) if "note" in raw else None
        if "new" in raw:
            new = check_key(raw["new"])
            if old.endswith(".*") != new.endswith(".*"):
                raise FieldError(f"keys item {old}: a subtree needs '.*' on both old and new")
            items.append(KeyMapItem(old, new, "rename", add=raw.get("add") is True, note=note))
        elif "action" in raw:
            if "hint" not in raw:
                raise FieldError(f"keys item {old}: action needs a hint")
            items.append(KeyMapItem(old, None, check_action(raw["action"]), check_text(raw["hint"]), note=note))
        elif "why" in raw:
            items.append(KeyMapItem(old, old, "none", check_text(raw["why"]), note=note))
        else:
            raise FieldError(f"keys item {old}: give new, action (with hint) or why")
    olds = [i.old for i in items]
    if len(set(olds)) != len(olds):
        raise FieldError(f"keys: {next(o for o in olds if olds.count(o) > 1)} is given twice")
    return tuple(items)


def check_defaults(value: object) -> tuple[DefaultPin, ...]:
    if not isinstance(value, list):
        raise FieldError("defaults must be a list of {key, old, new}")
    pins = []
    for raw in value:
        if not isinstance(raw, dict) or not {"key", "old", "new"} <= set(raw) or set(raw) - PIN_FIELDS:
            raise FieldError(f"defaults item {raw!r} needs key, old, new (and optionally pin, note, since)")
        if raw.get("pin", True) not in (True, False):
            raise FieldError(f"defaults item {raw['key']}: pin must be true or false")
        pins.append(DefaultPin(check_key(raw["key"]), hydra_value(raw["old"]), hydra_value(raw["new"]),
                               raw.get("pin", True), check_text(raw["note"]) if "note" in raw else None,
                               check_text(raw["since"]) if "since" in raw else None))
    return tuple(pins)


class _OtherRepo:
    repo: str | None
    pr: int

    def __post_init__(self):
        if self.repo and self.repo != "verl":  # another repository's PR number: links and labels must say so
            object.__setattr__(self, "pr", PullRef(self.pr, self.repo))

    @property
    def pr_url(self) -> str:
        return pr_url(self.pr)


@dataclass(frozen=True)
class EntryPointMove(_OtherRepo, Entry):
    KIND = "entry-point-move"
    FAMILY = "entry-point"
    FIELDS = {"old": (True, check_module), "new": (True, check_module), "old-config": (True, check_config_name),
              "new-config": (True, check_config_name), "keys": (True, check_key_map), "args": (False, check_args),
              "defaults": (False, check_defaults), "launch": (False, check_text), "repo": (False, check_repo),
              **COMMON, **SCOPED}
    old: str = ""
    new: str = ""
    old_config: str = ""
    new_config: str = ""
    keys: tuple[KeyMapItem, ...] = ()
    args: tuple[str, ...] = ()
    defaults: tuple[DefaultPin, ...] = ()
    launch: str | None = None
    repo: str | None = None
    scope: tuple[str, ...] = ()
    commit: str | None = None

    def names_node(self, key: str) -> bool:
        """Is `key` a node above some item (`model` above `model.partial_pretrain`)?"""
        return any(item.old.startswith(key + ".") for item in self.keys)

    def key_item(self, key: str) -> tuple[KeyMapItem, str] | None:
        """The item for `key` and the key after it: the exact item, else the nearest subtree item.
        An empty `keys:` means the config kept its keys (same config under a new module)."""
        if not self.keys:
            return KeyMapItem(key, key, "none"), key
        parts = key.split(".")
        for item in self.keys:
            if item.old == key:
                return item, item.new or key
        for n in range(len(parts), 0, -1):
            prefix = ".".join(parts[:n])
            for item in self.keys:
                if item.old == prefix + ".*":
                    after = item.new[:-2] + key[len(prefix):] if item.new else key
                    return item, after
        return None


@dataclass(frozen=True)
class EntryPointRemoval(_OtherRepo, Entry):
    KIND = "entry-point-removal"
    FAMILY = "entry-point"
    FIELDS = {"old": (True, check_module), "hint": (True, check_text), "repo": (False, check_repo),
              **COMMON, **SCOPED}
    old: str = ""
    hint: str = ""
    repo: str | None = None
    scope: tuple[str, ...] = ()
    commit: str | None = None


@dataclass(frozen=True)
class ConfigNameMove(Entry):
    """`--config-name=old` under the entry modules of `scope` becomes `new` (dropped when it is the
    module's own config) plus `args`."""

    KIND = "config-name-move"
    FAMILY = "config-name"
    FIELDS = {"old": (True, check_config_name), "new": (True, check_config_name), "scope": (True, check_names),
              "args": (False, check_args), "commit": (False, SCOPED["commit"][1]), **COMMON}
    old: str = ""
    new: str = ""
    scope: tuple[str, ...] = ()
    args: tuple[str, ...] = ()
    commit: str | None = None


@dataclass(frozen=True)
class ConfigDirMove(_OtherRepo, Entry):
    KIND = "config-dir-move"
    FAMILY = "config-dir"
    FIELDS = {"old": (True, check_path), "new": (True, check_path), "repo": (False, check_repo),
              "commit": (False, SCOPED["commit"][1]), **COMMON}
    old: str = ""
    new: str = ""
    repo: str | None = None
    commit: str | None = None


@dataclass(frozen=True)
class ConfigDirRemoval(_OtherRepo, Entry):
    KIND = "config-dir-removal"
    FAMILY = "config-dir"
    FIELDS = {"old": (True, check_path), "hint": (True, check_text), "repo": (False, check_repo),
              "commit": (False, SCOPED["commit"][1]), **COMMON}
    old: str = ""
    hint: str = ""
    repo: str | None = None
    commit: str | None = None


@dataclass(frozen=True)
class KeyScope(Entry):
    """Where an unscoped key entry of the same release applies besides the `ppo` family (`applies-to`)
    and where it does not (`not-in`): configs outside PPO that share the key."""

    KIND = "key-scope"
    FAMILY = "key-scope"
    FIELDS = {"old": (True, check_key), "applies-to": (False, check_names), "not-in": (False, check_names),
              "why": (True, check_text), "commit": (False, SCOPED["commit"][1]), **COMMON}
    old: str = ""
    applies_to: tuple[str, ...] = ()
    not_in: tuple[str, ...] = ()
    why: str = ""
    commit: str | None = None


ENTRY_POINT_KINDS: dict[str, type[Entry]] = {
    cls.KIND: cls
    for cls in (EntryPointMove, EntryPointRemoval, ConfigNameMove, ConfigDirMove, ConfigDirRemoval, KeyScope)
}
# Names the rewriters and the lint ask about: a hyphenated field is an underscored attribute.
FIELD_ATTRIBUTES = {"old-config": "old_config", "new-config": "new_config", "applies-to": "applies_to",
                    "not-in": "not_in"}
