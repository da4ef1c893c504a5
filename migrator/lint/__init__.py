"""`verl-migrate lint`: static checks for verl launch scripts, one module per check.

Each check module registers itself with `registry.check(code, name, severity)` and yields `Problem`s
(byte offsets into the script); the runner places them, applies suppression comments and prints.
See docs/lint.md for every code's meaning.
"""

from __future__ import annotations

from dataclasses import dataclass

from migrator.ghactions import github_command
from migrator.lint.registry import CHECKS, Check

# The check modules, in code order; importing one registers its check.
CHECK_MODULES = ("syntax", "continuation", "keys", "ineffective", "variables", "paths", "hydra_overrides", "mandatory",
                 "manual_steps", "startup",
                 "startup_warnings", "ignored_keys", "components")


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
        return github_command(level, self.path, self.line, self.col, self.code, body)

    def as_dict(self) -> dict:
        out = {"path": self.path, "line": self.line, "col": self.col, "code": self.code,
               "message": self.message, "hint": self.hint, "severity": self.severity}
        if self.override is not None:
            out.update(key=self.key, override=self.override)
        elif self.key is not None:  # about a key no override sets (VM008)
            out.update(key=self.key)
        return out


def load_checks() -> dict[str, Check]:
    import importlib

    for name in CHECK_MODULES:
        importlib.import_module(f"migrator.lint.{name}")
    return dict(sorted(CHECKS.items()))
