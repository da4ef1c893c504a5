"""Real git repositories for command-line tests: scripts that need migrating, committed and clean."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from tests.helpers import CORE_TABLE, FIXTURES, HANG_GUARD

# Only the fixed core table: what changes does not depend on the built-in tables.
CORE = ["--from", "main", "--to", "main", "--table", str(CORE_TABLE)]
OLD_SCRIPT = FIXTURES / "shell" / "backslash_list.in.sh"
NEW_SCRIPT = FIXTURES / "shell" / "backslash_list.out.sh"


def git(repo: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(repo)}
    proc = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, env=env, timeout=HANG_GUARD)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def committed_repo(root: Path, files: dict[str, Path | bytes]) -> Path:
    """A git repository at `root` with `files` (copied from a Path, or bytes) committed: a clean tree."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    for name, source in files.items():
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(source, Path):
            shutil.copy(source, target)
        else:
            target.write_bytes(source)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "scripts")
    return root


def snapshot(tree: Path) -> dict[str, bytes]:
    return {p.relative_to(tree).as_posix(): p.read_bytes() for p in sorted(tree.rglob("*"))
            if p.is_file() and ".git" not in p.relative_to(tree).parts}
