"""A Python file whose only old tokens are import roots at imports (`from verl.utils import x`, nothing any
entry names) gets the import check alone (`MappingSet.only_imports`): the same findings as the whole
locator, read from the import lines' text where every one resolves, with no parse."""

from __future__ import annotations

import builtins
from functools import lru_cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from migrator.edits import SourceNotParsed
from migrator.filekind import IMPORTS_ALONE, build_prefilter
from migrator.fileprocess import process_file
from migrator.mapping import compose, load_builtin
from migrator.rewrite import python


@lru_cache(maxsize=None)
def tables():
    maps = compose(load_builtin(), None, "v0.9.0")
    return maps, build_prefilter(maps)


def outcome(source: bytes, maps):
    try:
        result = python.locate(source, maps, "user.py")
    except SourceNotParsed as exc:
        return "not parsed", str(exc)
    return result.edits, result.findings


# Imports that resolve at v0.9.0, that do not (removed, never there, a fork's name), guarded ones, and the
# spellings that send the check to the parser: a semicolon, a continuation, a string or comment that reads
# as an import, parenthesised names, an import inside a function.
PIECES = [
    b"import verl\n",
    b"from verl import DataProto\n",
    b"from verl.utils import hf_tokenizer\n",
    b"import verl.utils.torch_functional as F\n",
    b"import os, verl\n",
    b"import verl.nonexistent_mod\n",
    b"from verl.trainer.ppo.ray_trainer import _timer\n",
    b"from verl.utils.reward_score import default_compute_score, gsm8k_mc\n",
    b"try:\n    import verl.fork_mod\nexcept ImportError:\n    pass\n",
    b"from verl \\\n    .nonexistent_mod import x\n",
    b"x = 1; import verl.nonexistent_mod\n",
    b's = """\nimport verl.nonexistent_mod\n"""\n',
    b"# import verl.nonexistent_mod\n",
    b"from verl.utils import (\n    hf_tokenizer,\n    nope_name,\n)\n",
    b"def f():\n    from verl import DataProto\n    return DataProto\n",
    b"print('hello')\n",
    b"from .fork import thing\n",
    b"import verl.nonexistent_mod\r\n",
    b"def g(:\n",
]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(PIECES), min_size=1, max_size=6))
def test_the_import_check_alone_finds_what_the_whole_locator_finds(pieces):
    maps, prefilter = tables()
    source = b"".join(pieces)
    if prefilter.scope(source, "python") != IMPORTS_ALONE:
        return
    alone = outcome(source, maps.imports_alone())
    assert alone == outcome(source, maps)


def test_the_pieces_reach_the_imports_alone_scope_and_both_outcomes():
    """The property above is about something: its pieces give the scope, findings and clean files."""
    maps, prefilter = tables()
    assert all(prefilter.scope(p, "python") == IMPORTS_ALONE for p in PIECES if b"verl" in p and b"#" not in p)
    found = [outcome(p, maps.imports_alone()) for p in PIECES]
    assert any(findings for _, findings in found) and any(findings == () for _, findings in found)
    assert prefilter.scope(b"from verl.utils import hf_tokenizer\ndef f(data_source, solution_str):\n    pass\n",
                           "python") != IMPORTS_ALONE  # a callback's token: the whole locator


@pytest.fixture
def no_parse(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("parsed")

    monkeypatch.setattr(builtins, "compile", refuse)


def test_a_file_whose_imports_all_resolve_is_not_parsed(no_parse):
    maps, prefilter = tables()
    source = (b'"""A module of the user\'s own."""\nimport os\n\nimport verl\nfrom verl import DataProto\n'
              b"from verl.utils import (\n    hf_tokenizer,\n)\n\n\n" + b"def f(x):\n    return os.path.join(x, 'y')\n" * 500)
    result = process_file("user.py", "user.py", maps, prefilter=prefilter, data=source)
    assert (result.status, result.findings) == ("unchanged", [])


def test_an_unresolved_import_gets_the_whole_locators_finding():
    maps, prefilter = tables()
    source = b"import os\nfrom verl.trainer.ppo.ray_trainer import _timer\n"
    assert prefilter.scope(source, "python") == IMPORTS_ALONE
    result = process_file("user.py", "user.py", maps, prefilter=prefilter, data=source)
    assert [(f.line, f.code) for f in result.findings] == [(2, "VM123")]
    assert outcome(source, maps.imports_alone()) == outcome(source, maps)


def test_a_file_that_does_not_parse_gets_the_whole_locators_verdict():
    """Whether or not the check must parse, a file that does not parse ends as the whole locator ends it."""
    maps, prefilter = tables()
    for source in (b"from verl import DataProto\ndef f(:\n", b"import verl.nonexistent_mod\ndef f(:\n"):
        assert prefilter.scope(source, "python") == IMPORTS_ALONE
        result = process_file("a.py", "a.py", maps, prefilter=prefilter, data=source)
        whole = process_file("a.py", "a.py", maps, data=source)  # no prefilter: the whole locator
        assert (result.status, result.reason, result.findings) == (whole.status, whole.reason, whole.findings)
