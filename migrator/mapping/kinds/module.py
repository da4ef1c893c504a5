"""`module-move`, `module-removal` and `module-no-action`: Python modules (a package carries its
submodules: `old.x` becomes `new.x`)."""

from __future__ import annotations

from dataclasses import dataclass

from migrator.mapping.fields import COMMON, check_module, check_text
from migrator.mapping.kind import Code, Entry, EntryKind, Family, Group, Role, Row, Section, new_differs
from migrator.mapping.kinds.key import LEFT_ALONE
from migrator.mapping.kinds.symbol import API_MISMATCH
from migrator.mapping.presentation import entry_row, links, releases


def covers(old: str, module: str) -> bool:
    return module == old or module.startswith(old + ".")


MODULE = Family("module", covers)


@dataclass(frozen=True)
class ModuleMove(Entry):
    KIND = "module-move"
    FAMILY = "module"
    FIELDS = {"old": (True, check_module), "new": (True, check_module), **COMMON}
    old: str = ""
    new: str = ""


@dataclass(frozen=True)
class ModuleRemoval(Entry):
    """A module verl no longer ships (it left the repository): imports and `-m` uses become manual steps."""

    KIND = "module-removal"
    FAMILY = "module"
    FIELDS = {"old": (True, check_module), "hint": (True, check_text), **COMMON}
    old: str = ""
    hint: str = ""


@dataclass(frozen=True)
class ModuleNoAction(Entry):
    """A module that left verl but that users do not import (vendored internals): no edit, no report."""

    KIND = "module-no-action"
    FAMILY = "module"
    FIELDS = {"old": (True, check_module), **COMMON, "why": (True, check_text)}
    old: str = ""
    why: str = ""


def tokens(entry, mappings):
    return (entry.old,)


def composed_rows(mappings) -> list[Row]:
    rows = []
    for old in sorted(mappings.old_modules()):
        change = mappings.module(old)
        if change is None:
            continue
        rows.append(Row({"family": "module", "old": old, "new": change.new,
                         "action": "move" if change.new else "removed", "hint": change.hint,
                         "prs": [e.pr for e in change.entries], "releases": releases(change.entries)},
                        change.entries))
    return rows


MODULES = Group("module", 30, composed_rows)


def other_rows(mappings) -> list[dict]:
    """Modules (composed), then environment and shell-variable rules (in table order)."""
    rows = []
    for old in sorted(mappings.old_modules()):
        change = mappings.module(old)
        if change is not None:
            rows.append({"kind": "module", "old": old, "new": change.new or "", "value": None, "when": [],
                         "hint": change.hint or "", "prs": list(dict.fromkeys(e.pr for e in change.entries))})
    for label, rules in (("env", mappings.env_rules), ("shell variable", mappings.var_rules)):
        for rule in rules:
            rows.append({"kind": label, "old": rule.old, "new": rule.new or "", "value": rule.value,
                         "when": list(rule.when.patterns) if rule.when else [],
                         "hint": getattr(rule.entry, "hint", None) or "", "prs": [rule.entry.pr]})
    return rows


def _condition(w, row: dict) -> str:
    parts = []
    if row.get("value") is not None:
        parts.append("value " + w.code(row["value"]))
    if row.get("when"):
        parts.append("files matching " + ", ".join(w.code(p) for p in row["when"]))
    return "; ".join(parts) or "all files"


def _render(w, rows: list[dict]) -> list[str]:
    return [w.table(["Kind", "Old", "New", "Applies to", "Guidance", "PR"],
                    [[r["kind"], w.code(r["old"]), w.code(r["new"]) if r["new"] else "(removed)", _condition(w, r),
                      w.text(r.get("hint", "")), links(w, r["prs"])] for r in rows])]


OTHER_CHANGES = Section("other_changes", 60, "Environment, module and shell variable changes", other_rows, _render,
                        "environment, module or shell variable change", 50, always=True)

MODULE_MOVE = EntryKind(
    ModuleMove, family=MODULE, role=Role.MOVE, rules=(new_differs,), tokens=tokens,
    codes=(Code("VM122", "manual", "moved module the tool cannot rewrite here: edit by hand"), API_MISMATCH),
    shown_in=MODULES, row=lambda entry, mappings: entry_row(entry, entry.new, "move"), notes=OTHER_CHANGES,
    position=400, example={"kind": "module-move", "old": "verl.old_mod", "new": "verl.new_mod", "pr": 9})
MODULE_REMOVAL = EntryKind(
    ModuleRemoval, family=MODULE, role=Role.REMOVAL, rules=(), tokens=tokens,
    codes=(Code("VM121", "manual", "removed module: change this code by hand"),),
    shown_in=MODULES, row=lambda entry, mappings: entry_row(entry, None, "removed", entry.hint),
    notes=OTHER_CHANGES, position=401,
    example={"kind": "module-removal", "old": "verl.gone_mod", "hint": "use verl.new_mod", "pr": 10})
MODULE_NO_ACTION = EntryKind(
    ModuleNoAction, family=MODULE, role=Role.NO_ACTION, rules=(), tokens=lambda entry, mappings: (), codes=(),
    silent="the module is left as it is: nothing to edit, nothing to report",
    shown_in=None, row=lambda entry, mappings: entry_row(entry, None, "no action", entry.why), notes=LEFT_ALONE,
    position=402, example={"kind": "module-no-action", "old": "verl.vendored", "why": "internal", "pr": 11})
