"""The values that flow from rewriters to the engine: edits to apply and findings to report."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Edit:
    """Replace source bytes [start, end) with `replacement`. `kind` names the entry kind applied. `unsafe`:
    the edit changes what the run trains (a move to a script that trains something else, a pin of old
    defaults); the engine applies it only with --unsafe-fixes (ruff's unsafe fixes), and reports its findings."""

    start: int
    end: int
    replacement: bytes
    kind: str
    message: str
    prs: tuple[int, ...] = ()
    in_comment: bool = False
    unsafe: Unsafe | None = None


@dataclass(frozen=True)
class Finding:
    """Something a person must look at: a manual step or a warn-only entry. Never an edit."""

    offset: int
    kind: str
    message: str
    hint: str | None = None
    prs: tuple[int, ...] = ()
    severity: str = "manual"  # "manual" (needs a human) | "warning" (warn-only entry) | "info"
    code: str | None = None  # set only where kind and severity do not say it (migrator/codes.py)


@dataclass(frozen=True)
class Unsafe:
    """What an unsafe edit reports: `made` when --unsafe-fixes applies it, `held` when the engine holds it
    back (a person's step that gives the exact edit). The edits of one fix share one `Unsafe`, said once."""

    made: tuple[Finding, ...] = ()
    held: tuple[Finding, ...] = ()

    def placed(self, offset: Callable[[int], int]) -> Unsafe:
        """The same findings at `offset(f.offset)`: where a block's edit lands in the file that holds it."""
        return Unsafe(*(tuple(dataclasses.replace(f, offset=offset(f.offset)) for f in said)
                        for said in (self.made, self.held)))


def placed(edit: Edit, start: int, end: int, offset: Callable[[int], int], replacement: bytes | None = None) -> Edit:
    """`edit` of an embedded block (a docs code block, a notebook cell) moved to [start, end) of the file that
    holds it; `offset` maps the block's offsets to the file's, for the findings of an unsafe edit."""
    return dataclasses.replace(edit, start=start, end=end,
                               replacement=edit.replacement if replacement is None else replacement,
                               unsafe=edit.unsafe and edit.unsafe.placed(offset))


def settle_unsafe(edits: list[Edit], unsafe_fixes: bool) -> tuple[list[Edit], list[Finding]]:
    """(the edits to apply, the findings of the unsafe ones): an unsafe edit only with --unsafe-fixes."""
    kept: list[Edit] = []
    findings: list[Finding] = []
    said: set[Unsafe] = set()
    for edit in edits:
        if edit.unsafe is None or unsafe_fixes:
            kept.append(edit)
        if edit.unsafe is not None and edit.unsafe not in said:
            said.add(edit.unsafe)
            findings.extend(edit.unsafe.made if unsafe_fixes else edit.unsafe.held)
    return kept, findings


@dataclass(frozen=True)
class LocateResult:
    """What a rewriter located. `blocks`: (start, end, language) of code of another file kind inside the file
    (the Python program of a `python3 - <<'PY'` heredoc), which the caller hands to that kind's rewriter: a
    rewriter names no other that names it back."""

    edits: tuple[Edit, ...]
    findings: tuple[Finding, ...]
    blocks: tuple[tuple[int, int, str], ...] = ()


@dataclass(frozen=True)
class Review:
    """A rewriter's second look at its own applied edits (the engine re-applies what is left).

    `back_out`: applied edits to undo (reported in `findings`); `added`: edits to the original source that
    the result showed to be needed; `rejections`: what the target still refuses in the result, for the summary;
    `rejected`: (offset in the original, why the target refuses it) of each key the result still passes and
    the target refuses: a finding there below manual is a manual step (`regraded`)."""

    back_out: tuple[Edit, ...] = ()
    added: tuple[Edit, ...] = ()
    findings: tuple[Finding, ...] = ()
    rejections: int | None = 0  # None: Hydra was not asked (no edit touched a launch's overrides)
    rejected: tuple[tuple[int, str], ...] = ()


def regraded(findings: list[Finding], rejected: tuple[tuple[int, str], ...], code: str) -> list[Finding]:
    """`findings` with each one below manual at a key the target refuses made a manual step (`code`): a
    warn-only "has no effect" on a key Hydra rejects hides a launch that fails."""
    why = dict(rejected)
    return [Finding(f.offset, f.kind, f"{f.message}; {why[f.offset]}", f.hint, f.prs, "manual", code)
            if f.offset in why and f.severity != "manual" else f for f in findings]


class SourceNotParsed(Exception):
    """The rewriter cannot parse the file reliably; the engine leaves it untouched and reports why."""


def apply_edits(source: bytes, edits: list[Edit]) -> tuple[bytes, list[Edit], list[Edit]]:
    """Apply non-overlapping edits; returns (new source, applied, rejected as overlapping)."""
    ordered = sorted(dict.fromkeys(edits), key=lambda e: (e.start, e.end))
    applied, rejected, out, cursor = [], [], [], 0
    for edit in ordered:
        if edit.start < cursor:
            rejected.append(edit)
            continue
        out.append(source[cursor:edit.start])
        out.append(edit.replacement)
        cursor = edit.end
        applied.append(edit)
    out.append(source[cursor:])
    return b"".join(out), applied, rejected
