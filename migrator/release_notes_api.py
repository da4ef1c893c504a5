"""The Python API part of the migration guide: names that moved, were renamed or removed, keyword
arguments renamed at call sites, and signature changes a person must make, composed over the range.

Rows are plain dicts (the JSON schema); `release_notes` renders them beside the other kinds.
"""

from __future__ import annotations

from migrator.mapping.compose import MappingSet


def dotted(ref: str) -> str:
    """`pkg.mod:Name` as it is imported: `pkg.mod.Name`."""
    return ref.replace(":", ".")


def symbol_changes(mappings: MappingSet):
    """(old, change) for each symbol a symbol entry names, composed to what it is at the target (new None:
    removed); `mappings show` lists the same."""
    for old in sorted({e.old for e in mappings.entries() if e.FAMILY == "symbol"}):
        change = mappings.symbol(old)
        if change is not None:
            yield old, change


def keyword_changes(mappings: MappingSet):
    """(function, old, change) for each renamed keyword argument, composed (renamed twice: its last name)."""
    for function, old in sorted({(e.function, e.old) for e in mappings.entries() if e.FAMILY == "keyword"}):
        change = mappings.keyword(function, old)
        if change is not None:
            yield function, old, change


def signature_entries(mappings: MappingSet) -> list:
    """Each signature change, as the table states it (the function as named before that release)."""
    return sorted((e for e in mappings.entries() if e.FAMILY == "signature"), key=lambda e: (e.function, e.param))


def python_name_rows(mappings: MappingSet) -> list[dict]:
    return [{"old": old, "new": change.new, "hint": change.hint or _note(change.entries), "prs": list(change.prs)}
            for old, change in symbol_changes(mappings)]


def keyword_rows(mappings: MappingSet) -> list[dict]:
    return [{"function": function, "old": old, "new": change.new, "note": _note(change.entries),
             "prs": list(change.prs)} for function, old, change in keyword_changes(mappings)]


def signature_rows(mappings: MappingSet) -> list[dict]:
    return [{"function": e.function, "param": e.param, "hint": e.hint, "prs": [e.pr]} for e in signature_entries(mappings)]


def _note(entries) -> str:
    return next((e.note for e in reversed(entries) if getattr(e, "note", None)), "")
