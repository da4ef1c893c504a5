"""What an entry kind is: the `Entry` values a table holds, and the `EntryKind` unit that says everything
about one kind, in one place (the model: django-upgrade's `Fixer`).

An `EntryKind` owns its entry class (whose `FIELDS` are the table fields and their grammar), the
cross-field rules the loader checks, its `Role` in its family's composition across releases, the
literals the prefilter looks for, the finding codes its edits and findings are reported under, its
`mappings show` row and its release-notes section. Each kind module under `migrator/mapping/kinds/`
declares its units; `migrator.mapping.kinds` finds them. `tests/unit/mapping/test_entry_kinds.py`
enumerates every kind and fails when a piece is missing.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from migrator.pulls import pr_url

SEVERITIES = ("manual", "warning", "info")


@dataclass(frozen=True)
class Origin:
    """Where an entry was written: for error messages and for citing the table in reports."""

    file: str
    line: int
    release: str


@dataclass(frozen=True)
class Entry:
    KIND: ClassVar[str] = ""
    # What identifies an entry inside one table (duplicates are errors) and which family it renames in.
    FAMILY: ClassVar[str] = ""
    FIELDS: ClassVar[dict[str, tuple[bool, object]]] = {}  # table field -> (required, check); `a-b` is `a_b`
    unit: ClassVar[EntryKind]  # set when the kind's unit is declared

    pr: int
    origin: Origin
    note: str | None
    # Provenance of machine-drafted entries (`verl-migrate derive`); curated tables leave them out.
    confidence: str | None = None
    evidence: str | None = None
    review: bool = False
    commit: str | None = None  # the verl commit that made the change (short sha), where recorded
    # What shows the entry right where verl's history does not (scripts/prove_tables.py); the no-action
    # kinds and key-scope require it and redeclare it.
    why: str | None = None

    @property
    def identity(self) -> tuple:
        return (self.FAMILY, self.old)

    @property
    def pr_url(self) -> str:
        return pr_url(self.pr)

    def describe(self) -> str:
        return f"{self.KIND} {self.old}"

    def duplicate_name(self) -> str:
        """How a duplicate of this entry in one table is named in the error."""
        return f"old {self.old!r}"


class Role(enum.Enum):
    """What an entry does to the name it is about when its family composes the releases in order."""

    MOVE = "move"  # the name becomes `new`: moves chain across releases (a -> b, b -> c: a -> c)
    REMOVAL = "removal"  # the name is gone: ends the chain; a manual step or a clean-up, with its hint
    NO_ACTION = "no-action"  # known and left alone: stops nothing, edits and reports nothing
    SCOPE = "scope"  # says where the other entries of its release for the same name apply
    REPORT = "report"  # a change a person makes, reported where it provably applies; never an edit
    DEFAULT = "default"  # a default that changed: pinned where a launch relies on it


@dataclass(frozen=True)
class Code:
    """A rule code a kind's findings are reported under (docs/codes.md). `finding`: the finding kind, when
    it is not the entry kind (`key-warn` for a key that is only reported)."""

    code: str
    severity: str
    title: str  # what the rule is about, printed once above its findings
    finding: str | None = None
    explicit: bool = False  # the rewriter sets it itself (`Finding.code`): not found from kind and severity


@dataclass(frozen=True)
class Family:
    """Entries that speak about the same kind of name (keys, paths, modules, ...). `covers(old, name)`:
    does an entry for `old` apply to `name` (exactly, or as a subtree, directory or package)?
    `chains`: a table may not chain renames of this family, nor rename into its own removals."""

    name: str
    covers: Callable[[str, str], bool] = field(default=lambda old, name: name == old, compare=False)
    chains: bool = True
    # Do two entries whose names meet speak about the same thing (a keyword of the same function)?
    same_subject: Callable[[Entry, Entry], bool] = field(default=lambda entry, other: True, compare=False)


@dataclass(frozen=True, eq=False)
class Group:
    """Where `mappings show` lists entries. `rows(mappings)`: composed rows (each a `Row`); None: one row
    per entry, its unit's, in table order. Groups are listed by `position`."""

    name: str
    position: int
    rows: Callable[[Any], list[Row]] | None = None


@dataclass(frozen=True, eq=False)
class GroupChoice:
    """A kind listed in one of several groups, `choose(entry)` says which (a scoped key beside the launches)."""

    groups: tuple[Group, ...]
    choose: Callable[[Any], Group | None]


@dataclass(frozen=True)
class Row:
    """One row of `mappings show` (`fields`, the JSON object) and the entries it stands for."""

    fields: dict
    entries: tuple[Entry, ...]


@dataclass(frozen=True, eq=False)
class Section:
    """A section of the release notes. `rows(mappings)`: its rows (plain dicts, the JSON schema);
    `render(writer, rows)`: its Markdown or reStructuredText parts; `summary`: what a row is called in
    the guide's opening sentence (`moved script`), `always` when the sentence names it even at 0;
    `parent`: a heading the section sits under (its `level` is then 3)."""

    name: str
    position: int
    title: str
    rows: Callable[[Any], list[dict]]
    render: Callable[[Any, list[dict]], list[str]]
    summary: str
    summary_position: int
    always: bool = False
    parent: str | None = None
    parent_intro: Callable[[Any], str] | None = None


class EntryKind:
    """One entry kind, everything about it. Declared once per kind in its module under `kinds/`.

    - `entry`: the class of its entries; `entry.FIELDS` are its table fields, required or not, each with
      the function that checks it (migrator/mapping/fields.py).
    - `rules`: checks over several fields of one entry; each returns the problem or None.
    - `family` and `role`: how it composes across releases (migrator/mapping/compose.py asks the role).
    - `tokens(entry, mappings)`: literals a file must contain for the entry to apply (the prefilter);
      `tokens_before_from`: entries of the releases before --from need them too (entry points gone
      before the release the user named still move); `spelled(entry)`: for code, which splits dotted
      names, the whole names a file must all spell (`verl`, `utils`, `Name`). `token_kinds`: the file
      kinds whose rewriters act on the entry (None: every kind); its tokens send no other kind's file
      to its rewriter.
    - `codes`: the rule codes of its findings, one per severity it reports (and per finding kind it
      reports under, `Code.finding`); a kind that never reports says why in `silent`.
    - `shown_in(entry)`: the `mappings show` group that lists it, and `row(entry, mappings)` its own row
      (for one-row-per-entry groups, and wherever composition leaves it out); `notes`: its release-notes
      section.
    - `example`: a minimal table entry (the YAML mapping), loaded, composed and shown by the kind test.
    """

    def __init__(self, entry: type[Entry], *, family: Family, role: Role, rules: tuple[Callable, ...],
                 tokens: Callable[[Entry, Any], Iterable[str]], codes: tuple[Code, ...],
                 shown_in: Group | GroupChoice | None,
                 row: Callable[[Entry, Any], Row | None], notes: Section, example: dict, position: int,
                 tokens_before_from: bool = False, spelled: Callable[[Entry], Iterable[tuple[str, ...]]] = None,
                 silent: str | None = None, token_kinds: frozenset[str] | None = None):
        if family.name != entry.FAMILY:
            raise ValueError(f"{entry.KIND}: family {family.name!r} is not its entries' {entry.FAMILY!r}")
        if not codes and not silent:
            raise ValueError(f"{entry.KIND}: no codes, and no word on why it reports nothing")
        self.name = entry.KIND
        self.entry = entry
        self.family = family
        self.role = role
        self.rules = rules
        self.tokens = tokens
        self.tokens_before_from = tokens_before_from
        self.token_kinds = token_kinds
        self.spelled = spelled or (lambda entry: ())
        self.codes = codes
        self.silent = silent
        self._shown_in = shown_in
        self.row = row
        self.notes = notes
        self.example = example
        self.position = position
        entry.unit = self

    def __repr__(self) -> str:
        return f"EntryKind({self.name!r})"

    @property
    def fields(self) -> dict[str, tuple[bool, object]]:
        return self.entry.FIELDS

    def problem(self, entry: Entry) -> str | None:
        """The first rule the entry breaks, or None."""
        for rule in self.rules:
            problem = rule(entry)
            if problem:
                return problem
        return None

    def shown_in(self, entry: Entry) -> Group | None:
        """The `mappings show` group that lists this entry (None: only its own row, after the groups)."""
        shown = self._shown_in
        return shown.choose(entry) if isinstance(shown, GroupChoice) else shown

    @property
    def show_groups(self) -> tuple[Group, ...]:
        shown = self._shown_in
        return shown.groups if isinstance(shown, GroupChoice) else (shown,) if shown is not None else ()

    def code(self, severity: str) -> str:
        """The code of this kind's own findings of `severity` (for a finding reported under another kind's
        name, such as a value passed through a shell variable)."""
        return self.finding_codes()[(self.name, severity)].code

    def finding_codes(self) -> dict[tuple[str, str], Code]:
        """(finding kind, severity) -> code, for the findings whose code follows from kind and severity."""
        return {(code.finding or self.name, code.severity): code for code in self.codes if not code.explicit}


# -- rules shared by several kinds -------------------------------------------------------------------

def new_differs(entry) -> str | None:
    return "old and new are the same" if entry.old == entry.new else None
