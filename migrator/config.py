"""`[tool.verl-migrate]` in the target's pyproject.toml: defaults that command-line flags override."""

from __future__ import annotations

import os
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

KNOWN = {"to": str, "from": str, "exclude": list, "table": list, "allow-dirty": bool, "output-format": str,
         "jobs": int}


class ConfigError(Exception):
    pass


def find_pyproject(paths: list[str]) -> Path | None:
    """The nearest pyproject.toml above the common parent of `paths` (black's rule)."""
    if not paths:
        return None
    absolute = [os.path.abspath(p) for p in paths]
    try:
        common = os.path.commonpath(absolute)
    except ValueError:
        return None
    current = Path(common if os.path.isdir(common) else os.path.dirname(common))
    for directory in (current, *current.parents):
        candidate = directory / "pyproject.toml"
        if candidate.is_file():
            return candidate
        if (directory / ".git").exists():
            break
    return None


def load_config(pyproject: Path | None) -> dict:
    if pyproject is None:
        return {}
    try:
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{pyproject}: cannot read [tool.verl-migrate]: {exc}") from None
    section = data.get("tool", {}).get("verl-migrate", {})
    if not isinstance(section, dict):
        raise ConfigError(f"{pyproject}: [tool.verl-migrate] must be a table")
    for key, value in section.items():
        expected = KNOWN.get(key)
        if expected is None:
            raise ConfigError(f"{pyproject}: [tool.verl-migrate]: unknown option {key!r} "
                              f"(known: {', '.join(sorted(KNOWN))})")
        if not isinstance(value, expected) or (expected is list and not all(isinstance(v, str) for v in value)):
            raise ConfigError(f"{pyproject}: [tool.verl-migrate]: {key} must be {expected.__name__}")
    if "table" in section:  # table paths are relative to the pyproject that names them
        section["table"] = [str((pyproject.parent / t).resolve()) for t in section["table"]]
    return section
