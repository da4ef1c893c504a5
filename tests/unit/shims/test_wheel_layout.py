"""Generated shims do not depend on the install layout: run from a wheel-shaped install, where the
tables live in `migrator/_builtin_mappings`, `shims check` finds the committed shims up to date."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from tests.helpers import HANG_GUARD, REPO

REPO = REPO


def wheel_layout(site: Path) -> Path:
    """What `pip install verl_migrate-*.whl` lays out (pyproject's force-include), without building it."""
    shutil.copytree(REPO / "migrator", site / "migrator", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "mappings", site / "migrator" / "_builtin_mappings")
    return site


def run_installed(site: Path, *args: str) -> subprocess.CompletedProcess:
    # -I: isolated (no cwd, no PYTHONPATH, no user site): only the wheel-shaped copy is importable.
    code = f"import sys; sys.path.insert(0, {str(site)!r}); from migrator.cli import main; main()"
    return subprocess.run([sys.executable, "-I", "-c", code, *args], capture_output=True, text=True, timeout=HANG_GUARD,
                          cwd=site, env={"VERL_MIGRATE_NO_CACHE": "1", "PATH": "/usr/bin:/bin"})


def test_committed_shims_are_up_to_date_from_a_wheel_install(tmp_path):
    site = wheel_layout(tmp_path / "site")
    for release in ("v0.8.0", "main"):
        out = tmp_path / release
        shutil.copytree(REPO / "shims" / "verl" / release, out)
        proc = run_installed(site, "shims", "check", "--to", release, "--keys-module", "verl_migrate_keys.py",
                             "--out", str(out))
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "up to date" in proc.stderr
