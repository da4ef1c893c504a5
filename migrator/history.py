"""Read a verl git history for `release-notes`, `derive` and `audit`: revisions, commits, trees, PRs.

Everything reads git objects (commits, trees, blobs), never a work tree, so a bare mirror works.
Every git failure becomes a `HistoryError` whose message a person can act on (the CLI exits 2).
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass

# verl squash-merges PRs as "subject (#1234)".
PR_RE = re.compile(r"\(#(\d+)\)\s*$")


class HistoryError(Exception):
    """A repository or revision problem; str() is the message for the user."""


@dataclass(frozen=True)
class Commit:
    sha: str
    subject: str
    date: str  # committer date, YYYY-MM-DD
    changes: tuple[tuple[str, str, str | None], ...]  # (status letter, path, renamed-to path or None)

    @property
    def pr(self) -> int | None:
        match = PR_RE.search(self.subject)
        return int(match.group(1)) if match else None

    @property
    def paths(self) -> set[str]:
        out = set()
        for _, path, new in self.changes:
            out.add(path)
            if new:
                out.add(new)
        return out


def open_repo(path: str):
    """A gitpython Repo for `path` (a work tree or a bare repository)."""
    import git

    if not os.path.exists(path):
        raise HistoryError(f"{path}: no such directory")
    try:
        return git.Repo(path, search_parent_directories=False)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        raise HistoryError(f"{path}: not a git repository") from None


def _git(repo, *args: str) -> str:
    import git

    try:
        return repo.git.execute(["git", "--git-dir", repo.git_dir, "-c", "core.quotepath=off", *args],
                                strip_newline_in_stdout=False)
    except git.GitCommandError as exc:
        detail = (exc.stderr or "").strip().replace("stderr: ", "").strip("'\n ")
        raise HistoryError(f"git {args[0]} failed: {detail or exc}") from None


def is_shallow(repo) -> bool:
    return os.path.exists(os.path.join(repo.git_dir, "shallow"))


def resolve(repo, rev: str) -> str:
    """The commit sha `rev` names; a clear error for unknown revisions and shallow clones."""
    try:
        return _git(repo, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}").strip()
    except HistoryError:
        pass
    hint = ""
    if is_shallow(repo):
        hint = " (this is a shallow clone: fetch the history with `git fetch --unshallow --tags`)"
    elif not _git(repo, "tag", "--list").strip():
        hint = " (the repository has no tags: `git fetch --tags`)"
    raise HistoryError(f"unknown revision {rev!r} in {repo.git_dir}{hint}")


def has_revision(repo, rev: str) -> bool:
    try:
        resolve(repo, rev)
        return True
    except HistoryError:
        return False


def commits(repo, rev_range: str, paths: tuple[str, ...] = ()) -> list[Commit]:
    """The commits in `rev_range` (newest first) with their changed paths, from ONE `git log` call."""
    out = _git(repo, "log", "-z", "-M", "--name-status", "--format=%x1e%H%x1f%s%x1f%cs", rev_range,
               "--", *paths)
    result = []
    for chunk in out.split("\x1e")[1:]:
        header, _, body = chunk.partition("\x00")
        sha, subject, date = (header.split("\x1f") + ["", ""])[:3]
        changes = tuple((status, path, renamed) for status, path, renamed, _ in
                        _parse_name_status(body.lstrip("\n").split("\x00")))
        result.append(Commit(sha, subject.strip(), date.strip(), changes))
    return result


def subjects(repo, rev: str) -> list[tuple[str, str, str]]:
    """(sha, subject, date) of every commit reachable from `rev`, one `git log` call, no file lists."""
    out = _git(repo, "log", "--format=%H%x1f%s%x1f%cs%x1e", rev)
    rows = []
    for record in out.split("\x1e"):
        record = record.strip("\n")
        if record:
            sha, subject, date = (record.split("\x1f") + ["", ""])[:3]
            rows.append((sha, subject, date))
    return rows


def name_status(repo, old: str, new: str) -> list[tuple[str, str, str | None, int]]:
    """`git diff --name-status -M` between two revisions: (status, path, renamed-to, similarity)."""
    return _parse_name_status(_git(repo, "diff", "-z", "-M", "--name-status", old, new).split("\x00"))


def _parse_name_status(tokens: list[str]) -> list[tuple[str, str, str | None, int]]:
    """`--name-status -z` tokens -> (status letter, path, renamed-to, similarity); a cut-off tail is dropped."""
    rows = []
    i = 0
    while i < len(tokens):
        status = tokens[i].strip()
        if not status:
            i += 1
            continue
        if status[0] in "RC" and i + 2 < len(tokens):
            rows.append((status[0], tokens[i + 1], tokens[i + 2], int(status[1:] or 0)))
            i += 3
        elif status[0] not in "RC" and i + 1 < len(tokens):
            rows.append((status[0], tokens[i + 1], None, 100))
            i += 2
        else:
            break
    return rows


def tree_files(repo, rev: str, prefixes: tuple[str, ...] = ()) -> dict[str, str]:
    """path -> blob sha for every file at `rev` (optionally only under `prefixes`)."""
    out = _git(repo, "ls-tree", "-r", "-z", "--full-tree", rev, "--", *prefixes)
    files = {}
    for record in out.split("\x00"):
        if not record:
            continue
        meta, _, path = record.partition("\t")
        parts = meta.split()
        if len(parts) == 3 and parts[1] == "blob":
            files[path] = parts[2]
    return files


def read_blobs(repo, shas) -> dict[str, bytes]:
    """Blob contents by sha, from one `git cat-file --batch` process."""
    wanted = sorted(set(shas))
    if not wanted:
        return {}
    proc = subprocess.run(["git", "--git-dir", repo.git_dir, "cat-file", "--batch"],
                          input="".join(f"{sha}\n" for sha in wanted).encode(), capture_output=True)
    if proc.returncode != 0:
        raise HistoryError(f"git cat-file failed: {proc.stderr.decode(errors='replace').strip()}")
    out, pos, blobs = proc.stdout, 0, {}
    while pos < len(out):
        end = out.index(b"\n", pos)
        header = out[pos:end].split()
        pos = end + 1
        if len(header) < 3:  # "<sha> missing"
            continue
        size = int(header[2])
        blobs[header[0].decode()] = out[pos:pos + size]
        pos += size + 1
    return blobs


def read_file(repo, rev: str, path: str) -> bytes | None:
    """The file's content at `rev`, or None when it does not exist there."""
    sha = tree_files(repo, rev, (path,)).get(path)
    return read_blobs(repo, [sha]).get(sha) if sha else None


def release_tag(repo, release: str) -> str | None:
    """The revision for a release name, when the repository has it (`main` falls back to HEAD)."""
    if has_revision(repo, f"refs/tags/{release}"):
        return f"refs/tags/{release}"
    return None


def merge_base(repo, base: str, head: str) -> str:
    """Where `head` forked from `base` (what a PR diff compares against)."""
    try:
        return _git(repo, "merge-base", base, head).strip()
    except HistoryError:
        raise HistoryError(f"{base} and {head} share no history"
                           + (" (shallow clone: `git fetch --unshallow`)" if is_shallow(repo) else "")) from None


def dirty_paths(repo, prefixes: tuple[str, ...]) -> list[str]:
    """Uncommitted changes under `prefixes` in the work tree (none for a bare repository)."""
    if repo.bare or repo.working_tree_dir is None:
        return []
    try:
        out = repo.git.status("--porcelain=v1", "-z", "--untracked-files=all", "--", *prefixes)
    except Exception as exc:  # noqa: BLE001 - gitpython raises many kinds; say what git said
        raise HistoryError(f"git status failed: {exc}") from None
    return sorted({item[3:] for item in out.split("\x00") if len(item) > 3})


def files_containing(repo, rev: str, text: str, pathspec: str = "*.py") -> list[str]:
    """Paths at `rev` whose contents contain `text` (fixed string; `git grep`, no work tree needed)."""
    import git

    try:
        out = repo.git.execute(["git", "--git-dir", repo.git_dir, "-c", "core.quotepath=off", "grep", "-l", "-F",
                                text, rev, "--", pathspec], strip_newline_in_stdout=False)
    except git.GitCommandError as exc:
        if exc.status == 1:
            return []  # no match
        raise HistoryError(f"git grep failed: {(exc.stderr or '').strip() or exc}") from None
    return [line.split(":", 1)[1] for line in out.splitlines() if ":" in line]
