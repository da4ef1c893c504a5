"""`symbol-move`, `symbol-rename` and `symbol-removal`: public Python names of verl (`pkg.mod:Name`).
Module entries carry the names inside them; a symbol's own entry wins over its module's."""

from __future__ import annotations

from dataclasses import dataclass

from migrator.mapping.fields import COMMON, check_symbol, check_symbol_or_name, check_text, split_symbol
from migrator.mapping.kind import Code, Entry, EntryKind, Family, Group, Role, Row, Section
from migrator.mapping.presentation import dotted, entry_row, last_note, links, releases, table_section

SYMBOL = Family("symbol")
MOVED_NAME = Code("VM126", "manual", "moved Python name the tool cannot rewrite here: import it from its new module "
                  "by hand", finding="symbol-move")
# A use the name's target does not support (rewrite/python/api_fit.py): declared by every kind that moves a
# name or renames a keyword, since any of them can leave a call that no longer fits.
API_MISMATCH = Code("VM129", "manual", "a use of a moved Python name (or of a function with a renamed keyword) that "
                    "its target does not support: change this code by hand", finding="api-mismatch")
PYTHON_API = "Python API"  # the heading the Python sections of the release notes sit under


def python_api_intro(w) -> str:
    return (f"For your own Python code that imports verl: verl-migrate rewrites the imports, {w.code('module.Name')} "
            "uses and keyword arguments it can prove, and reports the rest with the guidance shown.\n")


@dataclass(frozen=True)
class SymbolMove(Entry):
    """`old` (`pkg.mod:Name`) is now `new` (`pkg.mod2:Name2`): the module, the name or both changed."""

    KIND = "symbol-move"
    FAMILY = "symbol"
    FIELDS = {"old": (True, check_symbol), "new": (True, check_symbol), "hint": (False, check_text), **COMMON}
    old: str = ""
    new: str = ""
    hint: str | None = None

    @property
    def target(self) -> str:
        return self.new


@dataclass(frozen=True)
class SymbolRename(SymbolMove):
    """A symbol-move written as a rename: `new` may be a bare name (same module)."""

    KIND = "symbol-rename"
    FIELDS = {"old": (True, check_symbol), "new": (True, check_symbol_or_name), "hint": (False, check_text),
              **COMMON}

    @property
    def target(self) -> str:
        return self.new if ":" in self.new else f"{split_symbol(self.old)[0]}:{self.new}"


@dataclass(frozen=True)
class SymbolRemoval(Entry):
    """A public name a module no longer binds, with nothing that replaces it one for one."""

    KIND = "symbol-removal"
    FAMILY = "symbol"
    FIELDS = {"old": (True, check_symbol), "hint": (True, check_text), **COMMON}
    old: str = ""
    hint: str = ""


def target_differs(entry: SymbolMove) -> str | None:
    return "old and new are the same" if entry.old == entry.target else None


def tokens(entry, mappings):
    """The module the name is in (the code that imports it; a launch script naming it has nothing to rewrite)."""
    return (split_symbol(entry.old)[0],)


def spelled(entry):
    """Every name a file must spell for the entry to touch it: the module's components, then the name."""
    module, name = split_symbol(entry.old)
    return ((*module.split("."), name),)


def changes(mappings):
    """(old, change) for each symbol a symbol entry names, composed to what it is at the target (new None:
    removed)."""
    for old in sorted({e.old for e in mappings.entries() if e.unit.family is SYMBOL}):
        change = mappings.symbol(old)
        if change is not None:
            yield old, change


def composed_rows(mappings) -> list[Row]:
    return [Row({"family": "symbol", "old": old, "new": change.new, "action": "move" if change.new else "removed",
                 "hint": change.hint, "prs": list(change.prs), "releases": releases(change.entries)}, change.entries)
            for old, change in changes(mappings)]


SYMBOLS = Group("symbol", 50, composed_rows)


def notes_rows(mappings) -> list[dict]:
    return [{"old": old, "new": change.new, "hint": change.hint or last_note(change.entries), "prs": list(change.prs)}
            for old, change in changes(mappings)]


PYTHON_NAMES = Section(
    "python_names", 80, "Moved, renamed and removed names", notes_rows,
    table_section(["Old name", "New name", "Guidance", "PR"],
                  lambda w, r: [w.code(dotted(r["old"])), w.code(dotted(r["new"])) if r["new"] else "(removed)",
                                w.text(r["hint"]), links(w, r["prs"])]),
    "moved, renamed or removed Python name", 70, parent=PYTHON_API, parent_intro=python_api_intro)


def _moved_row(entry, mappings) -> Row:
    return entry_row(entry, entry.target, "move", entry.hint)


SYMBOL_MOVE = EntryKind(
    SymbolMove, family=SYMBOL, role=Role.MOVE, rules=(target_differs,), tokens=tokens, spelled=spelled,
    codes=(MOVED_NAME, API_MISMATCH), shown_in=SYMBOLS, row=_moved_row, notes=PYTHON_NAMES, position=500,
    example={"kind": "symbol-move", "old": "verl.utils.a:Thing", "new": "verl.utils.b:Thing", "pr": 12})
SYMBOL_RENAME = EntryKind(
    SymbolRename, family=SYMBOL, role=Role.MOVE, rules=(target_differs,), tokens=tokens, spelled=spelled,
    codes=(MOVED_NAME, API_MISMATCH), shown_in=SYMBOLS, row=_moved_row, notes=PYTHON_NAMES, position=501,
    example={"kind": "symbol-rename", "old": "verl.utils.a:old_func", "new": "new_func", "pr": 13})
SYMBOL_REMOVAL = EntryKind(
    SymbolRemoval, family=SYMBOL, role=Role.REMOVAL, rules=(), tokens=tokens, spelled=spelled,
    codes=(Code("VM125", "manual", "removed Python name (function, class): change this code by hand"),),
    shown_in=SYMBOLS, row=lambda entry, mappings: entry_row(entry, None, "removed", entry.hint),
    notes=PYTHON_NAMES, position=502,
    example={"kind": "symbol-removal", "old": "verl.utils.a:gone", "hint": "use verl.utils.b:Thing", "pr": 14})
