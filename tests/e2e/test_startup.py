"""Fast start: --version and --help import no heavy module."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.helpers import HANG_GUARD

HEAVY = ("yaml", "libcst", "tree_sitter", "tree_sitter_bash", "git", "ahocorasick_rs")

PROBE = """
import sys
from migrator.cli import main
sys.argv = ["verl-migrate", {arg!r}]
try:
    main()
except SystemExit:
    pass
heavy = sorted({{m.split(".")[0] for m in sys.modules}} & {heavy!r})
print("HEAVY:" + ",".join(heavy))
"""


@pytest.mark.parametrize("arg", ["--version", "--help"])
def test_version_and_help_import_nothing_heavy(arg):
    proc = subprocess.run([sys.executable, "-c", PROBE.format(arg=arg, heavy=set(HEAVY))],
                          capture_output=True, text=True, timeout=HANG_GUARD)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[-1] == "HEAVY:", lines[-1]
    assert any("verl-migrate" in line for line in lines[:-1])


def test_probe_can_see_a_heavy_import():
    # The probe itself must be able to fail: a command that loads the tables does import yaml.
    code = PROBE.format(arg="--version", heavy=set(HEAVY)).replace("from migrator.cli import main",
                                                                     "import yaml\nfrom migrator.cli import main")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=HANG_GUARD)
    assert proc.stdout.splitlines()[-1] == "HEAVY:yaml"
