"""Stable rule codes for everything a run reports, in one code space with the lint (docs/codes.md).

The lint's checks own VM001-VM099 (registered in `migrator/lint/registry.py`). The rewrite's findings
get their code from what they are: the entry kind and the finding's severity, as the kind declares
(`EntryKind.codes`, migrator/mapping/kinds/), or a code the rewriter set itself (`Finding.code`). A file
that was skipped or failed carries its reason as a member of `SkipReason` or `FailureReason`, which holds
the code. Adding a code is one row in its kind (or here) and one row in docs/codes.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import NamedTuple

from migrator.mapping.kinds import codes as kind_codes
from migrator.mapping.kinds import finding_code as kind_finding_code


@dataclass(frozen=True)
class Rule:
    code: str
    title: str  # what the rule is about, printed once above its findings
    severity: str  # "manual" (needs a person) | "warning" | "info" (shown with -v) | "error" (file failed)


# The entry kinds' codes (VM1xx) are declared by each kind (migrator/mapping/kinds/); the rest are here.
RULES: dict[str, Rule] = dict(sorted({
    **{code.code: Rule(code.code, code.title, code.severity) for code in kind_codes().values()},
    **{rule.code: rule for rule in (
        Rule("VM123", "import of verl that does not resolve at the target release: fix it by hand (in lint, a "
                      "hint that names a table's move: `verl-migrate` makes it)", "manual"),
        Rule("VM124", "guarded import (`except ImportError`) that does not resolve at the target release", "info"),
        Rule("VM189", "a name the migrated launch gives selects a component verl registered only after the files' "
                      "release (what the name ran before, a fork's own, is not run)", "warning"),
        Rule("VM191", "edit backed out: it overlapped another edit", "manual"),
        Rule("VM192", "edit backed out or not made: Hydra at the target release would reject it (or nothing reads "
             "it)", "manual"),
        Rule("VM193", "a migrated launch leaves a mandatory value (`???`) unset: verl stops at start-up", "manual"),
        Rule("VM194", "the migrated launch leaves defaults to verl that verl changed since the files' release: "
                      "set the old values to train as before (--unsafe-fixes writes them)", "warning"),
        Rule("VM195", "a setting of the launch trains with another value at the target, and no table entry says why",
             "warning"),
        Rule("VM196", "the launch's config does not compose at one of the releases: what it trains was not compared",
             "info"),
        Rule("VM197", "the migrated launch sets a value Hydra accepts and verl refuses at start-up (a component name "
                      "verl does not register at the target)", "manual"),
        Rule("VM198", "a key the tables only warn about, which Hydra at the target release rejects: the launch "
                      "fails; delete or replace it by hand", "manual"),
        Rule("VM157", "a command runs a module no verl release ships as an entry point (a fork's): "
                      "its keys are left as they are", "info"),
        Rule("VM201", "file not read: unreadable", "error"),
        Rule("VM202", "file not migrated: not UTF-8/ASCII text (binary, UTF-16)", "error"),
        Rule("VM203", "file not migrated: it could not be parsed reliably", "error"),
        Rule("VM204", "file left untouched: the edits would break it (bash -n, compile, YAML load)", "error"),
        Rule("VM205", "file not written (read-only, symlink, changed on disk, I/O error)", "error"),
        Rule("VM206", "file not migrated: internal error (please report it)", "error"),
        Rule("VM207", "path not found, broken symlink or symlink to outside the tree", "error"),
        Rule("VM208", "file not a kind verl-migrate rewrites, or a symlink migrated at its target", "info"),
        Rule("VM301", "--from is newer than the scripts: they use keys or paths gone before it", "warning"),
    )},
}.items()))

# The lint's checks (migrator/lint/, one module each, registered by code): listed here too, so that every
# command can tell a known code from a typo without importing the checks (tests/unit/test_codes.py keeps
# the two in step).
LINT_RULES: dict[str, Rule] = {rule.code: rule for rule in (
    Rule("VM001", "the script does not pass `bash -n`", "error"),
    Rule("VM002", "a `\\` that does not continue the line, or an override that starts a command", "error"),
    Rule("VM003", "a key the target release's config does not have (an override, or a YAML config's key)", "error"),
    Rule("VM005", "a variable the script never assigns", "error"),
    Rule("VM006", "a verl path or module that does not exist at the target release (no table entry removed it)",
         "error"),
    Rule("VM007", "Hydra at the target release rejects the override", "error"),
    Rule("VM008", "a mandatory value (`???`) the launch leaves unset", "error"),
    Rule("VM009", "a manual step the rewrite left in the script, still open", "error"),
    Rule("VM020", "a start-up check of verl's fails on the launch's values", "error"),
    Rule("VM021", "a start-up check of verl's warns on the launch's values", "warning"),
    Rule("VM022", "a key Hydra accepts and verl never reads", "warning"),
    Rule("VM023", "a component name verl does not register at the target release", "error"),
)}

# Codes that were retired when two commands spoke of one problem: still accepted wherever a code is named
# (--select/--ignore, [tool.verl-migrate], `# verl-migrate: ignore ...`), as the code that replaced them.
RETIRED: dict[str, str] = {"VM004": "VM112"}  # the lint's "ineffective key" is the rewrite's warn-only key
# The lint's findings that took the rewrite's code for the same problem, and the code they had before: a
# selection or a suppression comment naming the old code (or a prefix of it) still matches them in lint.
LINT_FORMER: dict[str, str] = {"VM101": "VM006", "VM103": "VM006", "VM121": "VM123", "VM125": "VM123", "VM112": "VM004",
                               "VM111": "VM009"}


def all_codes() -> dict[str, Rule]:
    """Every code either command reports, in code order."""
    return dict(sorted({**LINT_RULES, **RULES}.items()))


BACKED_OUT_EDIT_CODE = "VM191"
HYDRA_BACKED_OUT_CODE = "VM192"  # the shell review's verdict (migrator/rewrite/shell/review.py)
MANDATORY_UNSET_CODE = "VM193"  # the same review, on what the migrated launch leaves `???`
REJECTED_AT_TARGET_CODE = "VM198"  # the same review: a warn-only finding on a key Hydra rejects at the target
FROM_TOO_NEW_CODE = "VM301"
FORK_ENTRY_POINT_CODE = "VM157"  # the shell and YAML rewriters: a fork's entry point keeps its keys

class _Reason:
    """A reason a file was not migrated: its rule code and the words people read (`text`). The code
    comes from the member, never from the words."""

    def __init__(self, code: str, template: str):
        self.code, self.template = code, template

    def text(self, *details: object) -> str:
        return self.template.format(*details)

    def because(self, *details: object) -> Reason:
        """This reason with its words: `SkipReason.UNREADABLE.because("Permission denied")`."""
        return Reason(self, self.text(*details))

    def __reduce_ex__(self, protocol):  # by name: a result crossing a pipe carries no template
        return getattr, (type(self), self.name)


class SkipReason(_Reason, Enum):
    """Why a file was skipped: nothing is wrong with the run."""

    UNREADABLE = "VM201", "unreadable: {}"
    DIRECTORY_UNREADABLE = "VM201", "cannot read directory: {}"
    BINARY = "VM202", "binary file"
    UTF16 = "VM202", "UTF-16 encoded text is not supported"
    NOT_PARSED = "VM203", "{}"  # the rewriter's own words (edits.SourceNotParsed)
    CANNOT_STAT = "VM203", "cannot stat: {}"
    SPECIAL_FILE = "VM203", "not a regular file or directory: {}"  # FIFO, socket, device
    OTHER_FILE_TYPE = "VM203", "not a regular file or directory"
    NO_SUCH_PATH = "VM207", "no such file or directory"
    PARENT_NOT_A_DIRECTORY = "VM207", "no such file or directory (a parent is not a directory)"
    BROKEN_SYMLINK = "VM207", "broken symlink or symlink loop"
    SYMLINK_OUT_OF_TREE = "VM207", "symlink to outside the tree; not written through"
    NOT_A_KIND = "VM208", "not a file kind verl-migrate rewrites"
    SYMLINK_IN_TREE = "VM208", "symlink; its target is migrated where it lives"

    @property
    def status(self) -> str:
        return "skipped"


class FailureReason(_Reason, Enum):
    """Why a file failed: the run exits 3."""

    WOULD_BREAK = "VM204", "left untouched: {}"
    NOT_WRITTEN = "VM205", "could not write: {}"
    INTERNAL_ERROR = "VM206", "internal error: {}: {}"
    WORKER_DIED = "VM206", "worker process died: {}"
    WORKERS_KEEP_DYING = "VM206", "not processed: worker processes keep dying ({})"
    SYMLINK_PATH = "VM206", "is a symlink; pass its target ({})"  # a PATH given that is one: refused, not followed

    @property
    def status(self) -> str:
        return "failed"


class Reason(NamedTuple):
    """What a skipped or failed file carries: the reason (with its code) and the words people read."""

    why: SkipReason | FailureReason
    text: str


PR_URL = "https://github.com/verl-project/verl/pull/{pr}"


def finding_code(kind: str, severity: str, explicit: str | None = None) -> str:
    """The code a rewriter set, else the one the finding's kind declares for its severity (LookupError when
    none does: every finding has its kind's own code)."""
    return explicit or kind_finding_code(kind, severity)


class CodeSelectionError(ValueError):
    pass


def parse_codes(values, known=None) -> tuple[str, ...]:
    """`VM1,VM204` (repeatable) -> ("VM1", "VM204"); a retired code becomes the one that replaced it; a
    prefix that matches no code of either command (`known`: all of them) is an error."""
    known = all_codes() if known is None else known
    prefixes = tuple(dict.fromkeys(p.strip().upper() for v in values for p in v.split(",") if p.strip()))
    unknown = unknown_codes(prefixes, known)
    if unknown:
        raise CodeSelectionError(f"unknown code(s) {', '.join(unknown)} (`verl-migrate rule --all` lists them)")
    return tuple(dict.fromkeys(RETIRED.get(p, p) for p in prefixes))


def unknown_codes(prefixes, known=None) -> list[str]:
    """The prefixes that match no code (nor a retired one)."""
    known = all_codes() if known is None else known
    names = (*known, *RETIRED)
    return [p for p in prefixes if not any(code.startswith(p.strip().upper()) for code in names)]


@dataclass(frozen=True)
class CodeFilter:
    """ruff's rule: a code is reported when a --select prefix matches it (or none was given) and no
    --ignore prefix matches it; the longer matching prefix wins when both do. `lint`: a code also answers
    to the code the lint's findings had before (LINT_FORMER), so old selections keep working."""

    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    lint: bool = False

    def __call__(self, code: str | None) -> bool:
        if code is None:
            return True
        names = (code, LINT_FORMER[code]) if self.lint and code in LINT_FORMER else (code,)
        selected = max((len(p) for p in self.select if any(n.startswith(p) for n in names)),
                       default=None if self.select else 0)
        ignored = max((len(p) for p in self.ignore if any(n.startswith(p) for n in names)), default=None)
        return selected is not None and (ignored is None or selected > ignored)


def suppressed_by(code: str, named: set[str] | frozenset[str], lint: bool = False) -> bool:
    """Does a suppression comment naming `named` silence a finding of `code`? (Retired names count as
    their successor; in lint, a finding's former code counts too.)"""
    names = {RETIRED.get(n, n) for n in named}
    return code in names or (lint and LINT_FORMER.get(code) in named)
