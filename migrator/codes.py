"""Stable rule codes for everything a run reports, in one code space with the lint (docs/codes.md).

The lint's checks own VM001-VM099 (registered in `migrator/lint/registry.py`). The rewrite's findings
get their code from what they are: the entry kind and the finding's severity, as the kind declares
(`EntryKind.codes`, migrator/mapping/kinds/), or a code the rewriter set itself (`Finding.code`). A file
that was skipped or failed gets its code from its reason (`OUTCOME_CODES`). Adding a code is one row in
its kind (or here) and one row in docs/codes.md.
"""

from __future__ import annotations

from dataclasses import dataclass

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
        Rule("VM123", "import of verl that does not resolve at the target release (no table entry covers it): "
                      "fix it by hand", "manual"),
        Rule("VM124", "guarded import (`except ImportError`) that does not resolve at the target release", "info"),
        Rule("VM191", "edit backed out: it overlapped another edit", "manual"),
        Rule("VM192", "edit backed out or not made: Hydra at the target release would reject it (or nothing reads "
             "it)", "manual"),
        Rule("VM193", "a migrated launch leaves a mandatory value (`???`) unset: verl stops at start-up", "manual"),
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

BACKED_OUT_EDIT_CODE = "VM191"
HYDRA_BACKED_OUT_CODE = "VM192"  # the shell review's verdict (migrator/rewrite/shell/review.py)
MANDATORY_UNSET_CODE = "VM193"  # the same review, on what the migrated launch leaves `???`
FROM_TOO_NEW_CODE = "VM301"

# (status, how the reason starts) -> code, first match wins; reasons come from discovery, fileprocess
# and the engine's writer.
OUTCOME_CODES: tuple[tuple[str, str, str], ...] = (
    ("skipped", "unreadable", "VM201"),
    ("skipped", "cannot read directory", "VM201"),
    ("skipped", "binary file", "VM202"),
    ("skipped", "UTF-16", "VM202"),
    ("skipped", "not a file kind", "VM208"),
    ("skipped", "symlink; its target", "VM208"),
    ("skipped", "no such file", "VM207"),
    ("skipped", "broken symlink", "VM207"),
    ("skipped", "symlink to outside", "VM207"),
    ("skipped", "", "VM203"),  # SourceNotParsed: the rewriter's own words
    ("failed", "left untouched", "VM204"),
    ("failed", "could not write", "VM205"),
    ("failed", "internal error", "VM206"),
    ("failed", "", "VM206"),
)

PR_URL = "https://github.com/verl-project/verl/pull/{pr}"


def finding_code(kind: str, severity: str, explicit: str | None = None) -> str:
    """The code a rewriter set, else the one the finding's kind declares for its severity (LookupError when
    none does: every finding has its kind's own code)."""
    return explicit or kind_finding_code(kind, severity)


def outcome_code(status: str, reason: str | None) -> str | None:
    """The code of a skipped or failed file, None for changed and unchanged ones."""
    for row_status, start, code in OUTCOME_CODES:
        if status == row_status and (reason or "").startswith(start):
            return code
    return None


class CodeSelectionError(ValueError):
    pass


def parse_codes(values, known) -> tuple[str, ...]:
    """`VM1,VM204` (repeatable) -> ("VM1", "VM204"); a prefix that matches no known code is an error."""
    prefixes = tuple(dict.fromkeys(p.strip().upper() for v in values for p in v.split(",") if p.strip()))
    unknown = [p for p in prefixes if not any(code.startswith(p) for code in known)]
    if unknown:
        raise CodeSelectionError(f"unknown code(s) {', '.join(unknown)} (known: {', '.join(sorted(known))})")
    return prefixes


@dataclass(frozen=True)
class CodeFilter:
    """ruff's rule: a code is reported when a --select prefix matches it (or none was given) and no
    --ignore prefix matches it; the longer matching prefix wins when both do."""

    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()

    def __call__(self, code: str | None) -> bool:
        if code is None:
            return True
        selected = max((len(p) for p in self.select if code.startswith(p)), default=None if self.select else 0)
        ignored = max((len(p) for p in self.ignore if code.startswith(p)), default=None)
        return selected is not None and (ignored is None or selected > ignored)
