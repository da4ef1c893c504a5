"""Shared helpers: the fixed core test table, and running the real CLI in a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
CORE_TABLE = FIXTURES / "tables" / "core.yaml"


@pytest.fixture(scope="session")
def core_mappings():
    """Only the fixed test table (the built-in tables are composed from main to main: not at all)."""
    from migrator.mapping import compose, load_builtin

    return compose(load_builtin(), "main", "main", [CORE_TABLE])


def run_cli(*args, cwd=None, env=None, input=None) -> subprocess.CompletedProcess:
    full_env = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "-m", "migrator", *map(str, args)], cwd=cwd, env=full_env,
                          capture_output=True, text=True, input=input, timeout=300)
