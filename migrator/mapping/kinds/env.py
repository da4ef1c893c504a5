"""`env-rename` and `env-removal`: environment variables a script assigns (`VAR=value`, `export VAR=...`)."""

from __future__ import annotations

from dataclasses import dataclass

from migrator.mapping.fields import COMMON, FileCondition, check_name, check_safe_value, check_text, check_when
from migrator.mapping.kind import Code, Entry, EntryKind, Family, Group, Role, Row, new_differs
from migrator.mapping.kinds.module import OTHER_CHANGES

ENV = Family("env", same_subject=lambda entry, other: other.value in (None, getattr(entry, "value", None)))
# Shared with `var-rename`: a name the tool cannot rewrite at some place.
RENAMED_NAME = Code("VM141", "manual", "renamed variable or name the tool cannot rewrite here: edit by hand")


@dataclass(frozen=True)
class EnvRename(Entry):
    KIND = "env-rename"
    FAMILY = "env"
    FIELDS = {"old": (True, check_name), "new": (True, check_name), "value": (False, check_safe_value),
              "when": (False, check_when), **COMMON}
    old: str = ""
    new: str = ""
    value: str | None = None
    when: FileCondition | None = None

    @property
    def identity(self) -> tuple:
        return (self.FAMILY, self.old, self.value)


@dataclass(frozen=True)
class EnvRemoval(Entry):
    KIND = "env-removal"
    FAMILY = "env"
    FIELDS = {"old": (True, check_name), "value": (False, check_safe_value), "when": (False, check_when),
              "hint": (False, check_text), **COMMON}
    old: str = ""
    value: str | None = None
    when: FileCondition | None = None
    hint: str | None = None

    @property
    def identity(self) -> tuple:
        return (self.FAMILY, self.old, self.value)


def tokens(entry, mappings):
    return (entry.old,)


def name_row(entry, mappings) -> Row:
    """An env or variable rule: it applies in table order, as written (nothing composes)."""
    new = getattr(entry, "new", None)
    fields = {"family": entry.FAMILY, "old": entry.old, "new": new, "action": "rename" if new else "remove",
              "prs": [entry.pr], "releases": [entry.origin.release]}
    if getattr(entry, "value", None) is not None:
        fields["value"] = entry.value
    if entry.when is not None:
        fields["when"] = list(entry.when.patterns)
    return Row(fields, (entry,))


ENV_RULES = Group("env", 80)

ENV_RENAME = EntryKind(
    EnvRename, family=ENV, role=Role.MOVE, rules=(new_differs,), tokens=tokens, codes=(RENAMED_NAME,),
    shown_in=ENV_RULES, row=name_row, notes=OTHER_CHANGES, position=300,
    example={"kind": "env-rename", "old": "OLD_VAR", "new": "NEW_VAR", "pr": 6})
ENV_REMOVAL = EntryKind(
    EnvRemoval, family=ENV, role=Role.REMOVAL, rules=(), tokens=tokens,
    codes=(Code("VM131", "manual", "removed environment variable: remove it by hand"),
           Code("VM132", "info", "removed environment variable, commented out automatically")),
    shown_in=ENV_RULES, row=name_row, notes=OTHER_CHANGES, position=301,
    example={"kind": "env-removal", "old": "GONE_VAR", "pr": 7})
