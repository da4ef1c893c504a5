"""The check registry: what a check yields (`Problem`) and how it registers (`@check(code, name, severity)`).

Check modules import this module, never the `migrator.lint` package that imports them.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    """What a check finds: where (byte offset into the script), what, and how to fix it."""

    offset: int
    message: str
    hint: str | None = None
    key: str | None = None  # for a finding about an override: its dotted key, without prefix
    override: str | None = None  # ... and the override as written


@dataclass(frozen=True)
class Check:
    code: str
    name: str
    severity: str  # "error" (the job breaks or misbehaves) | "warning" (the line does nothing)
    run: Callable[..., Iterable[Problem]]
    doc: str


CHECKS: dict[str, Check] = {}


def check(code: str, name: str, severity: str = "error"):
    """Register `run(script) -> Iterable[Problem]` under a stable code."""

    def register(run):
        doc = (sys.modules[run.__module__].__doc__ or "").strip()
        CHECKS[code] = Check(code, name, severity, run, doc)
        return run

    return register
