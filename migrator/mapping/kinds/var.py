"""`var-rename`: a shell variable renamed inside scripts (`train_etp` -> `actor_etp`)."""

from __future__ import annotations

from dataclasses import dataclass

from migrator.mapping.fields import COMMON, FileCondition, check_name, check_when
from migrator.mapping.kind import Entry, EntryKind, Family, Group, Role, new_differs
from migrator.mapping.kinds.env import RENAMED_NAME, name_row
from migrator.mapping.kinds.module import OTHER_CHANGES

VAR = Family("var")


@dataclass(frozen=True)
class VarRename(Entry):
    KIND = "var-rename"
    FAMILY = "var"
    FIELDS = {"old": (True, check_name), "new": (True, check_name), "when": (False, check_when), **COMMON}
    old: str = ""
    new: str = ""
    when: FileCondition | None = None


VAR_RULES = Group("var", 90)

VAR_RENAME = EntryKind(
    VarRename, family=VAR, role=Role.MOVE, rules=(new_differs,), tokens=lambda entry, mappings: (entry.old,),
    codes=(RENAMED_NAME,), shown_in=VAR_RULES, row=name_row, notes=OTHER_CHANGES, position=600,
    example={"kind": "var-rename", "old": "old_var", "new": "new_var", "pr": 8})
