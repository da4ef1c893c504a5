"""Shared helpers for the rewriter tests: the composed test mappings and check_transformed/check_noop."""

from __future__ import annotations

from functools import lru_cache

from migrator.fileprocess import process_file
from migrator.mapping import compose
from migrator.mapping.load import load_release_index
from tests.helpers import FIXTURES

TEST_TABLE = FIXTURES / "tables" / "rewriters.yaml"
TEST_RELEASES = FIXTURES / "tables" / "rewriters_releases"


@lru_cache(maxsize=1)
def mappings():
    """Our own minimal releases up to v0.9.0 plus the test table (module moves, subtree move, a removal).

    Independent of the built-in tables, so the golden fixtures stay put while the real tables grow.
    """
    return compose(load_release_index(TEST_RELEASES), None, "v0.9.0", [TEST_TABLE])


def run(source: str | bytes, name: str):
    data = source.encode() if isinstance(source, str) else source
    return process_file(name, name, mappings(), data=data)


def check_transformed(before: str, after: str, name: str) -> None:
    result = run(before, name)
    assert result.status == "changed", (result.status, result.reason, result.findings)
    assert result.after.decode() == after
    again = run(result.after, name)
    assert again.status == "unchanged", again.after


def check_noop(source: str, name: str) -> None:
    result = run(source, name)
    assert result.status == "unchanged", (result.reason, result.after)
