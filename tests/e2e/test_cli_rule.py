"""`verl-migrate rule CODE` prints a code's entry of docs/codes.md (ruff's `rule`), from a checkout and from
a wheel-shaped install; `rule --all` lists every code; every code of both commands has an entry with an
example and the fix."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from migrator.codedocs import entries
from migrator.codes import RETIRED, all_codes
from tests.helpers import REPO, run_cli

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def test_every_code_has_an_entry_with_an_example_and_the_fix():
    documented = entries((REPO / "docs" / "codes.md").read_text(encoding="utf-8"))
    assert set(documented) == set(all_codes()) | set(RETIRED)
    for code, text in documented.items():
        assert "\nExample: " in f"\n{text}", f"{code}: no example"
        assert "\nFix: " in f"\n{text}", f"{code}: no fix"


def test_rule_prints_the_entry():
    proc = run_cli("rule", "vm101")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("VM101 (manual): removed script or path")
    assert "Example: `bash examples/ppo_trainer/run_qwen2-7b_megatron.sh`" in proc.stdout and "Fix: " in proc.stdout
    lint = run_cli("rule", "VM005")
    assert lint.returncode == 0 and lint.stdout.startswith("VM005 (error): ") and "Fix: " in lint.stdout
    retired = run_cli("rule", "VM004")
    assert retired.returncode == 0 and retired.stdout.startswith("VM004: retired, now VM112")


@pytest.mark.parametrize("args, message", [(["VM0O1"], "unknown code 'VM0O1'"), ([], "give one CODE"),
                                           (["VM101", "--all"], "give one CODE")])
def test_rule_refuses_what_it_cannot_answer(args, message):
    proc = run_cli("rule", *args)
    assert proc.returncode == 2 and message in proc.stderr and "Traceback" not in proc.stderr


def test_rule_all_lists_every_code():
    proc = run_cli("rule", "--all")
    assert proc.returncode == 0
    listed = [line.split()[0] for line in proc.stdout.splitlines()]
    assert listed == sorted({*all_codes(), *RETIRED})


def test_rule_reads_the_entries_shipped_in_the_wheel(tmp_path):
    """The wheel's force-include puts docs/codes.md beside the package; the checkout's docs/ is not there."""
    include = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["hatch"]["build"]["targets"]["wheel"][
        "force-include"]
    site = tmp_path / "site"
    shutil.copytree(REPO / "migrator", site / "migrator", ignore=shutil.ignore_patterns("__pycache__"))
    for source, target in include.items():
        (site / target).parent.mkdir(parents=True, exist_ok=True)
        (shutil.copytree if (REPO / source).is_dir() else shutil.copyfile)(REPO / source, site / target)
    code = f"import sys; sys.path.insert(0, {str(site)!r}); from migrator.cli import main; main()"
    proc = subprocess.run([sys.executable, "-I", "-c", code, "rule", "VM121"], capture_output=True, text=True,
                          timeout=300, cwd=site, env={"VERL_MIGRATE_NO_CACHE": "1", "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr
    assert "Example: `import verl.models.transformers.qwen2_5_vl`" in proc.stdout
