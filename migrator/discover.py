"""Find the files to migrate: recurse into directories, honour .gitignore and --exclude, and say
why a path is skipped (symlinks out of the tree, unreadable directories, ...)."""

from __future__ import annotations

import fnmatch
import operator
import os
import re
import stat
import subprocess
from collections.abc import Iterator
from typing import NamedTuple

from migrator.codes import FailureReason, Reason, SkipReason


class Candidate(NamedTuple):
    # A tuple, not a frozen dataclass: one is made per file, and a tuple is made 3x faster.
    path: str  # what we open
    display: str  # what we print
    skip: Reason | None = None  # why discovery already settled it (a failure for a PATH that is a symlink)


# `.hydra`: the record Hydra writes of each run (outputs/DATE/TIME/.hydra/config.yaml), not a config anyone loads.
ALWAYS_PRUNED = frozenset({".git", ".hg", ".svn", "__pycache__", ".mypy_cache", ".pytest_cache", ".tox", ".venv",
                           "node_modules", ".hydra"})


class ExcludeMatcher:
    """`--exclude` patterns for one walked root. A relative pattern matches the path relative to that
    root, or any one of its parts (`vendor` skips every `vendor/`); an absolute one matches the absolute
    path (the command line anchors its patterns at the current directory, pyproject's at its directory).
    In both, `*` stays within one path part and `**` crosses parts (`**/vendor`, `tree/**/gen_*.sh`)."""

    def __init__(self, patterns: tuple[str, ...], root: str):
        self.root = os.path.abspath(root)
        self.relative, self.absolute = [], []
        for pattern in patterns:
            pattern = pattern.rstrip("/") or pattern
            if os.path.isabs(pattern):
                self.absolute.append(glob_regex(os.path.normpath(pattern)))
            else:
                pattern = os.path.normpath(pattern) if pattern not in (".", "") else pattern
                self.relative.append((pattern, glob_regex(pattern)))

    def __bool__(self) -> bool:
        return bool(self.relative or self.absolute)

    def __call__(self, rel: str) -> bool:
        parts = rel.split("/")
        for pattern, regex in self.relative:
            # fnmatch's `*` also crosses `/`: kept, so patterns written for it still match.
            if fnmatch.fnmatch(rel, pattern) or regex.match(rel) or any(fnmatch.fnmatch(p, pattern) for p in parts):
                return True
        if self.absolute:
            full = f"{self.root}/{rel}"
            return any(regex.match(full) for regex in self.absolute)
        return False


def anchor_patterns(patterns, base: str) -> tuple[str, ...]:
    """Each pattern as given (relative to each walked root) and, if relative, also anchored at `base`."""
    anchored: list[str] = []
    for pattern in patterns:
        anchored.append(pattern)
        if not os.path.isabs(pattern):
            anchored.append(os.path.normpath(os.path.join(os.path.abspath(base), pattern)))
    return tuple(anchored)


def glob_regex(pattern: str) -> re.Pattern:
    """A glob as a regex over `/`-separated paths: `*`, `?`, `[...]` within a part, `**` across parts."""
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        elif pattern[i] == "[" and "]" in pattern[i + 2:]:
            end = pattern.index("]", i + 2)
            body = pattern[i + 1:end]
            out.append("[" + ("^" + body[1:] if body.startswith("!") else body).replace("\\", "\\\\") + "]")
            i = end + 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out) + r"\Z", re.DOTALL)


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
    """Every regular file under `paths`, in a stable order; skipped ones carry a reason. The tool's own
    cache directory is never walked into (`verl-migrate ~` must not rewrite the cached config trees)."""
    seen: set[tuple[int, int]] = set()  # (device, inode): the same file reached twice is processed once
    own = _own_cache()
    for given in paths:
        if os.path.islink(given.rstrip("/") or given):  # file or directory, `link/` too: never followed
            target = os.path.realpath(given)
            exists = os.path.exists(target)
            # a PATH given that is one: refused (the rewrite fails it), never followed
            yield Candidate(given, given, FailureReason.SYMLINK_PATH.because(target) if exists
                            else SkipReason.BROKEN_SYMLINK.because())
            continue
        if os.path.isfile(given):
            st = os.stat(given)
            if (st.st_dev, st.st_ino) not in seen:
                seen.add((st.st_dev, st.st_ino))
                yield Candidate(given, given)
            continue
        if not os.path.isdir(given):
            yield Candidate(given, given, path_problem(given) or SkipReason.OTHER_FILE_TYPE.because())
            continue
        yield from _walk(given, exclude, seen, own)


FILE_TYPES = ((stat.S_ISFIFO, "FIFO"), (stat.S_ISSOCK, "socket"), (stat.S_ISCHR, "character device"),
              (stat.S_ISBLK, "block device"))


def path_problem(path: str) -> Reason | None:
    """Why a path given on the command line cannot be migrated, or None when it can (or is a symlink)."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return SkipReason.NO_SUCH_PATH.because()
    except NotADirectoryError:
        return SkipReason.PARENT_NOT_A_DIRECTORY.because()
    except OSError as exc:
        return SkipReason.CANNOT_STAT.because(exc.strerror)
    for is_type, name in FILE_TYPES:
        if is_type(mode):
            return SkipReason.SPECIAL_FILE.because(name)
    return None


def _symlink_candidate(path: str, display: str, root: str) -> Iterator[Candidate]:
    target = os.path.realpath(path)
    if not os.path.exists(target):
        yield Candidate(path, display, SkipReason.BROKEN_SYMLINK.because())
    elif os.path.commonpath([os.path.realpath(root), target]) != os.path.realpath(root):
        yield Candidate(path, display, SkipReason.SYMLINK_OUT_OF_TREE.because())
    else:
        yield Candidate(path, display, SkipReason.SYMLINK_IN_TREE.because())


_name = operator.attrgetter("name")
_candidate = tuple.__new__  # `Candidate(a, b)` runs a Python `__new__`: once per file of the tree


def _own_cache() -> tuple[int, int] | None:
    """(device, inode) of the cache directory (`migrator.cache.configured_root`), when it exists."""
    from migrator.cache import configured_root

    where = configured_root()
    return _identity(str(where)) if where is not None else None


def _identity(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def _walk(root: str, exclude: tuple[str, ...], seen: set[tuple[int, int]],
          own: tuple[int, int] | None = None) -> Iterator[Candidate]:
    """os.walk's top-down order (a directory's files, then its subdirectories), from one scandir per
    directory: the entry types and inodes come with the listing, so a file costs no stat call. `own`:
    (device, inode) of a directory never walked into."""
    ignored = _git_ignored(root) or set()
    excluded = ExcludeMatcher(exclude, root)
    # Most walks skip nothing by path: then no entry's relative path need be spelled (a tenth of the walk).
    by_path = bool(ignored) or bool(excluded)
    errors: list[OSError] = []
    if own is not None and _identity(root) == own:
        return  # the root itself is the cache
    stack = [(root, "")]
    while stack:
        dirpath, rel_dir = stack.pop()
        try:
            device = os.stat(dirpath).st_dev
            with os.scandir(dirpath) as listing:
                entries = sorted(listing, key=_name)
        except OSError as exc:
            errors.append(exc)
            continue
        subdirs = []
        for entry in entries:
            name = entry.name
            rel = (f"{rel_dir}/{name}" if rel_dir else name) if by_path else ""
            try:
                is_dir = entry.is_dir()
            except OSError:
                is_dir = False
            if is_dir:
                if name in ALWAYS_PRUNED or (by_path and (rel in ignored or (excluded and excluded(rel)))):
                    continue
                if entry.is_symlink():
                    continue  # never follow directory symlinks: they may leave the tree or loop
                if own is not None and own[0] == device and own[1] == entry.inode():
                    continue
                subdirs.append((entry.path, rel))
                continue
            if (by_path and (rel in ignored or (excluded and excluded(rel)))) or \
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
                yield Candidate(full, full, SkipReason.CANNOT_STAT.because(exc.strerror))
                continue
            if not regular or identity in seen:
                continue
            seen.add(identity)
            yield _candidate(Candidate, (full, full, None))
        stack.extend(reversed(subdirs))
    for err in errors:
        yield Candidate(err.filename or root, err.filename or root, SkipReason.DIRECTORY_UNREADABLE.because(err.strerror))
