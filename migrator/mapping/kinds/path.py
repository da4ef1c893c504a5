"""`path-move` and `path-removal`: scripts and repository paths (a directory when `old` ends in `/`)."""

from __future__ import annotations

from dataclasses import dataclass

from migrator.layout import verl_layout
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


def not_proven_same(change) -> bool:
    """A move of a script the facts do not prove plain (mappings/verl/facts/script-moves.yaml): its new script
    trains something else, or nobody proved it does not. A move with no proof shipped (a user's table, a
    directory) is a plain move, as the table says."""
    return change.new is not None and change.proof is not None and not change.proof.plain


def what_the_new_script_trains(change) -> str:
    """`trains something else: 8 settings differ (data.train_files A -> B; ...)` or `is not proven to train
    ...`: what every place that reports a move not proven the same says (VM103, lint, the shims' stubs)."""
    return change.proof.summary(verl_layout().run_sections_first)


def verdict_fields(change) -> dict:
    """The proof of a move as `mappings show` and the release notes' JSON give it: `verdict` (same, differs,
    unproven; None: no proof shipped), `differences` (key, old, new; data and reward keys first) and
    `unproven` (why not)."""
    proof = getattr(change, "proof", None)
    if change.new is None or proof is None:
        return {"verdict": None, "differences": [], "unproven": []}
    return {"verdict": proof.verdict, "unproven": list(proof.unproven),
            "differences": [{"key": d.key, "old": d.old, "new": d.new}
                            for d in proof.ordered(verl_layout().run_sections_first)]}


def verdict_words(change) -> str:
    """The verdict in a few words: `same`, `differs: 8 settings (data.train_files, ...)`, `unproven (why)`, or
    `not checked` where no proof is shipped (a user's table: the move is made as the table says)."""
    proof = getattr(change, "proof", None)
    if proof is None:
        return "not checked"
    return proof.keys_named(verl_layout().run_sections_first)


def composed_rows(mappings) -> list[Row]:
    rows = []
    for old in sorted(mappings.old_paths()):
        change = mappings.path(old)
        if change is None:
            continue
        rows.append(Row({"family": "path", "old": old, "new": change.new,
                         "action": "move" if change.new else "removed", "hint": change.hint,
                         "env": dict(change.env), "args": list(change.args), **_shown_verdict(change),
                         "prs": list(change.prs), "releases": releases(change.entries)}, change.entries))
    return rows


def _shown_verdict(change) -> dict:
    """`mappings show`'s verdict of a move: `verdict`, and the differences behind it."""
    if change.new is None:
        return {}
    fields = verdict_fields(change)
    fields["verdict_text"] = None if fields["verdict"] is None else verdict_count(change)
    return fields


def verdict_count(change) -> str:
    """`same`, `differs: 8 keys`, `unproven`, as `mappings show` prints it in the move's line."""
    proof = change.proof
    if proof.same is False:
        n = len(proof.differences)
        return f"differs: {n} key{'s' if n != 1 else ''}" + (", a step unproven" if proof.unproven else "")
    return proof.verdict


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
             "run": run_command(change.new, change.env, change.args), **verdict_fields(change),
             "trains": verdict_words(change), "prs": list(change.prs)}
            for old, change in _changes(mappings) if change.new is not None]


def removed_rows(mappings) -> list[dict]:
    return [{"old": old, "hint": change.hint or "", "prs": list(change.prs)}
            for old, change in _changes(mappings) if change.new is None]


MOVED_SCRIPTS = Section(
    "moved_scripts", 10, "Moved scripts", moved_rows,
    table_section(["Old script", "New script", "Run it now", "Trains what the old script trained?", "PR"],
                  lambda w, r: [w.code(r["old"]), w.code(r["new"]), w.code(r["run"]), w.text(r["trains"]),
                                links(w, r["prs"])],
                  "Run the new script as shown. Whether it trains what the old script trained: same (proven: both "
                  "runs' configs composed and compared, with the presets shown), differs (the settings named differ: "
                  "set those you want to keep as overrides, or keep a copy of the old script), unproven, or not "
                  "checked (no proof shipped: a table of your own)."),
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
