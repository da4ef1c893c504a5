"""Refuse to overwrite files with uncommitted changes inside a git work tree (as `cargo fix` does)."""

from __future__ import annotations

import os
from collections import defaultdict


class GitGuardError(Exception):
    pass


def dirty_files(paths: list[str], staged_ok: bool = False) -> list[str]:
    """Those of `paths` that are modified, staged, or untracked in their git work tree. With `staged_ok`,
    a file whose changes are all staged is clean: the index keeps its content, and `git diff` will show
    exactly our edits (what a pre-commit hook needs)."""
    if not paths:
        return []
    import git  # gitpython, loaded only when something is about to be written

    by_repo: dict[str, list[str]] = defaultdict(list)
    repos: dict[str, object] = {}
    top_of: dict[str, str | None] = {}  # directory -> its work tree: one search per directory, not per file
    for path in paths:
        directory = os.path.dirname(os.path.abspath(path))
        if directory not in top_of:
            top_of[directory] = _work_tree(git, directory, repos)
        top = top_of[directory]
        if top is not None:
            by_repo[top].append(path)
    dirty: list[str] = []
    for top, members in by_repo.items():
        repo = repos[top]
        rel = {os.path.relpath(os.path.realpath(p), top).replace(os.sep, "/"): p for p in members}
        try:
            # Literal pathspecs: a file named `:wip.sh` or `:(glob)y.sh` is that file, not pathspec magic.
            out = repo.git.status("--porcelain=v1", "-z", "--untracked-files=all", "--", *sorted(rel),
                                  env={"GIT_LITERAL_PATHSPECS": "1"})
        except Exception as exc:  # noqa: BLE001 - gitpython raises many kinds; say what git said
            raise GitGuardError(f"git status failed in {top}: {exc}") from None
        entries = out.split("\0")
        i = 0
        while i < len(entries):
            item = entries[i]
            i += 1
            if len(item) < 4:
                continue
            code, name = item[:2], item[3:]
            if code[0] in "RC":
                i += 1  # the rename source follows
            if name in rel and not (staged_ok and code[1] == " "):
                dirty.append(rel[name])
    return sorted(set(dirty))


def _work_tree(git, directory: str, repos: dict[str, object]) -> str | None:
    """The real path of the work tree holding `directory` (its repo kept in `repos`), or None outside git."""
    try:
        repo = git.Repo(directory, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        return None  # outside git: nothing to protect the user with, just run
    if repo.bare or repo.working_tree_dir is None:
        return None
    top = os.path.realpath(repo.working_tree_dir)
    repos.setdefault(top, repo)
    return top
