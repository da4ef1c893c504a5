"""The Python API part of the migration guide: names that moved, were renamed or removed, keyword
arguments renamed at call sites, and signature changes a person must make, composed over the range.

Rows are plain dicts (the JSON schema); `release_notes` renders them beside the other kinds.
"""

from __future__ import annotations

from migrator.mapping.compose import MappingSet


def dotted(ref: str) -> str:
    """`pkg.mod:Name` as it is imported: `pkg.mod.Name`."""
    return ref.replace(":", ".")


def python_name_rows(mappings: MappingSet) -> list[dict]:
    """Each symbol a symbol entry names, composed to what it is at the target (new None: removed)."""
    rows = []
    for old in sorted({e.old for e in mappings.entries() if e.FAMILY == "symbol"}):
        change = mappings.symbol(old)
        if change is None:
            continue
        rows.append({"old": old, "new": change.new, "hint": change.hint or _note(change.entries),
                     "prs": list(change.prs)})
    return rows


def keyword_rows(mappings: MappingSet) -> list[dict]:
    """Each renamed keyword argument, composed (a keyword renamed twice shows its last name)."""
    rows = []
    for function, old in sorted({(e.function, e.old) for e in mappings.entries() if e.FAMILY == "keyword"}):
        change = mappings.keyword(function, old)
        if change is not None:
            rows.append({"function": function, "old": old, "new": change.new, "note": _note(change.entries),
                         "prs": list(change.prs)})
    return rows


def signature_rows(mappings: MappingSet) -> list[dict]:
    """Each signature change, as the table states it (the function as named before that release)."""
    rows = []
    for e in sorted((e for e in mappings.entries() if e.FAMILY == "signature"), key=lambda e: (e.function, e.param)):
        rows.append({"function": e.function, "param": e.param, "hint": e.hint, "prs": [e.pr]})
    return rows


def _note(entries) -> str:
    return next((e.note for e in reversed(entries) if getattr(e, "note", None)), "")
