"""Find the files to migrate: recurse into directories, honour .gitignore and --exclude, and say
why a path is skipped (symlinks out of the tree, unreadable directories, ...)."""

from __future__ import annotations

import fnmatch
import os
import subprocess
from collections.abc import Iterator
from typing import NamedTuple


class Candidate(NamedTuple):
    # A tuple, not a frozen dataclass: one is made per file, and a tuple is made 3x faster.
    path: str  # what we open
    display: str  # what we print
    skip_reason: str | None = None


SYMLINK_PATH = "is a symlink"  # a PATH given that is one: refused (the engine fails it), never followed
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


def git_toplevel(directory: str) -> str | None:
    try:
        proc = subprocess.run(["git", "-C", directory, "rev-parse", "--show-toplevel"], capture_output=True,
                              text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout.strip() if proc.returncode == 0 and proc.stdout.strip() else None


def _git_ignored(directory: str) -> set[str] | None:
    """Ignored paths under `directory` (relative to it), or None outside a git work tree."""
    if git_toplevel(directory) is None:
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
    seen: set[tuple[int, int]] = set()  # (device, inode): the same file reached twice is processed once
    for given in paths:
        if os.path.islink(given.rstrip("/") or given):  # file or directory, `link/` too: never followed
            target = os.path.realpath(given)
            exists = os.path.exists(target)
            yield Candidate(given, given, f"{SYMLINK_PATH}; pass its target ({target})" if exists
                            else "broken symlink or symlink loop")
            continue
        if os.path.isfile(given):
            st = os.stat(given)
            if (st.st_dev, st.st_ino) not in seen:
                seen.add((st.st_dev, st.st_ino))
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


def _walk(root: str, exclude: tuple[str, ...], seen: set[tuple[int, int]]) -> Iterator[Candidate]:
    """os.walk's top-down order (a directory's files, then its subdirectories), from one scandir per
    directory: the entry types and inodes come with the listing, so a file costs no stat call."""
    ignored = _git_ignored(root) or set()
    errors: list[OSError] = []
    stack = [(root, "")]
    while stack:
        dirpath, rel_dir = stack.pop()
        try:
            device = os.stat(dirpath).st_dev
            with os.scandir(dirpath) as listing:
                entries = sorted(listing, key=lambda e: e.name)
        except OSError as exc:
            errors.append(exc)
            continue
        subdirs = []
        for entry in entries:
            name = entry.name
            rel = f"{rel_dir}/{name}" if rel_dir else name
            try:
                is_dir = entry.is_dir()
            except OSError:
                is_dir = False
            if is_dir:
                if name in ALWAYS_PRUNED or rel in ignored or (exclude and _excluded(rel, exclude)):
                    continue
                if entry.is_symlink():
                    continue  # never follow directory symlinks: they may leave the tree or loop
                subdirs.append((entry.path, rel))
                continue
            if rel in ignored or (exclude and _excluded(rel, exclude)) or \
                    name.startswith((".verl-migrate-", ".verl-migrate.lock")):
                continue
            full = entry.path
            if entry.is_symlink():
                yield from _symlink_candidate(full, full, root)
                continue
            try:
                regular = entry.is_file(follow_symlinks=False)
                identity = (device, entry.inode())
            except OSError as exc:
                yield Candidate(full, full, f"cannot stat: {exc.strerror}")
                continue
            if not regular or identity in seen:
                continue
            seen.add(identity)
            yield Candidate(full, full)
        stack.extend(reversed(subdirs))
    for err in errors:
        yield Candidate(err.filename or root, err.filename or root, f"cannot read directory: {err.strerror}")
