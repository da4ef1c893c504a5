"""Help and behaviour agree, and `--help` names pages that exist where pip installed the tool."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

from tests.helpers import REPO, run_cli

try:
    import tomllib
except ImportError:  # pragma: no cover - Python 3.10
    import tomli as tomllib

COMMANDS = ([], ["migrate"], ["lint"], ["mappings", "show"], ["shims", "generate"], ["shims", "check"])
PAGE = re.compile(r"\b([\w-]+\.md) in Docs\b")


def test_mappings_show_offers_no_from_auto_and_says_why_it_takes_none():
    helptext = " ".join(run_cli("mappings", "show", "--help").stdout.split())
    assert "auto" not in helptext
    proc = run_cli("mappings", "show", "--from", "auto")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip() == ("error: --from auto reads the release off the files a run migrates; mappings "
                                   "show reads no files: name a release (--from v0.6.0)")


def pages_named(run) -> dict[str, set[str]]:
    """The Docs folder each command's help names (on a line of its own) -> the pages it names in it."""
    named: dict[str, set[str]] = {}
    for command in COMMANDS:
        out = run(*command, "--help").stdout
        folders = [line.strip()[len("Docs: "):] for line in out.splitlines() if line.strip().startswith("Docs: ")]
        assert len(folders) == 1, (command, out)
        text = re.sub(r"(\w-)\s+", r"\1", " ".join(out.split()))  # click wraps `table-format.md` at its hyphen
        named.setdefault(folders[0], set()).update(PAGE.findall(text))
    return named


def test_help_names_pages_that_exist_in_a_checkout():
    named = pages_named(run_cli)
    assert list(named) == [str(REPO / "docs")]
    assert {"codes.md", "table-format.md", "lint.md"} <= named[str(REPO / "docs")]
    assert all(os.path.isfile(os.path.join(folder, page)) for folder, pages in named.items() for page in pages)


def test_help_names_pages_that_exist_in_a_wheel_install(tmp_path):
    site = tmp_path / "site"
    shutil.copytree(REPO / "migrator", site / "migrator", ignore=shutil.ignore_patterns("__pycache__"))
    force = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["hatch"]["build"]["targets"]["wheel"][
        "force-include"]
    for source, target in force.items():  # what the wheel lays out besides the package
        shutil.copytree(REPO / source, site / target)

    def run(*args):
        code = f"import sys; sys.path.insert(0, {str(site)!r}); from migrator.cli import main; main()"
        return subprocess.run([sys.executable, "-I", "-c", code, *args], capture_output=True, text=True,
                              timeout=300, cwd=tmp_path, env={"VERL_MIGRATE_NO_CACHE": "1", "PATH": "/usr/bin:/bin"})

    named = pages_named(run)
    assert list(named) == [str(site / "migrator" / "_docs")]
    assert all(os.path.isfile(os.path.join(folder, page)) for folder, pages in named.items() for page in pages)


# The tool's own words for its data and passes, which a user never needs to read.
INTERNAL_WORDS = re.compile(r"\bfacts?\b|key-append-prefix|prefilter", re.IGNORECASE)


def test_messages_speak_the_users_words(tmp_path):
    # `+` on a key v0.9.0 declares: the edit that drops it is named as what it does.
    (tmp_path / "run.sh").write_text("python3 -m verl.trainer.main_ppo skip.rollout.enable=True +trainer.total_epochs=2\n")
    (tmp_path / "sft.sh").write_text("torchrun -m verl.trainer.fsdp_sft_trainer data.micro_batch_size=4\n")
    check = run_cli("--from", "v0.8.0", "--to", "v0.9.0", "--check", tmp_path)
    assert "1 plus-dropped)" in check.stderr.splitlines()[-1]
    outputs = [check.stderr, run_cli("--check", "-v", tmp_path).stderr, run_cli("lint", tmp_path).stdout,
               run_cli("mappings", "show", "--to", "main").stdout]
    for text in outputs:
        assert not INTERNAL_WORDS.search(text), INTERNAL_WORDS.search(text)
