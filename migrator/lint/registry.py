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
    # The rewrite's code for the same problem, where the check knows it is one (a path a table entry removed:
    # VM101, as the rewrite says); None: the check's own code. One problem, one code, whichever command finds it.
    code: str | None = None


@dataclass(frozen=True)
class Check:
    code: str
    name: str
    severity: str  # "error" (the job breaks or misbehaves) | "warning" (the line does nothing)
    run: Callable[..., Iterable[Problem]]
    doc: str
    also: tuple[str, ...] = ()  # the other codes its problems may carry (`Problem.code`)

    @property
    def codes(self) -> tuple[str, ...]:
        return (self.code, *self.also)


CHECKS: dict[str, Check] = {}


def check(code: str, name: str, severity: str = "error", also: tuple[str, ...] = ()):
    """Register `run(script) -> Iterable[Problem]` under a stable code (`also`: the rewrite's codes some of
    its problems carry instead)."""

    def register(run):
        doc = (sys.modules[run.__module__].__doc__ or "").strip()
        CHECKS[code] = Check(code, name, severity, run, doc, tuple(also))
        return run

    return register
