"""Pair renamed Python modules under verl/ and recipe/ (license-only files ignored)."""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from functools import lru_cache

from migrator import history
from migrator.derive.draft import Derivation, Draft
from migrator.derive.prs import PathCommits, lower_confidence, with_pr
from migrator.layout import verl_layout
from migrator.mapping.fields import MODULE_RE


@lru_cache(maxsize=1)
def _package_dirs() -> tuple[str, ...]:
    """`verl/`, `recipe/`: where verl's modules live."""
    layout = verl_layout()
    return layout.directories(layout.packages)


def module_name(path: str) -> str | None:
    if not path.endswith(".py") or not path.startswith(_package_dirs()):
        return None
    dotted = path[:-3].replace("/", ".")
    if dotted.endswith(".__init__"):
        dotted = dotted[: -len(".__init__")]
    return dotted if MODULE_RE.match(dotted) else None


def is_near_empty(content: bytes) -> bool:
    """License headers, docstrings and blank lines only (git pairs such files by mistake)."""
    text = re.sub(rb'("""|\'\'\')(.|\n)*?\1', b"", content)
    code = [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith(b"#")]
    return len(code) <= 2


def public_names(content: bytes) -> set[str] | None:
    """The names a module defines at its top level for others to import (no leading `_`), or None when
    it does not parse."""
    try:
        tree = ast.parse(content)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names if a.name != "*")
    return {n for n in names if not n.startswith("_")}


def _missing_names(old_blob: bytes, new_blob: bytes | None) -> set[str] | None:
    """The old module's public names the new one lacks (empty: it holds them all); None when either does
    not parse or the new one is absent."""
    old = public_names(old_blob)
    new = public_names(new_blob) if new_blob is not None else None
    if old is None or new is None:
        return None
    return old - new


def _judged(confidence: str, missing: set[str] | None, how: str) -> tuple[str, str]:
    """High confidence only where the new module holds every public name of the old (what users import)."""
    if missing is None:
        return lower_confidence(confidence), f"{how}; the new module's names could not be compared"
    if missing:
        shown = ", ".join(sorted(missing)[:5]) + (", ..." if len(missing) > 5 else "")
        return "low", f"{how}; the new module lacks {len(missing)} public name(s) of the old: {shown}"
    return confidence, how


def derive_modules(repo, from_sha, to_sha, result: Derivation, path_commits: PathCommits, fallback):
    rows = [r for r in history.name_status(repo, from_sha, to_sha)
            if r[0] == "R" and module_name(r[1]) and module_name(r[2] or "")]
    if not rows:
        return
    before = history.tree_files(repo, from_sha, _package_dirs())
    after = history.tree_files(repo, to_sha, _package_dirs())
    blobs = history.read_blobs(repo, [before[r[1]] for r in rows if r[1] in before]
                               + [after[r[2]] for r in rows if r[2] in after])
    still_there = {module_name(p) for p in after} - {None}
    moves: dict[str, tuple[str, str, int]] = {}
    missing: dict[str, set[str] | None] = {}
    for _, old, new, score in rows:
        if is_near_empty(blobs.get(before.get(old, ""), b"")):
            continue
        old_mod, new_mod = module_name(old), module_name(new)
        # `a/b.py` -> `a/b/x.py` leaves `a.b` importable as a package: nothing for users to change.
        if old_mod != new_mod and old_mod not in still_there:
            moves[old_mod] = (new_mod, old, score)
            new_blob = blobs.get(after[new]) if new in after else None
            missing[old_mod] = _missing_names(blobs.get(before.get(old, ""), b""), new_blob)
    # A whole package that moved with the same module names: one package-level entry.
    remaining_dirs = {p.rpartition("/")[0] for p in after}
    packages: dict[tuple[str, str], list[str]] = defaultdict(list)
    for old_mod, (new_mod, _old_path, _) in moves.items():
        if old_mod.rsplit(".", 1)[-1] == new_mod.rsplit(".", 1)[-1] and "." in old_mod and "." in new_mod:
            packages[(old_mod.rsplit(".", 1)[0], new_mod.rsplit(".", 1)[0])].append(old_mod)
    done: set[str] = set()
    for (old_pkg, new_pkg), members in sorted(packages.items()):
        old_dir = old_pkg.replace(".", "/")
        if len(members) >= 2 and old_dir not in remaining_dirs and old_pkg not in moves:
            pr, how = path_commits.for_move(moves[members[0]][1], None)
            pr, conf, how = with_pr(pr, how, "high", fallback)
            lacking = [missing.get(m) for m in members]
            unknown = any(m is None for m in lacking)
            conf, how = _judged(conf, None if unknown else set().union(*lacking),
                                f"package moved: {len(members)} modules renamed alike; {how}")
            result.drafts.append(Draft("module-move", old_pkg, {"new": new_pkg}, pr, conf, how, (old_pkg,)))
            done.update(members)
    for old_mod, (new_mod, old_path, score) in sorted(moves.items()):
        if old_mod in done or any(old_mod.startswith(d + ".") for d in done):
            continue
        pr, how = path_commits.for_move(old_path, None)
        pr, conf, how = with_pr(pr, how, "high" if score >= 70 else "medium", fallback)
        conf, how = _judged(conf, missing.get(old_mod), f"git rename detection (similarity {score}%); {how}")
        result.drafts.append(Draft("module-move", old_mod, {"new": new_mod}, pr, conf, how, (old_mod,)))
