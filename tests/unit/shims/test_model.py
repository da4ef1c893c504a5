"""The deprecation policy's removal release reads which releases are no tag off the release index
(`unreleased:` in releases.yaml), whatever they are called."""

from __future__ import annotations

import pytest

from migrator.mapping import compose
from migrator.mapping.load import load_release_index
from migrator.shims import plan_shims
from migrator.shims.model import removal_release

RELEASES = ("v1", "v2", "v3", "tip")


@pytest.mark.parametrize("unreleased, expected", [
    (("tip",), "v3"),  # v2, then v3: removed in v3
    ((), "v3"),
])
def test_removal_release_is_the_second_after(unreleased, expected):
    assert removal_release(RELEASES, "v1", unreleased) == expected


@pytest.mark.parametrize("unreleased, expected", [
    (("tip",), "the release after v3"),  # the tip is no release: never named as the one that drops it
    ((), "tip"),  # a release the index does not call unreleased is a release, whatever its name
])
def test_an_unreleased_tip_is_never_named(unreleased, expected):
    assert removal_release(RELEASES, "v2", unreleased) == expected


def test_main_is_a_release_where_the_index_says_so():
    assert removal_release(("v1", "v2", "main"), "v1", ()) == "main"


def test_the_shims_take_it_from_the_index(tmp_path):
    index = "releases: [v1, v2, v3, nightly]\nunreleased: [nightly]\n"
    (tmp_path / "releases.yaml").write_text(index)
    (tmp_path / "v2.yaml").write_text("release: v2\nentries:\n- kind: path-move\n  old: examples/a.sh\n"
                                      "  new: examples/b.sh\n  pr: 7\n")
    (tmp_path / "v3.yaml").write_text("release: v3\nentries: []\n")
    (tmp_path / "nightly.yaml").write_text("release: nightly\nentries: []\n")
    tables = load_release_index(tmp_path)
    (stub,) = plan_shims(compose(tables, "v1", "v3"), tables.releases).files
    assert b"this stub goes away in the release after v3;" in stub.content
    assert b"nightly" not in stub.content
