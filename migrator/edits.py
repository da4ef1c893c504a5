"""The values that flow from rewriters to the engine: edits to apply and findings to report."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Edit:
    """Replace source bytes [start, end) with `replacement`. `kind` names the entry kind applied."""

    start: int
    end: int
    replacement: bytes
    kind: str
    message: str
    prs: tuple[int, ...] = ()
    in_comment: bool = False


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
class LocateResult:
    edits: tuple[Edit, ...]
    findings: tuple[Finding, ...]


class SourceNotParsed(Exception):
    """The rewriter cannot parse the file reliably; the engine leaves it untouched and reports why."""
