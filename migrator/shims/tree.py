"""Write generated shims into a directory (a verl checkout or --out DIR) and check them there.

Safety: a file without the generated marker is a real file and is never overwritten or removed;
nothing is written outside the root (every existing parent is resolved and must stay inside it,
and the file itself must not be a symlink). Generated files that the tables no longer call for
(expired by the deprecation policy) are removed when their content hash shows no hand edits, and
only at paths the tables define (`ShimPlan.owned`): never a keys module, a `generate --out` folder
or anything in a submodule, whatever header those carry.
"""

from __future__ import annotations

import os
import re
import stat

from dataclasses import dataclass
from pathlib import Path

from migrator.atomic import replace_atomically
from migrator.shims.model import MARKER_WINDOW, GeneratedFile, ShimPlan, read_seal



class UnsafePath(Exception):
    """Writing this path could escape the root or follow a symlink."""


@dataclass(frozen=True)
class Outcome:
    relpath: str
    status: str  # created|updated|unchanged|removed|skipped|refused  (install)  ok|missing|stale|edited|blocked|extra (check)
    reason: str = ""

    @property
    def is_problem(self) -> bool:
        return self.status in ("refused", "missing", "stale", "edited", "blocked", "extra")

    def line(self) -> str:
        return f"{self.status:<9} {self.relpath}" + (f": {self.reason}" if self.reason else "")


def resolve_inside(root: Path, relpath: str) -> Path:
    """The path of `relpath` under `root`, after checking that no existing part leads outside it."""
    parts = relpath.split("/")
    if relpath.startswith("/") or any(p in ("", ".", "..") for p in parts):
        raise UnsafePath(f"{relpath!r} is not a plain relative path")
    real_root = root.resolve()
    current = root
    for part in parts[:-1]:
        current = current / part
        if not os.path.lexists(current):
            continue
        real = current.resolve()
        if real != real_root and real_root not in real.parents:
            raise UnsafePath(f"{current} leads outside {root} (to {real})")
        if not real.is_dir():
            raise UnsafePath(f"{current} is not a directory")
    target = current / parts[-1]
    if target.is_symlink():
        raise UnsafePath(f"{target} is a symlink; not writing through it")
    if target.exists() and not target.is_file():
        raise UnsafePath(f"{target} exists and is not a regular file")
    return target


def write_new(path: Path, content: bytes, mode: int) -> None:
    """Write `path` in one rename (creating parent directories), with `mode`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    replace_atomically(str(path), content, mode)


def _head(path: Path) -> bytes:
    with open(path, "rb") as fh:
        return fh.read(MARKER_WINDOW)


def generated_files(root: Path, owned: frozenset[str]) -> dict[str, Path]:
    """The files at stub paths the tables define (`ShimPlan.owned`) that carry the generated marker,
    outside submodules and nested repositories, reached without following a symlink out of `root`.
    Nothing else is ever ours to remove, whatever header it has."""
    found = {}
    submodules = nested_repositories(root)
    for relpath in sorted(owned):
        try:
            path = resolve_inside(root, relpath)
            if not stat.S_ISREG(os.lstat(path).st_mode) or read_seal(_head(path)) is None:
                continue
        except (UnsafePath, OSError):
            continue
        if _in_nested_repository(root, relpath, submodules) is None:
            found[relpath] = path
    return found


def nested_repositories(root: Path) -> list[str]:
    """Submodule paths from `.gitmodules`: another repository's files, never ours to write."""
    try:
        text = (root / ".gitmodules").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return []
    # Blanks within the line only (`[^\S\n]`): `\s*` ran over blank lines from every line start.
    return [m.group(1).strip().strip("/") for m in re.finditer(r"^[^\S\n]*path[^\S\n]*=[^\S\n]*(.+)$", text, re.M)]


def _in_nested_repository(root: Path, relpath: str, submodules: list[str]) -> str | None:
    for sub in submodules:
        if relpath.startswith(sub + "/"):
            return sub
    parts = relpath.split("/")[:-1]
    for n in range(1, len(parts) + 1):
        if os.path.lexists(root.joinpath(*parts[:n], ".git")):
            return "/".join(parts[:n])
    return None


def wanted(plan: ShimPlan, root: Path, require_targets: bool) -> tuple[list[GeneratedFile], list[str]]:
    """The files to have under `root`. For a checkout (`require_targets`): only shims whose target
    exists there, and none inside a git submodule or nested repository."""
    if not require_targets:
        return list(plan.files), []
    keep, notes = [], []
    submodules = nested_repositories(root)
    for f in plan.files:
        nested = _in_nested_repository(root, f.relpath, submodules)
        if nested is not None:
            notes.append(f"{f.relpath}: no stub: {nested}/ is a git submodule or nested repository")
            continue
        if f.requires and not any(_exists_inside(root, r) for r in f.requires):
            notes.append(f"{f.relpath}: no stub: its target {f.new} is not in {root} "
                         "(is the checkout at the release you passed as --to?)")
            continue
        keep.append(f)
    return keep, notes


class CheckoutPaths:
    """The files of a checkout, as a container (`"verl/x/__init__.py" in paths`), read lazily."""

    def __init__(self, root: Path):
        self.root = root

    def __contains__(self, relpath: str) -> bool:
        return _exists_inside(self.root, relpath)

    def __bool__(self) -> bool:
        return True


def _exists_inside(root: Path, relpath: str) -> bool:
    try:
        return resolve_inside(root, relpath).is_file()
    except UnsafePath:
        return False


def install(plan: ShimPlan, root: Path, require_targets: bool) -> tuple[list[Outcome], list[str]]:
    """Create missing shims, update ones we generated, remove expired ones; refuse real files."""
    files, notes = wanted(plan, root, require_targets)
    outcomes = []
    names = {f.relpath for f in files}
    for f in files:
        try:
            path = resolve_inside(root, f.relpath)
        except UnsafePath as exc:
            outcomes.append(Outcome(f.relpath, "refused", str(exc)))
            continue
        if path.exists():
            data = path.read_bytes()
            if read_seal(data[:MARKER_WINDOW]) is None:
                outcomes.append(Outcome(f.relpath, "refused", "a real file (no verl-migrate header) is there"))
                continue
            if data == f.content and stat.S_IMODE(path.stat().st_mode) == f.mode:
                outcomes.append(Outcome(f.relpath, "unchanged"))
                continue
            stored, actual = read_seal(data)  # type: ignore[misc]
            why = "hand edits discarded" if stored != actual else ""
            write_new(path, f.content, f.mode)
            outcomes.append(Outcome(f.relpath, "updated", why))
            continue
        write_new(path, f.content, f.mode)
        outcomes.append(Outcome(f.relpath, "created"))
    for relpath, path in sorted(generated_files(root, plan.owned).items()):
        if relpath in names:
            continue
        stored, actual = read_seal(path.read_bytes())  # type: ignore[misc]
        if stored != actual:
            outcomes.append(Outcome(relpath, "refused", "no longer generated (expired or gone from the tables) "
                                                        "but hand-edited: delete it yourself"))
            continue
        path.unlink()
        outcomes.append(Outcome(relpath, "removed", "no longer generated (expired or gone from the tables)"))
    return outcomes, notes


def check(plan: ShimPlan, root: Path, require_targets: bool) -> tuple[list[Outcome], list[str]]:
    """Compare `root` with the plan: missing, stale, hand-edited, blocked and leftover shims."""
    files, notes = wanted(plan, root, require_targets)
    outcomes = []
    names = {f.relpath for f in files}
    for f in files:
        path = root / f.relpath
        if path.is_symlink() or (path.exists() and not path.is_file()):
            outcomes.append(Outcome(f.relpath, "blocked", "not a regular file"))
            continue
        if not path.exists():
            outcomes.append(Outcome(f.relpath, "missing"))
            continue
        data = path.read_bytes()
        seal = read_seal(data)
        if seal is None:
            outcomes.append(Outcome(f.relpath, "blocked", "a real file (no verl-migrate header) is there"))
        elif seal[0] != seal[1]:
            outcomes.append(Outcome(f.relpath, "edited", "content does not match its header hash"))
        elif data != f.content:
            outcomes.append(Outcome(f.relpath, "stale", "differs from what the tables generate now"))
        elif f.mode & 0o111 and not os.access(path, os.X_OK):
            outcomes.append(Outcome(f.relpath, "stale", "not executable"))
        else:
            outcomes.append(Outcome(f.relpath, "ok"))
    for relpath in sorted(set(generated_files(root, plan.owned)) - names):
        outcomes.append(Outcome(relpath, "extra", "generated earlier, no longer called for by the tables"))
    return outcomes, notes
