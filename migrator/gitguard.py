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
    return sorted(dirty_states(paths, staged_ok))


def dirty_states(paths: list[str], staged_ok: bool = False) -> dict[str, str]:
    """`dirty_files` with each file's state in git's words (`file_state`)."""
    if not paths:
        return {}
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
    dirty: dict[str, str] = {}
    for top, members in by_repo.items():
        rel = {os.path.relpath(os.path.realpath(p), top).replace(os.sep, "/"): p for p in members}
        for code, name in _status(repos[top], top, sorted(rel)):
            if name in rel and not (staged_ok and code[1] == " "):
                dirty[rel[name]] = file_state(code)
    return dirty


def _status(repo, top: str, specs: list[str]):
    """(XY code, path relative to `top`) of each changed or untracked file `git status` lists for `specs`."""
    try:
        # Literal pathspecs: a file named `:wip.sh` or `:(glob)y.sh` is that file, not pathspec magic.
        out = repo.git.status("--porcelain=v1", "-z", "--untracked-files=all", "--", *specs,
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
        if item[0] in "RC":
            i += 1  # the rename source follows
        yield item[:2], item[3:]


def file_state(code: str) -> str:
    """Git's porcelain XY code in git's own words: untracked, staged, modified, or staged and modified."""
    if code == "??":
        return "untracked"
    staged, changed = code[0] not in " ?!", code[1] not in " ?!"
    return "staged and modified" if staged and changed else "staged" if staged else "modified"


def dirty_under(paths: list[str], staged_ok: bool = False) -> dict[str, str]:
    """The real path -> state (`file_state`) of every file under `paths` (files or directories) that has
    uncommitted changes, from one `git status` per work tree over the paths as given: cheap enough to ask
    before any file is read. Files inside a submodule of a given directory are not seen here
    (`dirty_files` of the files to write sees them)."""
    import git  # gitpython, loaded only when something may be written

    specs: dict[str, list[str]] = defaultdict(list)
    repos: dict[str, object] = {}
    for path in paths:
        real = os.path.realpath(path)
        top = _work_tree(git, real if os.path.isdir(real) else os.path.dirname(real), repos)
        if top is not None:
            specs[top].append(os.path.relpath(real, top).replace(os.sep, "/"))
    states: dict[str, str] = {}
    for top, members in specs.items():
        for code, name in _status(repos[top], top, sorted(set(members))):
            if not (staged_ok and code[1] == " "):
                states[os.path.join(top, *name.split("/"))] = file_state(code)
    return states


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
