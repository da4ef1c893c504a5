"""Pull-request references of table entries. A plain int is a verl PR; an entry with `repo:` (verl-recipe)
cites its repository's PR as a `PullRef`, an int that keeps its repository, so everything that carries PR
numbers (findings, release notes) carries it unchanged and only links and labels look at the repository."""

from __future__ import annotations

# Repositories an entry may cite besides verl (`repo:`), with their GitHub path.
REPOSITORIES = {"verl": "verl-project/verl", "verl-recipe": "verl-project/verl-recipe"}


class PullRef(int):
    """PR `number` of `repo` (a key of REPOSITORIES)."""

    repo: str

    def __new__(cls, number: int, repo: str = "verl"):
        ref = super().__new__(cls, number)
        ref.repo = repo
        return ref

    def __eq__(self, other):
        if not isinstance(other, int):
            return NotImplemented
        return int(self) == int(other) and repo_of(other) == self.repo

    def __ne__(self, other):
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __hash__(self):  # equal objects hash equal: PullRef(8) == 8
        return int.__hash__(self)

    def __reduce__(self):
        return PullRef, (int(self), self.repo)


def repo_of(pr) -> str:
    return getattr(pr, "repo", "verl")


def pr_url(pr) -> str:
    return f"https://github.com/{REPOSITORIES[repo_of(pr)]}/pull/{int(pr)}"


def pr_label(pr) -> str:
    """`#123` for verl's PRs, `verl-recipe#8` for another repository's."""
    repo = repo_of(pr)
    return f"#{int(pr)}" if repo == "verl" else f"{repo}#{int(pr)}"


def pr_json(pr):
    """A PR in JSON output: verl's as its number, another repository's as `verl-recipe#8`."""
    return int(pr) if repo_of(pr) == "verl" else pr_label(pr)


def pr_name(pr) -> str:
    """`verl#123`, `verl-recipe#8`: a PR named with its repository."""
    return f"{repo_of(pr)}#{int(pr)}"
