"""One file in, one `FileResult` out: locate the edits, apply them, check the result still parses.

Rewriters only locate spans; here each file becomes a value (changed, unchanged, skipped with a
reason, failed with an error) and one file's failure never stops the run. Nothing is written here:
the engine writes the changed results after the git guard.
"""

from __future__ import annotations

import os
from bisect import bisect_right
from collections import Counter
from dataclasses import dataclass, field

from migrator.codes import BACKED_OUT_EDIT_CODE, finding_code, outcome_code
from migrator.edits import Edit, Finding, SourceNotParsed, apply_edits
from migrator.fileread import read_bytes
from migrator.mapping import MappingSet
from migrator.pulls import pr_name
from migrator.rewrite import load_review, load_rewriter, spec_for

SUPPRESS_MARKER = b"verl-migrate: skip"
BINARY_SNIFF = 8192


@dataclass(frozen=True)
class ReportedFinding:
    """A finding placed in its file, with its rule code (migrator/codes.py)."""

    path: str
    line: int
    col: int
    kind: str
    message: str
    hint: str | None
    prs: tuple[int, ...]
    severity: str
    code: str

    def format(self) -> str:
        """One line, `path:line:col: message (hint) [verl#PR]` (the golden tests' form; the CLI groups)."""
        hint = f" ({self.hint})" if self.hint else ""
        prs = "".join(f" [{pr_name(pr)}]" for pr in self.prs)
        return f"{self.path}:{self.line}:{self.col}: {self.message}{hint}{prs}"


@dataclass(frozen=True)
class AppliedEdit:
    line: int
    kind: str
    message: str
    prs: tuple[int, ...]
    in_comment: bool


@dataclass
class FileResult:
    path: str
    status: str  # "changed" | "unchanged" | "skipped" | "failed"
    reason: str | None = None
    kind: str | None = None
    edits: list[AppliedEdit] = field(default_factory=list)
    findings: list[ReportedFinding] = field(default_factory=list)
    before: bytes | None = field(default=None, repr=False)
    after: bytes | None = field(default=None, repr=False)
    hydra_rejections: int | None = None  # overrides the target's Hydra still rejects (None: not judged)

    @property
    def code(self) -> str | None:
        """The rule code of a skipped or failed file (None when it was processed)."""
        return outcome_code(self.status, self.reason)

    @property
    def edit_counts(self) -> Counter:
        return Counter(e.kind for e in self.edits)


class LineIndex:
    """1-based (line, column) of byte offsets, from the line starts found once per file: each lookup is
    a bisect, so a file with N edits costs O(size + N log N), not O(size * N)."""

    def __init__(self, source: bytes):
        starts = [0]
        find, at = source.find, source.find(b"\n")
        while at != -1:
            starts.append(at + 1)
            at = find(b"\n", at + 1)
        self.starts = starts

    def line(self, offset: int) -> int:
        return bisect_right(self.starts, offset)

    def line_col(self, offset: int) -> tuple[int, int]:
        line = bisect_right(self.starts, offset)
        return line, offset - self.starts[line - 1] + 1


def line_col(source: bytes, offset: int) -> tuple[int, int]:
    """One lookup; for many offsets in one file build a `LineIndex` once."""
    return LineIndex(source[:offset]).line_col(offset)


def _suppressed_lines(source: bytes) -> set[int]:
    if SUPPRESS_MARKER not in source:
        return set()
    return {i + 1 for i, line in enumerate(source.split(b"\n")) if SUPPRESS_MARKER in line}


def sniff_skip_reason(data: bytes) -> str | None:
    """Why a file's bytes are not text we edit, or None."""
    head = data[:BINARY_SNIFF]
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "UTF-16 encoded text is not supported"
    if b"\x00" in head:
        return "binary file"
    return None


def process_file(path: str, display: str, mappings: MappingSet, prefilter=None, data: bytes | None = None,
                 spec=None) -> FileResult:
    """Locate, apply and validate the edits for one file. Never writes; never raises.

    `spec`: the rewriter when the caller already decided it (from the name or the `#!` line)."""
    try:
        return _process(path, display, mappings, prefilter, data, spec)
    except Exception as exc:  # noqa: BLE001 - one file's failure must never stop the run
        return FileResult(display, "failed", reason=f"internal error: {type(exc).__name__}: {exc}")


def _process(path: str, display: str, mappings: MappingSet, prefilter, data: bytes | None, spec) -> FileResult:
    if data is None:
        try:
            data = read_bytes(path)
        except OSError as exc:
            return FileResult(display, "skipped", reason=f"unreadable: {exc.strerror or exc}")
    reason = sniff_skip_reason(data)
    if reason:
        return FileResult(display, "skipped", reason=reason)
    if spec is None:
        head = data[3:200] if data.startswith(b"\xef\xbb\xbf") else data[:200]
        spec = spec_for(os.path.basename(path), head)
    if spec is None:
        return FileResult(display, "skipped", reason="not a file kind verl-migrate rewrites")
    if prefilter is not None and not prefilter(data, spec.kind):
        return FileResult(display, "unchanged", kind=spec.kind)
    rewriter = load_rewriter(spec)
    try:
        located = rewriter.locate(data, mappings, display)
    except SourceNotParsed as exc:
        return FileResult(display, "skipped", reason=str(exc), kind=spec.kind)
    suppressed = _suppressed_lines(data)
    lines = LineIndex(data)

    def keep(offset_start: int, offset_end: int) -> bool:
        if not suppressed:
            return True
        first = lines.line(offset_start)
        last = lines.line(max(offset_start, offset_end - 1))
        return not any(n in suppressed for n in range(first, last + 1))

    edits = [e for e in located.edits if keep(e.start, e.end)]
    findings = [f for f in located.findings if keep(f.offset, f.offset)]
    new, applied, rejected = apply_edits(data, edits)
    rejections = None
    review = load_review(spec) if new != data else None
    if review is not None:  # the rewriter's second look at its result: edits to back out or add
        second = review(data, new, applied, mappings)
        findings.extend(f for f in second.findings if keep(f.offset, f.offset))
        rejections = second.rejections
        added = [e for e in second.added if keep(e.start, e.end)]
        if second.back_out or added:
            kept = [e for e in edits if e not in second.back_out] + added
            new, applied, rejected = apply_edits(data, kept)
    for edit in rejected:
        findings.append(Finding(edit.start, edit.kind, f"overlapping edit not applied: {edit.message}",
                                None, edit.prs, code=BACKED_OUT_EDIT_CODE))
    reported = [ReportedFinding(display, *lines.line_col(f.offset), f.kind, f.message, f.hint, f.prs, f.severity,
                                finding_code(f.kind, f.severity, f.code))
                for f in sorted(findings, key=lambda f: f.offset)]
    applied_report = [AppliedEdit(lines.line(e.start), e.kind, e.message, e.prs, e.in_comment)
                      for e in applied]
    if new == data:
        return FileResult(display, "unchanged", kind=spec.kind, findings=reported, hydra_rejections=rejections)
    try:
        problem = None if _keeps_validity(rewriter, data, applied) else _validate(rewriter, data, new, mappings)
    except SourceNotParsed as exc:
        return FileResult(display, "skipped", reason=str(exc), kind=spec.kind, findings=reported)
    if problem:
        return FileResult(display, "failed", reason=f"left untouched: {problem}", kind=spec.kind, findings=reported)
    return FileResult(display, "changed", kind=spec.kind, edits=applied_report, findings=reported,
                      before=data, after=new, hydra_rejections=rejections)


def _keeps_validity(rewriter, before: bytes, applied: list[Edit]) -> bool:
    """Rewriters whose validation is costly (a `bash -n` process) may prove some edits harmless."""
    proof = getattr(rewriter, "edits_keep_validity", None)
    return proof is not None and proof(before, applied)


def _validate(rewriter, before: bytes, after: bytes, mappings: MappingSet) -> str | None:
    """Rewriters that check the result against the intended changes (YAML) declare it and get the mappings."""
    if getattr(rewriter, "VALIDATE_WITH_MAPPINGS", False):
        return rewriter.validate(before, after, mappings)
    return rewriter.validate(before, after)
