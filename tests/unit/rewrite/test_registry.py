"""Every file kind in `REWRITERS` is a whole `Rewriter`: the engine and `embedded` call its four functions
directly, so a kind that lacked one (or took other arguments) would fail only on the file that needs it."""

from __future__ import annotations

import inspect

import pytest

from migrator.rewrite import REWRITERS, Rewriter, load_rewriter


@pytest.mark.parametrize("spec", REWRITERS, ids=lambda spec: spec.kind)
def test_every_kind_is_a_rewriter(spec):
    rewriter = load_rewriter(spec)
    assert isinstance(rewriter, Rewriter)
    for name, member in vars(Rewriter).items():
        if name.startswith("_") or not callable(member):
            continue
        wanted = [p for p in inspect.signature(member).parameters.values() if p.name != "self"]
        given = inspect.signature(getattr(rewriter, name)).parameters
        assert len(given) == len(wanted), (spec.kind, name, list(given))
        required = [p for p in given.values() if p.default is inspect.Parameter.empty]
        assert len(required) <= len([p for p in wanted if p.default is inspect.Parameter.empty]), (spec.kind, name)


def test_a_kind_without_a_proof_or_a_second_look_says_so():
    markdown = load_rewriter(next(spec for spec in REWRITERS if spec.kind == "markdown"))
    assert markdown.edits_keep_validity(b"x", []) is False
    assert markdown.review_edits(b"x", b"y", [], None) is None
