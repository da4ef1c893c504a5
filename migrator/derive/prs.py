"""Which PR made a change: the commit in from..to that removed, renamed or touched a path, and how
sure that makes a draft."""

from __future__ import annotations

from migrator import history


class PathCommits:
    """For each path, the newest commit in from..to that deleted, renamed or touched it (one git log)."""

    def __init__(self, commits: list[history.Commit]):
        self.removed: dict[str, history.Commit] = {}
        self.added: dict[str, history.Commit] = {}
        self.touched: dict[str, history.Commit] = {}
        for commit in commits:  # newest first: keep the first seen
            for status, path, new in commit.changes:
                if status in "DR":
                    self.removed.setdefault(path, commit)
                if status in "AC":
                    self.added.setdefault(path, commit)
                if new:
                    self.added.setdefault(new, commit)
                self.touched.setdefault(path, commit)
                if new:
                    self.touched.setdefault(new, commit)

    def for_move(self, old: str, new: str | None) -> tuple[int | None, str]:
        """(PR, how it was found) for a change that took `old` away (and maybe brought `new`)."""
        commit = self.removed.get(old)
        if commit is not None and commit.pr:
            if new is None or new in commit.paths:
                return commit.pr, f"commit {commit.sha[:9]}"
            return commit.pr, f"commit {commit.sha[:9]} removed it; {new} came from elsewhere"
        other = self.touched.get(old) or (self.added.get(new) if new else None)
        if other is not None and other.pr:
            return other.pr, f"no PR commit removed it; PR of commit {other.sha[:9]} that touched it"
        return None, "no PR commit found"


def lower_confidence(confidence: str) -> str:
    return {"high": "medium", "medium": "low", "low": "low"}[confidence]


def with_pr(draft_pr: int | None, how: str, confidence: str, fallback: int | None) -> tuple[int | None, str, str]:
    if draft_pr is None:
        return fallback, lower_confidence(confidence), f"PR guessed: {how}, took the newest PR in the range"
    if how.startswith("commit "):
        return draft_pr, confidence, how
    return draft_pr, lower_confidence(confidence), how
