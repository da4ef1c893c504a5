"""The shims committed under shims/verl/<release>/ must match what the built-in tables generate.

Regenerate them after changing the tables (see docs/shims.md):
    for d in shims/verl/*/; do python -m migrator shims generate --to "$(basename "$d")" \
        --keys-module verl_migrate_keys.py --out "$d"; done
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.helpers import REPO, run_cli
from tests.helpers.shims import shellcheck

SHIMS = REPO / "shims" / "verl"
RELEASES = sorted(p.name for p in SHIMS.iterdir() if p.is_dir())
REGENERATE = ('for d in shims/verl/*/; do python -m migrator shims generate --to "$(basename "$d")" '
              '--keys-module verl_migrate_keys.py --out "$d"; done')


def tree(root: Path) -> dict[str, tuple[bytes, bool]]:
    return {p.relative_to(root).as_posix(): (p.read_bytes(), os.access(p, os.X_OK))
            for p in sorted(root.rglob("*")) if p.is_file()}


def test_committed_releases_exist():
    assert "v0.8.0" in RELEASES and "main" in RELEASES


@pytest.mark.parametrize("release", RELEASES)
def test_committed_shims_match_the_tables(release, tmp_path):
    out = tmp_path / release
    result = run_cli("shims", "generate", "--to", release, "--keys-module", "verl_migrate_keys.py", "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert tree(SHIMS / release) == tree(out), f"shims/verl/{release} drifted from the tables; run: {REGENERATE}"


def test_committed_shell_stubs_are_shellcheck_clean():
    """Every stub verl would ship, the refusing stubs of moves not proven the same among them, not only the
    fixture stubs of the unit tests."""
    stubs = sorted(str(p) for p in SHIMS.rglob("*.sh"))
    assert any("VERL_MIGRATE_RUN_MOVED" in Path(p).read_text() for p in stubs)
    result = subprocess.run([shellcheck(), "--severity=style", *stubs], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout


def test_check_catches_drift_in_a_copy(tmp_path):
    out = tmp_path / "v0.8.0"
    assert run_cli("shims", "generate", "--to", "v0.8.0", "--keys-module", "verl_migrate_keys.py",
                   "--out", str(out)).returncode == 0
    stub = out / "examples/grpo_trainer/run_qwen3_30b_a3b_mindspeed.sh"
    stub.write_text(stub.read_text().replace("pull/6285", "pull/1"))
    result = run_cli("shims", "check", "--to", "v0.8.0", "--keys-module", "verl_migrate_keys.py", "--out", str(out))
    assert result.returncode == 1 and "edited" in result.stdout
