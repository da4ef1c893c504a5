"""`verl-migrate lint`: static checks for verl launch scripts, one module per check.

Each check module registers itself with `@check(code, name, severity)` and yields `Problem`s
(byte offsets into the script); the runner places them, applies suppression comments and prints.
See docs/lint.md for every code's meaning.
"""

from __future__ import annotations

import sys

from collections.abc import Callable, Iterable
from dataclasses import dataclass

# The check modules, in code order; importing one registers its check.
CHECK_MODULES = ("syntax", "continuation", "keys", "ineffective", "variables", "paths", "hydra_overrides")


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


@dataclass(frozen=True)
class LintFinding:
    """A problem placed in its file; the JSON schema is these fields (`key`/`override` only when set)."""

    path: str
    line: int
    col: int
    code: str
    message: str
    hint: str | None
    severity: str
    key: str | None = None  # set (with `override`) on findings about an override; JSON-only
    override: str | None = None

    def text(self) -> str:
        hint = f" ({self.hint})" if self.hint else ""
        return f"{self.path}:{self.line}:{self.col}: {self.code} {self.message}{hint}"

    def github(self) -> str:
        level = "error" if self.severity == "error" else "warning"
        body = self.message + (f" ({self.hint})" if self.hint else "")
        return (f"::{level} file={_gh_property(self.path)},line={self.line},col={self.col},"
                f"title={self.code}::{_gh_data(body)}")

    def as_dict(self) -> dict:
        out = {"path": self.path, "line": self.line, "col": self.col, "code": self.code,
               "message": self.message, "hint": self.hint, "severity": self.severity}
        if self.override is not None:
            out.update(key=self.key, override=self.override)
        return out


def _gh_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _gh_property(text: str) -> str:
    return _gh_data(text).replace(":", "%3A").replace(",", "%2C")


def load_checks() -> dict[str, Check]:
    import importlib

    for name in CHECK_MODULES:
        importlib.import_module(f"migrator.lint.{name}")
    return dict(sorted(CHECKS.items()))
