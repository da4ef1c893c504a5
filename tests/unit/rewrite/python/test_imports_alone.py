"""A Python file whose only old tokens are import roots at imports (`from verl.utils import x`, nothing any
entry names) skips the table's passes (`MappingSet.only_imports`) unless it spells a renamed key's name,
which a config access may spell apart: the same edits, findings and verdicts as the whole locator."""

from __future__ import annotations

from functools import lru_cache

from hypothesis import given, settings
from hypothesis import strategies as st

from migrator.edits import SourceNotParsed
from migrator.filekind import IMPORTS_ALONE, build_prefilter
from migrator.fileprocess import process_file
from migrator.mapping import compose, load_builtin
from migrator.rewrite import python


@lru_cache(maxsize=None)
def tables():
    maps = compose(load_builtin(), "v0.5.0", "v0.9.0")
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
    # what the table's passes find where nothing but `verl` is a prefilter token: a config access spelt
    # apart (the import root is its provenance's evidence), and names the statement chooser looks at
    b"class T(RayPPOTrainer):\n    def fit(self):\n        r = self.config.actor_rollout_ref\n"
    b"        return r.rollout.update_weights_bucket_megabytes\n",
    b"def h(self):\n    n = self.config.trainer.controller_nsight_options\n    return n.trace\n",
    b"from verl.trainer.ppo.ray_trainer import RayPPOTrainer\n",
    b"x = f'{utils} {copy}'\n",
    b"from verl.utils.hdfs_io import copy, makedirs\n",
    b"\xef\xbb\xbfimport verl\n",
    b"# -*- coding: latin-1 -*-\nimport verl\n",
    b"import verl\rx = 1\r",
    b"def compute_score(data_source, solution_str, ground_truth, extra_info=None):\n    return 0.0\n",
    b"return 1\n",  # the parser takes it, the compiler does not
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(PIECES), min_size=1, max_size=6))
def test_the_imports_alone_view_gives_what_the_whole_locator_gives(pieces):
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
    found = [outcome(b"from verl.trainer.ppo.ray_trainer import RayPPOTrainer\n" + p, maps.imports_alone())
             for p in PIECES]
    assert any(findings for _, findings in found) and any(findings == () for _, findings in found)
    assert any(edits for edits, _ in found) and ("not parsed", "not parsable as Python: Syntax Error @ 2:1.") in found


def test_the_tables_passes_are_not_run_where_nothing_of_theirs_is(monkeypatch):
    maps, prefilter = tables()
    source = (b'"""A module of the user\'s own."""\nimport os\n\nimport verl\nfrom verl import DataProto\n'
              b"from verl.utils import (\n    hf_tokenizer,\n)\n\n\n" + b"def f(x):\n    return os.path.join(x, 'y')\n" * 50)
    assert prefilter.scope(source, "python") == IMPORTS_ALONE

    def refuse(*args):
        raise AssertionError("the table's passes ran")

    real = python._locate_table
    monkeypatch.setattr(python, "_locate_table", refuse)
    result = process_file("user.py", "user.py", maps, prefilter=prefilter, data=source)
    assert (result.status, result.findings) == ("unchanged", [])
    split = source + b"def g(config):\n    r = config.actor_rollout_ref\n    return r.rollout.update_weights_bucket_megabytes\n"
    assert prefilter.scope(split, "python") == IMPORTS_ALONE
    ran = []
    monkeypatch.setattr(python, "_locate_table", lambda *args: ran.append(args) or real(*args))
    result = process_file("user.py", "user.py", maps, prefilter=prefilter, data=split)
    assert len(ran) == 1 and result.status == "unchanged"  # they ran: a renamed key's name spelt apart


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
