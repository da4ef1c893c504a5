"""`path-move` and `path-removal`: scripts and repository paths (a directory when `old` ends in `/`)."""

from __future__ import annotations

from dataclasses import dataclass

from migrator.mapping.fields import COMMON, check_args, check_env_presets, check_path, check_text
from migrator.mapping.kind import Code, Entry, EntryKind, Family, Group, Role, Row, Section, new_differs
from migrator.mapping.presentation import entry_row, links, releases, table_section


def covers(old: str, path: str) -> bool:
    return path == old or (old.endswith("/") and path.startswith(old))


PATH = Family("path", covers)
# The finding of a move whose new script trains something else, or is not proven not to (VM103, VM104).
SCRIPT_MOVE_DIFFERS = "script-move-differs"


@dataclass(frozen=True)
class PathMove(Entry):
    KIND = "path-move"
    FAMILY = "path"
    FIELDS = {"old": (True, check_path), "new": (True, check_path), "env": (False, check_env_presets),
              "args": (False, check_args), **COMMON}
    old: str = ""
    new: str = ""
    env: tuple[tuple[str, str], ...] = ()
    args: tuple[str, ...] = ()

    @property
    def is_directory(self) -> bool:
        return self.old.endswith("/")


@dataclass(frozen=True)
class PathRemoval(Entry):
    KIND = "path-removal"
    FAMILY = "path"
    FIELDS = {"old": (True, check_path), "hint": (True, check_text), **COMMON}
    old: str = ""
    hint: str = ""

    @property
    def is_directory(self) -> bool:
        return self.old.endswith("/")


def directory_on_both(entry: PathMove) -> str | None:
    if entry.old.endswith("/") != entry.new.endswith("/"):
        return "a directory move needs a trailing '/' on both old and new"
    return None


def tokens(entry, mappings):
    """A directory always (its files are not listed); a path only when it composes to a change (verl
    may have brought it back)."""
    if entry.old.endswith("/") or mappings.path(entry.old) is not None:
        yield entry.old


def composed_rows(mappings) -> list[Row]:
    rows = []
    for old in sorted(mappings.old_paths()):
        change = mappings.path(old)
        if change is None:
            continue
        rows.append(Row({"family": "path", "old": old, "new": change.new,
                         "action": "move" if change.new else "removed", "hint": change.hint,
                         "env": dict(change.env), "args": list(change.args), "prs": list(change.prs),
                         "releases": releases(change.entries)}, change.entries))
    return rows


PATHS = Group("path", 20, composed_rows)


def moved_row(entry: PathMove, mappings) -> Row:
    return entry_row(entry, entry.new, "move", None, env=dict(entry.env), args=list(entry.args))


def removed_row(entry: PathRemoval, mappings) -> Row:
    return entry_row(entry, None, "removed", entry.hint, env={}, args=[])


def run_command(path: str, env: tuple[tuple[str, str], ...], args: tuple[str, ...]) -> str:
    """How to run a moved script now: env presets, then the script, then extra overrides."""
    return " ".join([*(f"{k}={v}" for k, v in env), "bash", path, *args])


def _changes(mappings):
    for old in sorted(mappings.old_paths()):
        change = mappings.path(old)
        if change is not None:
            yield old, change


def moved_rows(mappings) -> list[dict]:
    return [{"old": old, "new": change.new, "env": dict(change.env), "args": list(change.args),
             "run": run_command(change.new, change.env, change.args), "prs": list(change.prs)}
            for old, change in _changes(mappings) if change.new is not None]


def removed_rows(mappings) -> list[dict]:
    return [{"old": old, "hint": change.hint or "", "prs": list(change.prs)}
            for old, change in _changes(mappings) if change.new is None]


MOVED_SCRIPTS = Section(
    "moved_scripts", 10, "Moved scripts", moved_rows,
    table_section(["Old script", "New script", "Run it now", "PR"],
                  lambda w, r: [w.code(r["old"]), w.code(r["new"]), w.code(r["run"]), links(w, r["prs"])],
                  "Run the new script as shown; environment presets select the variant the old script ran."),
    "moved script", 10, always=True)
REMOVED_SCRIPTS = Section(
    "removed_scripts", 20, "Removed scripts", removed_rows,
    table_section(["Old script", "What to use instead", "PR"],
                  lambda w, r: [w.code(r["old"]), w.text(r["hint"]), links(w, r["prs"])]),
    "removed script", 20, always=True)

PATH_MOVE = EntryKind(
    PathMove, family=PATH, role=Role.MOVE, rules=(directory_on_both, new_differs), tokens=tokens,
    codes=(Code("VM102", "manual", "moved script or path the tool cannot rewrite here: edit by hand"),
           Code("VM103", "manual", "a moved script whose new script is not proven to train what the old one "
                "trained: the move is not made (--unsafe-fixes makes it)", finding=SCRIPT_MOVE_DIFFERS),
           Code("VM104", "warning", "a script moved with --unsafe-fixes onto a script that is not proven to "
                "train what the old one trained", finding=SCRIPT_MOVE_DIFFERS)),
    shown_in=PATHS, row=moved_row, notes=MOVED_SCRIPTS, position=100,
    example={"kind": "path-move", "old": "examples/run_old.sh", "new": "examples/run_new.sh", "pr": 1})
PATH_REMOVAL = EntryKind(
    PathRemoval, family=PATH, role=Role.REMOVAL, rules=(), tokens=tokens,
    codes=(Code("VM101", "manual", "removed script or path: replace it by hand"),),
    shown_in=PATHS, row=removed_row, notes=REMOVED_SCRIPTS, position=101,
    example={"kind": "path-removal", "old": "examples/run_gone.sh", "hint": "use examples/run_new.sh", "pr": 2})
