"""The `Rewriter` protocol's answers for a kind with no proof that edits keep a file valid (its `validate`
always runs) and no second look at its edits. A kind's module imports them to be a whole `Rewriter`."""

from __future__ import annotations


def edits_keep_validity(before: bytes, applied) -> bool:
    return False


def review_edits(before: bytes, after: bytes, applied, mappings) -> None:
    return None
