"""What every fact file under mappings/verl/facts/ says of where it came from, for the scripts that write
and read them (maintainer tools; the package's own readers skip the line too).

A text fact file opens with one line, as pyupgrade's generated data does (`# GENERATED VIA generate-imports`):

    # GENERATED VIA scripts/extract_verl_trees.py from verl v0.9.0 (483b8a009); do not edit

naming the script that wrote it and the verl release (or releases, `v0.1..main`) it read, with that
release's commit. Readers skip lines that start with `#` (.keys, .paths, .tsv: no data line does); a
config blob (verl's own YAML, stored by content) drops its first line when it is this one. A file without
comments (the pickled compositions) carries the same text, without `# GENERATED VIA `, in a field
`generated_via`. scripts/refresh_facts.py runs every writer; mappings/verl/README.md maps files to them.
"""

from __future__ import annotations

import argparse
import re
import subprocess
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
VERL_TABLES = ROOT / "mappings" / "verl"
FACTS = VERL_TABLES / "facts"
MARK = "# GENERATED VIA "
# `main` is the unreleased tip (verl commit 1dda039b9, ...): the one place that names it.
_MAIN_COMMIT = re.compile(r"`main` is the unreleased tip \(verl commit ([0-9a-f]{7,40})")
HEADER = re.compile(r"# GENERATED VIA (?P<script>scripts/[\w-]+\.py) from verl (?P<what>\S+) "
                    r"\((?P<commit>[0-9a-f]{9})\); do not edit\n")


def provenance(script: str, what: str, commit: str) -> str:
    """`scripts/x.py from verl v0.9.0 (483b8a009); do not edit`: the header's text, for a field."""
    return f"scripts/{Path(script).name} from verl {what} ({commit[:9]}); do not edit"


def header(script: str, what: str, commit: str) -> str:
    """The header line (with its newline) of a fact file `script` wrote from verl `what` at `commit`."""
    return MARK + provenance(script, what, commit) + "\n"


def releases() -> list[str]:
    return list(yaml.safe_load((VERL_TABLES / "releases.yaml").read_text(encoding="utf-8"))["releases"])


def main_commit() -> str:
    """The verl commit releases.yaml calls `main`."""
    return _MAIN_COMMIT.search((VERL_TABLES / "releases.yaml").read_text(encoding="utf-8")).group(1)


def revision(release: str) -> str:
    """The git revision of a release: its tag, or `main`'s commit."""
    return main_commit() if release == "main" else release


_SUBJECT_PR = re.compile(r"\(#(\d+)\)\s*$")
_MERGE_PR = re.compile(r"^Merge pull request #(\d+) ")


def git(repo: str, *args: str) -> str:
    """The output of a git command in the clone at `repo` (undecodable bytes replaced)."""
    return subprocess.run(["git", f"--git-dir={repo}", *args], check=True, capture_output=True, text=True,
                          errors="replace").stdout


def pr_of(subject: str) -> int | None:
    """The pull request a commit subject names: a squash `... (#N)` or `Merge pull request #N ...`."""
    m = _SUBJECT_PR.search(subject) or _MERGE_PR.match(subject)
    return int(m.group(1)) if m else None


def commit_of(repo: str, release: str) -> str:
    """The full commit a release names in the verl clone at `repo`."""
    return subprocess.run(["git", "--git-dir", repo, "rev-parse", f"{revision(release)}^{{commit}}"], check=True,
                          capture_output=True, text=True).stdout.strip()


def all_releases() -> str:
    """How a header names a file read from every release: `v0.1..main`."""
    names = releases()
    return f"{names[0]}..{names[-1]}"


def writer_arguments(doc: str, default_out: Path, argv=None) -> argparse.Namespace:
    """`--repo` (verl's git directory) and `--out` (default: the shipped file or directory) of a writer."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--repo", required=True, help="verl's git directory (bare or .git)")
    parser.add_argument("--out", default=str(default_out), type=Path)
    return parser.parse_args(argv)


def data_lines(path: Path) -> list[str]:
    """The lines of a .keys, .paths or .tsv fact file that hold data (not the header, not blank)."""
    return [line for line in path.read_text(encoding="utf-8").splitlines() if line and not line.startswith("#")]
