"""`keyword-rename`: a keyword argument of a verl function (or a class's constructor) was renamed."""

from __future__ import annotations

from dataclasses import dataclass

from migrator.mapping.fields import COMMON, check_identifier, check_symbol, split_symbol
from migrator.mapping.kind import Code, Entry, EntryKind, Family, Group, Role, Row, Section, new_differs
from migrator.mapping.kinds.symbol import API_MISMATCH, PYTHON_API, python_api_intro
from migrator.mapping.presentation import dotted, last_note, links, releases

KEYWORD = Family("keyword", same_subject=lambda entry, other: other.function == entry.function)


@dataclass(frozen=True)
class KeywordRename(Entry):
    """A keyword argument of `function` (`pkg.mod:func`; a class: its constructor) was renamed."""

    KIND = "keyword-rename"
    FAMILY = "keyword"
    FIELDS = {"function": (True, check_symbol), "old": (True, check_identifier), "new": (True, check_identifier),
              **COMMON}
    function: str = ""
    old: str = ""
    new: str = ""

    @property
    def identity(self) -> tuple:
        return (self.FAMILY, self.function, self.old)

    def describe(self) -> str:
        return f"{self.KIND} {self.function}({self.old}=)"


def tokens(entry, mappings):
    return (split_symbol(entry.function)[0],)


def spelled(entry):
    """The function's module components, its name and the keyword: a call must spell them all."""
    module, name = split_symbol(entry.function)
    return ((*module.split("."), name, entry.old),)


def changes(mappings):
    """(function, old, change) for each renamed keyword argument, composed (renamed twice: its last name)."""
    for function, old in sorted({(e.function, e.old) for e in mappings.entries() if e.unit.family is KEYWORD}):
        change = mappings.keyword(function, old)
        if change is not None:
            yield function, old, change


def composed_rows(mappings) -> list[Row]:
    return [Row({"family": "keyword", "function": function, "old": f"{function}({old}=)", "new": f"{change.new}=",
                 "action": "rename", "hint": None, "prs": list(change.prs), "releases": releases(change.entries)},
                change.entries) for function, old, change in changes(mappings)]


KEYWORDS = Group("keyword", 60, composed_rows)


def notes_rows(mappings) -> list[dict]:
    return [{"function": function, "old": old, "new": change.new, "note": last_note(change.entries),
             "prs": list(change.prs)} for function, old, change in changes(mappings)]


def render(w, rows: list[dict]) -> list[str]:
    return [f"Renamed at calls that provably reach the function (and in {w.code('super().__init__(...)')} of a "
            "subclass).\n",
            w.table(["Function", "Old keyword", "New keyword", "PR"],
                    [[w.code(dotted(r["function"])), w.code(r["old"]), w.code(r["new"]), links(w, r["prs"])]
                     for r in rows])]


KEYWORD_RENAMES = Section("keyword_renames", 81, "Renamed keyword arguments", notes_rows, render,
                          "renamed keyword argument", 80, parent=PYTHON_API, parent_intro=python_api_intro)


def row(entry: KeywordRename, mappings) -> Row:
    return Row({"family": "keyword", "function": entry.function, "old": f"{entry.function}({entry.old}=)",
                "new": f"{entry.new}=", "action": "rename", "hint": None, "prs": [entry.pr],
                "releases": [entry.origin.release]}, (entry,))


KEYWORD_RENAME = EntryKind(
    KeywordRename, family=KEYWORD, role=Role.MOVE, rules=(new_differs,), tokens=tokens, spelled=spelled,
    codes=(Code("VM128", "manual", "renamed keyword argument the tool cannot rewrite here: edit by hand"),
           API_MISMATCH),
    shown_in=KEYWORDS, row=row, notes=KEYWORD_RENAMES, position=510,
    example={"kind": "keyword-rename", "function": "verl.utils.a:make", "old": "size", "new": "length", "pr": 15})
