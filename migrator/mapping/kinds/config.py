"""`config-name-move`, `config-dir-move` and `config-dir-removal`: the `--config-name` a launch passes and
the `--config-path` directory it points into (docs/table-format.md, "Entry points")."""

from __future__ import annotations

from dataclasses import dataclass

from migrator.mapping.fields import (
    COMMON,
    check_args,
    check_commit,
    check_config_name,
    check_names,
    check_path,
    check_repo,
    check_text,
)
from migrator.mapping.kind import Code, Entry, EntryKind, Family, Role, Row, Section
from migrator.mapping.kinds.entry_point import LAUNCHES, OtherRepository
from migrator.mapping.presentation import entry_row, links, table_section

CONFIG_NAME = Family("config-name")
CONFIG_DIR = Family("config-dir")


@dataclass(frozen=True)
class ConfigNameMove(Entry):
    """`--config-name=old` under the entry modules of `scope` becomes `new` (dropped when it is the
    module's own config) plus `args`."""

    KIND = "config-name-move"
    FAMILY = "config-name"
    FIELDS = {"old": (True, check_config_name), "new": (True, check_config_name), "scope": (True, check_names),
              "args": (False, check_args), "commit": (False, check_commit), **COMMON}
    old: str = ""
    new: str = ""
    scope: tuple[str, ...] = ()
    args: tuple[str, ...] = ()
    commit: str | None = None


@dataclass(frozen=True)
class ConfigDirMove(OtherRepository, Entry):
    KIND = "config-dir-move"
    FAMILY = "config-dir"
    FIELDS = {"old": (True, check_path), "new": (True, check_path), "repo": (False, check_repo),
              "commit": (False, check_commit), **COMMON}
    old: str = ""
    new: str = ""
    repo: str | None = None
    commit: str | None = None


@dataclass(frozen=True)
class ConfigDirRemoval(OtherRepository, Entry):
    KIND = "config-dir-removal"
    FAMILY = "config-dir"
    FIELDS = {"old": (True, check_path), "hint": (True, check_text), "repo": (False, check_repo),
              "commit": (False, check_commit), **COMMON}
    old: str = ""
    hint: str = ""
    repo: str | None = None
    commit: str | None = None


def name_tokens(entry, mappings):
    return (entry.old,)


def dir_tokens(entry, mappings):
    return (entry.old.rstrip("/"),)


def name_row(entry: ConfigNameMove, mappings) -> Row:
    return entry_row(entry, entry.new, "move", None, args=list(entry.args), scope=list(entry.scope))


def dir_move_row(entry: ConfigDirMove, mappings) -> Row:
    return entry_row(entry, entry.new, "move", None, args=[], scope=[])


def dir_removal_row(entry: ConfigDirRemoval, mappings) -> Row:
    return entry_row(entry, None, "removed", entry.hint, args=[], scope=[])


def notes_rows(mappings) -> list[dict]:
    """Each moved or removed config name and directory, as its table states it."""
    return [{"kind": "config name" if e.unit.family is CONFIG_NAME else "config directory", "old": e.old,
             "new": getattr(e, "new", None) or "", "args": list(getattr(e, "args", ())),
             "scope": list(getattr(e, "scope", ())), "hint": getattr(e, "hint", None) or "", "prs": [e.pr]}
            for e in mappings.entries() if e.unit.family in (CONFIG_NAME, CONFIG_DIR)]


CONFIGS = Section(
    "configs", 35, "Moved config names and directories", notes_rows,
    table_section(["Kind", "Old", "New", "Appended", "Applies to", "PR"],
                  lambda w, r: [r["kind"], w.code(r["old"]), w.code(r["new"]) if r["new"] else
                                f"(removed) {w.text(r['hint'])}", " ".join(w.code(a) for a in r["args"]),
                                ", ".join(w.code(s) for s in r["scope"]) or "every launch", links(w, r["prs"])],
                  "A launch's `--config-name` and `--config-path` values; verl-migrate rewrites them where the "
                  "config path is verl's own."),
    "config name or directory change", 100)

CONFIG_NAME_MOVE = EntryKind(
    ConfigNameMove, family=CONFIG_NAME, role=Role.MOVE, rules=(), tokens=name_tokens,
    codes=(Code("VM153", "manual", "moved config name the tool cannot rewrite here: edit by hand"),
           Code("VM154", "info", "verl moved a config of this name, which your own config path or defaults "
                "list may hold a copy of: consider the same move")),
    shown_in=LAUNCHES, row=name_row, notes=CONFIGS, position=710,
    example={"kind": "config-name-move", "old": "old_trainer", "new": "new_trainer", "scope": ["verl.trainer.main"],
             "pr": 22})
CONFIG_DIR_MOVE = EntryKind(
    ConfigDirMove, family=CONFIG_DIR, role=Role.MOVE, rules=(), tokens=dir_tokens,
    codes=(Code("VM156", "manual", "moved config directory the tool cannot rewrite here: edit by hand"),),
    shown_in=LAUNCHES, row=dir_move_row, notes=CONFIGS, position=720,
    example={"kind": "config-dir-move", "old": "recipe/old/config", "new": "recipe/new/config", "pr": 23})
CONFIG_DIR_REMOVAL = EntryKind(
    ConfigDirRemoval, family=CONFIG_DIR, role=Role.REMOVAL, rules=(), tokens=dir_tokens,
    codes=(Code("VM155", "manual", "removed config directory: point `--config-path` elsewhere by hand"),),
    shown_in=LAUNCHES, row=dir_removal_row, notes=CONFIGS, position=721,
    example={"kind": "config-dir-removal", "old": "recipe/gone/config", "hint": "use verl/trainer/config",
             "pr": 24})
