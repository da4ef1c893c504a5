"""Find the files to migrate: recurse into directories, honour .gitignore and --exclude, and say
why a path is skipped (symlinks out of the tree, unreadable directories, ...)."""

from __future__ import annotations

import fnmatch
import os
import stat
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass


@dataclass(frozen=True)
class Candidate:
    path: str  # what we open
    display: str  # what we print
    skip_reason: str | None = None


ALWAYS_PRUNED = frozenset({".git", ".hg", ".svn", "__pycache__", ".mypy_cache", ".pytest_cache", ".tox", ".venv",
                           "node_modules"})


def _excluded(rel: str, patterns: tuple[str, ...]) -> bool:
    parts = rel.split("/")
    for pattern in patterns:
        pat = pattern.rstrip("/")
        if fnmatch.fnmatch(rel, pat) or any(fnmatch.fnmatch(p, pat) for p in parts):
            return True
        if fnmatch.fnmatch(rel, pat + "/*"):
            return True
    return False


def _git_toplevel(directory: str) -> str | None:
    try:
        proc = subprocess.run(["git", "-C", directory, "rev-parse", "--show-toplevel"], capture_output=True,
                              text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout.strip() if proc.returncode == 0 and proc.stdout.strip() else None


def _git_ignored(directory: str) -> set[str] | None:
    """Ignored paths under `directory` (relative to it), or None outside a git work tree."""
    if _git_toplevel(directory) is None:
        return None
    try:
        proc = subprocess.run(["git", "-C", directory, "ls-files", "-z", "--others", "--ignored",
                               "--exclude-standard", "--directory", "."], capture_output=True, timeout=120)
    except (OSError, subprocess.SubprocessError):
        return None
    if proc.returncode != 0:
        return None
    return {p.decode("utf-8", "surrogateescape").rstrip("/") for p in proc.stdout.split(b"\0") if p}


def discover(paths: list[str], exclude: tuple[str, ...] = ()) -> Iterator[Candidate]:
    """Every regular file under `paths`, in a stable order; skipped ones carry a reason."""
    seen: set[str] = set()
    for given in paths:
        if os.path.islink(given) and not os.path.isdir(given):
            yield from _symlink_candidate(given, given, os.path.dirname(os.path.abspath(given)) or ".")
            continue
        if os.path.isfile(given):
            real = os.path.realpath(given)
            if real not in seen:
                seen.add(real)
                yield Candidate(given, given)
            continue
        if not os.path.isdir(given):
            yield Candidate(given, given, "no such file or directory")
            continue
        yield from _walk(given, exclude, seen)


def _symlink_candidate(path: str, display: str, root: str) -> Iterator[Candidate]:
    target = os.path.realpath(path)
    if not os.path.exists(target):
        yield Candidate(path, display, "broken symlink or symlink loop")
    elif os.path.commonpath([os.path.realpath(root), target]) != os.path.realpath(root):
        yield Candidate(path, display, "symlink to outside the tree; not written through")
    else:
        yield Candidate(path, display, "symlink; its target is migrated where it lives")


def _walk(root: str, exclude: tuple[str, ...], seen: set[str]) -> Iterator[Candidate]:
    ignored = _git_ignored(root) or set()
    errors: list[OSError] = []
    for dirpath, dirnames, filenames in os.walk(root, onerror=errors.append, followlinks=False):
        rel_dir = os.path.relpath(dirpath, root)
        rel_dir = "" if rel_dir == "." else rel_dir.replace(os.sep, "/")
        kept = []
        for name in sorted(dirnames):
            rel = f"{rel_dir}/{name}" if rel_dir else name
            full = os.path.join(dirpath, name)
            if name in ALWAYS_PRUNED or rel in ignored or _excluded(rel, exclude):
                continue
            if os.path.islink(full):
                continue  # never follow directory symlinks: they may leave the tree or loop
            kept.append(name)
        dirnames[:] = kept
        for name in sorted(filenames):
            rel = f"{rel_dir}/{name}" if rel_dir else name
            if rel in ignored or _excluded(rel, exclude) or name.startswith((".verl-migrate-", ".verl-migrate.lock")):
                continue
            full = os.path.join(dirpath, name)
            display = full
            if os.path.islink(full):
                yield from _symlink_candidate(full, display, root)
                continue
            try:
                st = os.stat(full)
            except OSError as exc:
                yield Candidate(full, display, f"cannot stat: {exc.strerror}")
                continue
            if not stat.S_ISREG(st.st_mode):
                continue
            real = os.path.realpath(full)
            if real in seen:
                continue
            seen.add(real)
            yield Candidate(full, display)
    for err in errors:
        yield Candidate(err.filename or root, err.filename or root, f"cannot read directory: {err.strerror}")
