"""Small pieces the kinds' `mappings show` rows and release-notes sections share (migrator/mapping/kinds/).

A release-notes `writer` is the output syntax (Markdown or reStructuredText, migrator/release_notes.py):
`heading`, `table`, `code`, `text`, `link`.
"""

from __future__ import annotations

from migrator.mapping.kind import Entry, Row

REMOVED = "(removed)"


def releases(entries) -> list[str]:
    return [e.origin.release for e in entries]


def prs(entries) -> list:
    """The PRs of the entries, first seen first."""
    return list(dict.fromkeys(e.pr for e in entries))


def links(writer, prs) -> str:
    return ", ".join(writer.link(pr) for pr in prs)


def dotted(ref: str) -> str:
    """`pkg.mod:Name` as it is imported: `pkg.mod.Name`."""
    return ref.replace(":", ".")


def last_note(entries) -> str:
    return next((e.note for e in reversed(entries) if getattr(e, "note", None)), "")


def entry_row(entry: Entry, new: str | None, action: str, hint: str | None = None, **extra) -> Row:
    """A `mappings show` row for one entry as its table states it."""
    old = extra.pop("old") if "old" in extra else entry.old
    fields = {"family": entry.FAMILY, "old": old, "new": new, "action": action,
              "hint": hint, **extra, "prs": [entry.pr], "releases": [entry.origin.release]}
    return Row(fields, (entry,))


def table_section(header: list[str], cells, intro: str | None = None):
    """A section's `render`: an optional intro paragraph, then a table with one row of `cells(writer, row)`
    per row."""
    def render(writer, rows: list[dict]) -> list[str]:
        parts = [intro + "\n"] if intro else []
        parts.append(writer.table(header, [cells(writer, row) for row in rows]))
        return parts
    return render


def entries_of(mappings, *kinds) -> list[Entry]:
    """The range's entries of the given units, in table order."""
    return [e for e in mappings.entries() if e.unit in kinds]
