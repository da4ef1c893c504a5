"""Value entries: a key kept its name but one of its values changed (docs/table-format.md, "Value entries").

`value-rename`, `value-removal`, `value-map`, `target-move` and `value-default`. A value entry names its key
as the key was called in the entry's release; composition (migrator/mapping/value_changes.py) follows
the key through the key renames and asks each entry what it does to the value in hand (`apply`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import ClassVar

from migrator.layout import verl_layout
from migrator.mapping.fields import (
    COMMON,
    FieldError,
    check_args,
    check_commit,
    check_key,
    check_module,
    check_path,
    check_text,
)
from migrator.mapping.kind import Code, Entry, EntryKind, Family, Role, Row, Section
from migrator.mapping.presentation import entry_row, links, table_section

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
VALUE = Family("value", chains=False)


@dataclass(frozen=True)
class ValueStep:
    """What one value entry does to the value in hand: `value` after it (None: the walk ends with `action`
    and `hint`), overrides to add beside it, and the key's new name (a value map renames the key too)."""

    value: str | None
    action: str = "rename"
    hint: str | None = None
    args: tuple[str, ...] = ()
    new_key: str | None = None


@dataclass(frozen=True)
class ValueEntry(Entry):
    FAMILY = "value"
    # About a class-path string wherever it is (a `_target_`, a tool's `class_name`), not one key's value.
    moves_class_path: ClassVar[bool] = False
    commit: str | None = None
    release: str | None = None
    file: str | None = None

    @property
    def value_key(self) -> str | None:
        """The key whose value the entry is about, as its release named it (None: any key)."""
        return getattr(self, "key", None)

    @property
    def only_values(self) -> frozenset[str] | None:
        """The values in hand the entry can apply to at all, when they are a few literals (else None): an
        entry that names no key is asked about every value, and these spare the walk for the others."""
        return None

    @property
    def shown_value(self) -> str:
        """The old value as the table gives it: the literal, or the pattern."""
        old, pattern = getattr(self, "old", None), getattr(self, "old_pattern", None)
        return old if old is not None else pattern.pattern if pattern is not None else ""

    def matches(self, value: str) -> re.Match | bool:
        old, pattern = getattr(self, "old", None), getattr(self, "old_pattern", None)
        if pattern is not None:
            return pattern.fullmatch(value) or False
        return value == old

    def stated(self) -> tuple[str, str, str | None]:
        """(key, old value, new value: None when removed) as the release notes state the entry."""
        raise NotImplementedError

    def apply(self, current: str, value: str, siblings: dict | None) -> ValueStep | None:
        """What the entry does to `current` (the user wrote `value`; `siblings`: the keys beside it, where
        known), or None when it does not apply."""
        raise NotImplementedError

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

    def duplicate_name(self) -> str:
        return repr(self.describe())


@dataclass(frozen=True)
class ValueRename(ValueEntry):
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

    def stated(self) -> tuple[str, str, str]:
        return self.key, self.shown_value, self.new

    def apply(self, current, value, siblings):
        renamed = None if self.optional else self.renamed(current)
        return None if renamed is None else ValueStep(renamed, args=self.args)


@dataclass(frozen=True)
class ValueRemoval(ValueEntry):
    KIND = "value-removal"
    FIELDS = {"key": (True, check_value_key), "old": (False, check_scalar), "old-pattern": (False, check_pattern),
              "hint": (True, check_text), "action": (False, check_removal_action), **PROVENANCE, **COMMON}
    key: str = ""
    old: str | None = None
    old_pattern: re.Pattern[str] | None = field(default=None, compare=False)
    hint: str = ""
    action: str | None = None

    def stated(self) -> tuple[str, str, str]:
        return self.key, self.shown_value, None

    def apply(self, current, value, siblings):
        return ValueStep(None, self.action or "warn", self.hint) if self.matches(current) else None


@dataclass(frozen=True)
class ValueMap(ValueEntry):
    KIND = "value-map"
    FIELDS = {"old-key": (True, check_key), "new-key": (True, check_key), "map": (False, check_value_map),
              "template": (False, check_text), "companion": (False, check_companion), **PROVENANCE, **COMMON}
    old_key: str = ""
    new_key: str = ""
    map: tuple[tuple[str, str | None], ...] = ()
    template: str | None = None
    companion: dict | None = field(default=None, compare=False, hash=False)

    @property
    def value_key(self) -> str:
        return self.old_key

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

    def stated(self) -> tuple[str, str, str]:
        return f"{self.old_key} -> {self.new_key}", "", ", ".join(_mapped(self))

    def apply(self, current, value, siblings):
        listed, mapped = self.mapped(current)
        if not listed:
            return None  # the key entry of the same release reports it
        if mapped is None:
            return ValueStep(None, "remove", f"{value} is the default of {self.new_key}", new_key=self.new_key)
        return ValueStep(mapped, new_key=self.new_key)


@dataclass(frozen=True)
class ValueDefault(ValueEntry):
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

    def stated(self) -> tuple[str, str, str]:
        return self.key, self.old_default, self.new_default


@dataclass(frozen=True)
class TargetMove(ValueEntry):
    KIND = "target-move"
    moves_class_path = True
    FIELDS = {"old": (True, check_module), "new": (True, check_module), "key": (False, check_key),
              "when": (False, check_when_sibling), **PROVENANCE, **COMMON}
    old: str = ""
    new: str = ""
    key: str | None = None
    when: tuple[tuple[str, str], ...] = ()

    @property
    def identity(self) -> tuple:
        return (self.KIND, self.old, self.key)

    @property
    def only_values(self) -> frozenset[str]:
        return frozenset((self.old,))

    def stated(self) -> tuple[str, str, str]:
        return self.key or "", self.old, self.new

    def apply(self, current, value, siblings):
        if current != self.old or self.when and not _sibling_match(self.when, siblings):
            return None
        return ValueStep(self.new)


def _sibling_match(when, siblings: dict | None) -> bool:
    return siblings is not None and all(siblings.get(k) == v for k, v in when)


# -- rules -------------------------------------------------------------------------------------------

def one_old(entry) -> str | None:
    return "give exactly one of old and old-pattern" if (entry.old is None) == (entry.old_pattern is None) else None


def map_or_template(entry: ValueMap) -> str | None:
    return "give exactly one of map and template" if (not entry.map) == (entry.template is None) else None


def new_class_differs(entry: TargetMove) -> str | None:
    return "old and new are the same" if entry.old == entry.new else None


# -- prefilter tokens --------------------------------------------------------------------------------

def tokens(entry, mappings):
    """A literal the entry needs in a file. Short, common values (`hf`, `sync`) and generic key names
    (`name`, `mode`, `_target_`) would let nearly every file through, so a value is looked for as
    `last=value` (shell, Python, Markdown) and `last: value` (YAML), and alone only when it is a path,
    a class path or an identifier with `_`."""
    key = entry.value_key
    last = key.rpartition(".")[2].lstrip("-")
    old = getattr(entry, "old", None)
    pattern = getattr(entry, "old_pattern", None)
    values = [old] if isinstance(old, str) and old else \
        sorted(_pattern_literals(pattern.pattern)) if pattern is not None else []
    out = set()
    if not values:
        # The old key itself (use_policy_gradient, rollout_is); every spelling, dotted or nested, holds
        # each component whole, so the longest stands for it (`reward_manager`, not `name`).
        out.add(max(key.lstrip("+~-").split("."), key=len))
    for value in values:
        out.update({f"{last}={value}", f"{last}: {value}"})
        if any(c in value for c in "./_"):
            out.add(value)  # also inside lists and longer strings
    return out


def _pattern_literals(pattern: str) -> set[str]:
    """Literals one of which every match contains: the alternatives of a plain alternation
    (`prime|batch`), the literal before a group of alternatives (`dummy_(dtensor|hf)` -> `dummy_`), or
    the longest literal run (`(.*/)?verl/utils/reward_score/math\\.py`); empty when unsure."""
    text = pattern.replace("\\.", "\0")
    if "|" in text and "(" not in text:
        pieces = text.split("|")
    elif "|" in text:
        pieces = [text[:text.index("(")]]
    else:
        pieces = [max(re.split(r"\(\.\*/\)\?|[()|?*+\[\]^$.]", text), key=len)]
    literals = {p.replace("\0", ".") for p in pieces}
    return literals if all(len(p) >= 4 and "\\" not in p for p in literals) else set()


def default_tokens(entry, mappings):
    """A value default is inserted into the PPO trainer's launches, and only when the run names the files'
    release."""
    return (verl_layout().ppo_name,) if mappings.from_release_given else ()


# -- mappings show and the release notes ---------------------------------------------------------------

def rename_row(entry: ValueRename, mappings) -> Row:
    hint = "optional: the old value still works, so it is left as it is" if entry.optional else None
    return entry_row(entry, entry.new, "rename", hint, old=f"{entry.key}={entry.shown_value}",
                     args=list(entry.args))


def removal_row(entry: ValueRemoval, mappings) -> Row:
    return entry_row(entry, None, "remove" if entry.action == "remove" else "warn", entry.hint,
                     old=f"{entry.key}={entry.shown_value}")


def _mapped(entry: ValueMap) -> list[str]:
    if entry.template is not None:
        return [f"{entry.new_key}={entry.template}"]
    return [f"{old}->{entry.new_key}={new}" if new is not None else f"{old}->(dropped)" for old, new in entry.map]


def map_row(entry: ValueMap, mappings) -> Row:
    return entry_row(entry, entry.new_key, "map", None, old=entry.old_key, map=_mapped(entry))


def default_row(entry: ValueDefault, mappings) -> Row:
    return entry_row(entry, entry.new_default, "default", entry.note, old=f"{entry.key} default {entry.old_default}",
                     pins=[f"{entry.key}={entry.old_default}"])


def target_row(entry: TargetMove, mappings) -> Row:
    where = ([entry.key] if entry.key else []) + [f"{k}={v}" for k, v in entry.when]
    return entry_row(entry, entry.new, "move", None, **({"scope": where} if where else {}))


def notes_rows(mappings) -> list[dict]:
    """Each value entry as its table states it: the key, the old value, what it becomes."""
    return [{"kind": e.KIND, **dict(zip(("key", "old", "new"), e.stated())), "action": getattr(e, "action", None),
             "guidance": getattr(e, "hint", None) or e.note or "", "prs": [e.pr]}
            for e in mappings.entries() if e.unit.family is VALUE]


def _new_cell(w, row: dict) -> str:
    if row["new"] is not None:
        return w.code(row["new"])
    return "(removed)" if row["action"] == "remove" else "(rejected: reported, not edited)"


CONFIG_VALUES = Section(
    "config_values", 65, "Changed config values", notes_rows,
    table_section(["Kind", "Key", "Old value", "New value", "Guidance", "PR"],
                  lambda w, r: [r["kind"], w.code(r["key"]) if r["key"] else "any key", w.code(r["old"]) if r["old"]
                                else "", _new_cell(w, r), w.text(r["guidance"]), links(w, r["prs"])],
                  "Keys that kept their name while one of their values changed: verl-migrate rewrites the "
                  "literal values it finds and reports the rest."),
    "changed config value", 110)

VALUE_RENAME = EntryKind(
    ValueRename, family=VALUE, role=Role.MOVE, rules=(one_old,), tokens=tokens,
    codes=(Code("VM164", "manual", "renamed config value the tool cannot rewrite here (or whose extra overrides it "
                "cannot add): edit by hand"),),
    shown_in=None, row=rename_row, notes=CONFIG_VALUES, position=800,
    example={"kind": "value-rename", "key": "trainer.mode", "old": "old_mode", "new": "new_mode", "pr": 17})
VALUE_REMOVAL = EntryKind(
    ValueRemoval, family=VALUE, role=Role.REMOVAL, rules=(one_old,), tokens=tokens,
    codes=(Code("VM161", "manual", "removed config value: delete or change the override by hand"),
           Code("VM162", "warning", "config value the target release rejects (report only): change it as the "
                "hint says"),
           Code("VM163", "info", "override of a removed config value, deleted automatically")),
    shown_in=None, row=removal_row, notes=CONFIG_VALUES, position=801,
    example={"kind": "value-removal", "key": "trainer.mode", "old": "gone_mode", "hint": "use new_mode", "pr": 18})
VALUE_MAP = EntryKind(
    ValueMap, family=VALUE, role=Role.MOVE, rules=(map_or_template,), tokens=tokens,
    codes=(Code("VM165", "manual", "renamed config key whose values changed type, which the tool cannot rewrite "
                "here: edit by hand"),),
    shown_in=None, row=map_row, notes=CONFIG_VALUES, position=802,
    example={"kind": "value-map", "old-key": "trainer.use_x", "new-key": "trainer.x_mode",
             "map": {True: "on", False: "off"}, "pr": 19})
VALUE_DEFAULT = EntryKind(
    ValueDefault, family=VALUE, role=Role.DEFAULT, rules=(), tokens=default_tokens,
    codes=(Code("VM166", "manual", "changed default a launch relies on, which the tool cannot pin here: set the old "
                "default by hand"),),
    shown_in=None, row=default_row, notes=CONFIG_VALUES, position=803,
    example={"kind": "value-default", "key": "trainer.engine", "old-default": "a", "new-default": "b",
             "action": "insert", "pr": 25},
    # The shell rewriter appends the default to launch commands: scripts, and the shell blocks of Markdown
    # and notebooks. A Python launcher's `"-m", "verl.trainer.main_ppo"` holds its token and nothing it acts on.
    token_kinds=frozenset({"shell", "markdown", "notebook"}))
TARGET_MOVE = EntryKind(
    TargetMove, family=VALUE, role=Role.MOVE, rules=(new_class_differs,), tokens=lambda entry, mappings: (entry.old,),
    codes=(Code("VM167", "manual", "moved class path (`_target_`) the tool cannot rewrite here: edit by hand"),),
    shown_in=None, row=target_row, notes=CONFIG_VALUES, position=804,
    example={"kind": "target-move", "old": "verl.old.Config", "new": "verl.new.Config", "pr": 26})
