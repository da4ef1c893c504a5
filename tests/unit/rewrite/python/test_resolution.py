"""Imports of verl that do not resolve at the target release after the table's edits (VM123, VM124),
judged against the shipped module facts (mappings/verl/facts/modules/verl.modules)."""

from __future__ import annotations

import dataclasses
import json
from functools import lru_cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from migrator.filekind import build_prefilter
from migrator.fileprocess import process_file
from migrator.lint.runner import lint_python_source
from migrator.mapping import compose, load_builtin
from migrator.mapping.facts import ReleaseFacts
from migrator.rewrite.python.resolution import import_roots, unknown_release_note


@lru_cache(maxsize=None)
def builtin(to_release: str = "v0.9.0", from_release: str | None = None):
    return compose(load_builtin(), from_release, to_release)


def reported(source: str, to_release: str = "v0.9.0", name: str = "user.py", from_release=None):
    maps = builtin(to_release, from_release)
    result = process_file(name, name, maps, prefilter=build_prefilter(maps), data=source.encode())
    return result, [(f.line, f.col, f.code, f.message) for f in result.findings]


@pytest.mark.parametrize("source", [
    "from verl.trainer.ppo.ray_trainer import RayPPOTrainer\n",
    "import verl\nimport verl.utils.torch_functional as F\nfrom verl import DataProto\n",
    "from verl.utils import reward_score\n",  # a submodule
    "from verl.utils.reward_score import _default_compute_score\n",  # private, still there
    "from verl.utils.reward_score import *\n",
    "from .fork import thing\nfrom recipe.mine import x\n",  # relative; recipe/ is no longer verl's in v0.9.0
    "import os\nx = 'from verl.fork import y'\n",
])
def test_imports_that_resolve_are_not_reported(source):
    result, found = reported(source)
    assert found == [] and result.status == "unchanged"


def test_a_forks_own_name_and_module_are_reported_at_their_place():
    _, found = reported("from verl.utils.reward_score import default_compute_score, gsm8k_mc\n"
                        "import verl.fork.thing as t\n")
    assert found == [
        (1, 60, "VM123", "`verl.utils.reward_score` has no name `gsm8k_mc` in verl v0.9.0 "
                         "(it never had one: a fork's own name, or one from between releases?)"),
        (2, 8, "VM123", "`verl.fork.thing` is not a module of verl v0.9.0 "
                        "(no release ever had it: a fork's own module, or one from between releases?)"),
    ]


def test_a_name_verl_removed_without_a_table_entry_names_the_release():
    _, found = reported("from verl.trainer.ppo.ray_trainer import _timer\n")
    assert found == [(1, 42, "VM123", "`verl.trainer.ppo.ray_trainer` has no name `_timer` in verl v0.9.0 "
                                      "(removed in v0.4.1; no table entry)")]


def test_a_name_from_a_newer_release_says_so():
    _, found = reported("from verl.experimental.agent_loop import AgentLoopBase\n", to_release="v0.4.0")
    assert found == [(1, 1, "VM123", "`verl.experimental.agent_loop` is not a module of verl v0.4.0 "
                                     "(it first appears in v0.5.0: was the file written for a newer verl?)")]


def test_the_hint_names_where_the_target_defines_the_name():
    result, _ = reported("from verl.utils.reward_score import RayPPOTrainer\n")
    assert result.findings[0].hint == "verl v0.9.0 defines `RayPPOTrainer` in verl.trainer.ppo.ray_trainer"


def test_what_the_tables_rewrite_leaves_unresolved_is_reported():
    # a user's table moves their module into verl, where the name is not
    table = ("entries:\n  - kind: module-move\n    old: verl.mine.helpers\n    new: verl.utils.torch_functional\n    pr: 1\n")
    maps = compose(load_builtin(), None, "v0.9.0", [("mine.yaml", table.encode())])
    result = process_file("user.py", "user.py", maps, data=b"from verl.mine.helpers import masked_mean, my_helper\n")
    assert result.after == b"from verl.utils.torch_functional import masked_mean, my_helper\n"
    assert [(f.line, f.col, f.code, f.message) for f in result.findings] == [
        (1, 44, "VM123", "`verl.utils.torch_functional` has no name `my_helper` in verl v0.9.0 (it never had one: "
                         "a fork's own name, or one from between releases?) (after the table's rewrite of this import)")]


def test_what_a_split_leaves_behind_is_the_tables_to_report():
    result, found = reported("from verl.utils.rollout_skip import RolloutSkip, ForkSkip\n", from_release="v0.7.0")
    assert result.after.decode().startswith("from verl.utils.skip.rollout_skip import RolloutSkip\n")
    assert [code for _, _, code, _ in found] == ["VM121"]


def test_the_tables_own_finding_is_not_repeated():
    _, found = reported("from verl.workers.fsdp_workers import ActorRolloutRefWorker, MyForkWorker\n")
    assert [code for _, _, code, _ in found] == ["VM121"]


def test_guarded_imports_are_info_not_manual():
    source = ("try:\n    from verl.utils.fork_tools import helper\nexcept ImportError:\n    helper = None\n"
              "try:\n    import verl.fork\nexcept (ValueError, ModuleNotFoundError):\n    pass\n"
              "try:\n    import verl.fork2\nfinally:\n    pass\n")
    result, found = reported(source)
    assert [(line, code) for line, _, code, _ in found] == [(2, "VM124"), (6, "VM124"), (10, "VM123")]
    assert [f.severity for f in result.findings] == ["info", "info", "manual"]


def test_imports_inside_functions_and_classes_are_checked():
    _, found = reported("def f():\n    if True:\n        from verl.fork import x\n")
    assert [(line, code) for line, _, code, _ in found] == [(3, "VM123")]


def test_recipe_is_checked_while_verl_shipped_it():
    assert import_roots(builtin("v0.6.0")) == {"verl", "recipe"}
    assert import_roots(builtin("v0.9.0")) == {"verl"}
    _, found = reported("from recipe.dapo.dapo_ray_trainer import ForkTrainer\n", to_release="v0.6.0")
    assert [code for _, _, code, _ in found] == ["VM123"]


def test_suppression_comment_silences_it():
    _, found = reported("from verl.fork import x  # verl-migrate: skip\n")
    assert found == []


def test_notebook_cells_are_checked_markdown_examples_are_not():
    notebook = {"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                           "source": ["import os\n", "from verl.fork import x\n"]}],
                "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    _, found = reported(json.dumps(notebook, indent=1), name="demo.ipynb")
    assert [code for _, _, code, _ in found] == ["VM123"]
    _, found = reported("# Demo\n\n```python\nfrom verl.fork import x\n```\n", name="README.md")
    assert found == []


def test_facts_that_do_not_know_the_target_check_nothing_and_say_so_once(tmp_path):
    (tmp_path / "config-keys").mkdir()
    (tmp_path / "modules").mkdir()
    (tmp_path / "modules" / "verl.modules").write_text("verl\tv0.1..v0.8.0\t\t\t\n")
    tables = dataclasses.replace(load_builtin(), facts=ReleaseFacts(tmp_path))
    maps = compose(tables, None, "v0.9.0")
    result = process_file("user.py", "user.py", maps, data=b"from verl.fork import x\n")
    assert result.findings == []
    assert unknown_release_note(maps) == ("note: verl-migrate ships no list of verl v0.9.0's modules: imports of "
                                          "verl are not checked against it")
    assert unknown_release_note(builtin()) is None



def test_which_releases_the_module_facts_cover_is_known_without_reading_their_names(monkeypatch):
    # The run's one note is decided from the releases column alone: the names cost ~50 ms a run, and most
    # runs (shell scripts only) never need them.
    from migrator.mapping import modulefacts

    facts = ReleaseFacts(load_builtin().facts.directory)
    order = tuple(builtin().history.releases)
    monkeypatch.setattr(modulefacts, "read_module_facts", lambda *a: (_ for _ in ()).throw(AssertionError("read")))
    covered = {r for r in order if facts.modules_cover(r, order)}
    monkeypatch.undo()
    assert covered == set(facts.module_names(order)) and "main" in covered
    assert not facts.modules_cover("v9.9.9", order)


def test_lint_reports_python_imports_as_written():
    report = lint_python_source(b"from verl.workers.fsdp_workers import ActorRolloutRefWorker\n"
                                b"try:\n    from verl.fork import x\nexcept ImportError:\n    x = None\n",
                                "user.py", builtin())
    assert [(f.line, f.code) for f in report.findings] == [(1, "VM123")]
    assert report.findings[0].message == ("`verl.workers.fsdp_workers` is not a module of verl v0.9.0 "
                                          "(removed in v0.8.0; `verl-migrate --to v0.9.0` rewrites or reports it)")
    assert lint_python_source(b"from verl.fork import x\n", "u.py", builtin(), frozenset({"VM001"})).findings == []



def test_lint_says_the_rewrite_handles_a_submodule_a_table_moves_imported_by_name():
    """`from verl.utils import npu_utils`: the table moves the module (v0.7.0, verl#4123) and the rewrite edits
    the import; the finding once said "no table entry", looking for a symbol entry `verl.utils:npu_utils`."""
    report = lint_python_source(b"from verl.utils import npu_utils\n", "user.py", builtin())
    assert [f.message for f in report.findings] == [
        "`verl.utils` has no name `npu_utils` in verl v0.9.0 "
        "(removed in v0.7.0; `verl-migrate --to v0.9.0` rewrites or reports it)"]


def test_lint_gives_an_import_a_table_moves_the_move_as_its_hint():
    """The finding said "fix it by hand" with no hint, though the table moves the module (v0.7.0, verl#4123)."""
    report = lint_python_source(b"import verl.utils.npu_utils\nfrom verl.utils import npu_utils\n", "user.py", builtin())
    assert [f.hint for f in report.findings] == [
        "moved to `verl.utils.npu_flash_attn_utils`: run `verl-migrate --to v0.9.0` on this file"] * 2

# The fast path reads plain import lines without parsing the file; it may only ever say "nothing to
# report" when the parser-based check agrees.
_MODULES = ["verl", "verl.utils", "verl.utils.hdfs_io", "verl.trainer.main_ppo", "verl.fork_only", "os",
            "verl.workers.fsdp_workers", "recipe.mine"]
_NAMES = ["copy_to_local", "main", "run_ppo", "TaskRunner", "nope", "_private", "reward_score"]


def _full_check(source: bytes, maps, edits=None, findings=()):
    """The parser-based check alone: what the fast path must agree with."""
    from unittest import mock

    from migrator.rewrite.python import resolution

    with mock.patch.object(resolution, "_all_resolve_as_spelled", lambda *a: False):
        return resolution.unresolved_imports(source, maps, edits, findings)


@pytest.mark.parametrize("source", [
    b"import verl.utils.hdfs_io\nfrom verl.trainer.main_ppo import (main,\n    run_ppo,)\n",
    b"import os, verl.utils as u  # note\r\nfrom verl.utils import hdfs_io\r\n",
    b"def f():\n    from verl.trainer.main_ppo import main\n",
])
def test_plain_imports_that_resolve_are_judged_without_a_parse(source, monkeypatch):
    import ast

    from migrator.rewrite.python import parsed
    from migrator.rewrite.python.resolution import unresolved_imports

    parsed._LAST.clear()  # the shared parse must not answer from an earlier test's source
    parses = []
    real = ast.parse
    monkeypatch.setattr(ast, "parse", lambda *a, **k: parses.append(a) or real(*a, **k))
    assert unresolved_imports(source, builtin()) == [] and parses == []



def test_a_migrated_file_whose_imports_all_resolve_is_not_parsed_again(monkeypatch):
    # The table's edits turn an import that is gone into one that resolves at the target: the migrated
    # source's import lines are read like any other file's, without a parse of the whole file.
    import ast

    from migrator.edits import Edit
    from migrator.rewrite.python import parsed
    from migrator.rewrite.python.resolution import unresolved_imports

    source = b"import os\nfrom verl.utils.nonexistent_mod import copy_to_local\n"
    start = source.index(b"nonexistent_mod")
    edit = Edit(start, start + len(b"nonexistent_mod"), b"fs", "module-move", "moved")
    parsed._LAST.clear()
    parses = []
    real = ast.parse
    monkeypatch.setattr(ast, "parse", lambda *a, **k: parses.append(a) or real(*a, **k))
    assert unresolved_imports(source, builtin(), edits=[edit]) == [] and parses == []
    # and one that still does not resolve once migrated is parsed and reported, at its original place
    bad = Edit(start, start + len(b"nonexistent_mod"), b"still_nonexistent", "module-move", "moved")
    found = unresolved_imports(source, builtin(), edits=[bad])
    assert [(f.code, f.offset) for f in found] == [("VM123", source.index(b"from"))] and parses


def test_an_import_the_table_already_reports_does_not_send_the_file_to_the_parser(monkeypatch):
    # The table's own finding covers the statement (a module it cannot move: a manual step): the check
    # skips that statement, so reading the import lines is enough, as for a file whose imports resolve.
    import ast

    from migrator.edits import Finding
    from migrator.rewrite.python import parsed
    from migrator.rewrite.python.resolution import unresolved_imports

    source = b"import os\nfrom verl.nonexistent_mod import x\nfrom verl.trainer.main_ppo import main\n"
    table_finding = Finding(source.index(b"nonexistent_mod"), "module-removal", "gone; by hand")
    parsed._LAST.clear()
    parses = []
    real = ast.parse
    monkeypatch.setattr(ast, "parse", lambda *a, **k: parses.append(a) or real(*a, **k))
    assert unresolved_imports(source, builtin(), edits=[], findings=[table_finding]) == [] and parses == []
    # a finding elsewhere in the file covers nothing: the import is reported, after a parse
    elsewhere = Finding(source.index(b"main_ppo"), "key-rename", "a key")
    found = unresolved_imports(source, builtin(), edits=[], findings=[elsewhere])
    assert [(f.code, f.offset) for f in found] == [("VM123", source.index(b"from"))] and parses
    # nor does one in the comment after the statement: `ast` spans the statement without it
    commented = b"import verl.nonexistent_mod  # verl.nonexistent_mod is ours\n"
    in_comment = Finding(commented.index(b"# verl") + 2, "key-rename", "in a comment")
    found = unresolved_imports(commented, builtin(), edits=[], findings=[in_comment])
    assert [(f.code, f.offset) for f in found] == [("VM123", commented.index(b"verl"))]



_LINE = st.one_of(
    st.builds(lambda m, a: f"import {m}" + (f" as {a}" if a else ""), st.sampled_from(_MODULES),
              st.sampled_from(["", "x"])),
    st.builds(lambda m, ns, g: f"from {m} import " + (f"({', '.join(ns)},\n    )" if g else ", ".join(ns)),
              st.sampled_from(_MODULES), st.lists(st.sampled_from(_NAMES), min_size=1, max_size=3), st.booleans()),
    st.sampled_from(["x = 1; import verl.fork_only", "s = '''\nfrom verl.nope import a\n'''", "import \\\n  verl.nope",
                     "from verl.nope \\\n    import a", "from verl \\\n    .nope import a",
                     "from verl.trainer.main_ppo \\\nimport nope", "s = '''\nfrom os import (a,\n'''",
                     "t = '''\n)\n'''",
                     "try:\n    import verl.fork_only\nexcept ImportError:\n    pass", "# import verl.nope", "pass",
                     "import verl.nope  # a comment the statement's span leaves out",
                     "from verl.utils import (nope,  # inside\n    copy_to_local)  # after"]),
)


def _compiling_source(lines, newline: str, indent: bool) -> bytes | None:
    """The generated lines as a file (inside a function when `indent`), or None when it does not compile."""
    body = newline.join(lines) + newline
    if indent:
        body = "def f():" + newline + "".join("    " + line + newline for line in body.split(newline) if line)
    try:
        compile(body, "<t>", "exec")
    except SyntaxError:
        return None
    return body.encode()


@settings(max_examples=150, deadline=None)
@given(st.lists(_LINE, min_size=1, max_size=5), st.sampled_from(["\n", "\r\n"]), st.booleans())
def test_the_fast_path_never_hides_what_the_parser_reports(lines, newline, indent):
    source = _compiling_source(lines, newline, indent)
    if source is None:
        return
    from migrator.rewrite.python.resolution import unresolved_imports

    full = [(f.offset, f.code, f.message) for f in _full_check(source, builtin())]
    assert [(f.offset, f.code, f.message) for f in unresolved_imports(source, builtin())] == full


@settings(max_examples=150, deadline=None)
@given(st.lists(_LINE, min_size=1, max_size=5), st.sampled_from(["\n", "\r\n"]), st.booleans(), st.data())
def test_table_findings_skip_the_same_statements_with_or_without_a_parse(lines, newline, indent, data):
    from migrator.edits import Finding
    from migrator.rewrite.python.resolution import unresolved_imports

    source = _compiling_source(lines, newline, indent)
    if source is None:
        return
    places = data.draw(st.lists(st.integers(0, len(source) - 1), max_size=3))
    findings = [Finding(place, "module-removal", "the table's") for place in places]
    expected = [(f.offset, f.code, f.message) for f in _full_check(source, builtin(), [], findings)]
    assert [(f.offset, f.code, f.message) for f in unresolved_imports(source, builtin(), [], findings)] == expected


@pytest.mark.parametrize("source", [
    b"from verl.nonexistent_mod \\\n    import x\n",
    b"from verl \\\n    .nonexistent_mod import x\n",
    b"from verl.trainer.main_ppo \\\nimport no_such_name_zz\n",
    b's = """\nfrom os import (a,\n"""\nimport verl.nonexistent_mod\nt = """\n)\n"""\n',
    b"import os\rimport verl.nonexistent_mod\r",  # old Mac line ends
])
def test_continuations_strings_and_lone_cr_never_hide_an_unresolved_import(source):
    from migrator.rewrite.python.resolution import unresolved_imports

    assert [f.code for f in unresolved_imports(source, builtin())] == ["VM123"]


def test_a_package_is_a_module_exactly_when_some_module_lies_under_it():
    from migrator.rewrite.python.resolution import _Judge, release_modules

    maps = builtin()
    facts = release_modules(maps)
    judge = _Judge(facts, maps, as_written=False)
    for release in ("v0.4.1", "v0.9.0"):
        modules = facts[release]
        names = {name[:at] for name in modules for at in range(1, len(name) + 1)}  # every prefix, dotted or not
        names |= {"verl.nope", "verl.utils.nope.deeper", "", "verl."}
        for name in names:
            expected = name in modules or any(m.startswith(name + ".") for m in modules)
            assert judge.module_exists(name, release) == expected, (release, name)


def _other_import_lines_by_line(source: bytes, plain_lines: set[int]) -> bool:
    """`_other_import_lines` spelt out, line by line."""
    import re

    from migrator.layout import verl_layout

    word, packages = re.compile(rb"\bimport\b"), verl_layout().package_bytes
    lines = source.split(b"\n")
    for number, text in enumerate(lines):
        if number not in plain_lines and word.search(text) and any(r in text for r in packages):
            return True
        if text.rstrip(b"\r").endswith(b"\\"):
            joined = text + (lines[number + 1] if number + 1 < len(lines) else b"")
            if word.search(joined) or any(r in joined for r in packages):
                return True
    return False


_LINE_PIECES = st.sampled_from([b"import", b" ", b"verl", b"recipe", b"\\", b"\n", b"\r", b"\r\n", b"x", b"_",
                                b"importer", b"from ", b"#", b"os"])


@settings(max_examples=400, deadline=None)
@given(st.lists(_LINE_PIECES, max_size=14), st.sets(st.integers(0, 6)))
def test_the_scans_for_other_import_lines_find_what_a_look_at_every_line_finds(pieces, plain_lines):
    from migrator.rewrite.python.resolution import _other_import_lines

    source = b"".join(pieces)
    assert _other_import_lines(source, plain_lines) == _other_import_lines_by_line(source, plain_lines)
