"""The prefilter and the kind check: files without an old token are never parsed, data files never opened."""

from __future__ import annotations

import re
import sys

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from migrator import fileprocess, prefilter
from migrator.codes import SkipReason
from migrator.engine import RunOptions, run
from migrator.filekind import HEAD_BYTES, build_prefilter, sniff, spec_by_name
from migrator.mapping import compose, load_builtin
from migrator.prefilter import Prefilter
from migrator.tablecache import composed
from tests.helpers.trees import NEW_SCRIPT, OLD_SCRIPT, TABLE

TOKENS = ("actor_rollout_ref.actor.grad_clip", "train_etp", "examples/ppo_trainer/run.sh", "recipe.vla", "a.b")


@pytest.fixture(params=["ahocorasick-rs", "re-trie"])
def engine_name(request, monkeypatch):
    if request.param == "re-trie":
        monkeypatch.setitem(sys.modules, "ahocorasick_rs", None)  # import fails: the pure-Python fallback
    return request.param


def test_both_engines_find_tokens(engine_name):
    check = Prefilter(TOKENS)
    assert check.engine == engine_name
    assert check(b"python3 -m x \\\n  actor_rollout_ref.actor.grad_clip=1\n")
    assert check(b"train_etp=2")
    assert check(b"${train_etp}")
    # Only whole names count: no rewriter edits a token glued to more name characters.
    assert not check(b"actor_rollout_ref.actor.grad_clip_note=1 my_train_etp=1 train_etp2=1")
    assert check(b"actor_rollout_ref.actor.grad_clip_note=1 actor_rollout_ref.actor.grad_clip=1")
    assert check(b'x = "\\nactor_rollout_ref.actor.grad_clip=1"')  # an escape glues a letter to the front
    assert check(b"see examples/ppo_trainer/run.sh")
    assert not check(b"actor_rollout_ref.actor.optim.clip_grad=1 train_tp=2 recipe.vl")
    assert not check(b"")


@given(st.binary(max_size=200), st.sampled_from(TOKENS), st.booleans())
def test_engines_match_a_whole_name_search(data, token, plant):
    if plant:
        data = data[: len(data) // 2] + token.encode() + data[len(data) // 2:]
    expected = any(re.search(rb"(?:(?<![A-Za-z0-9_])|(?<=\\[A-Za-z0-9_]))" + re.escape(t.encode())
                             + rb"(?![A-Za-z0-9_])", data) for t in TOKENS)
    assert (prefilter._trie_regex(TOKENS).search(data) is not None) == expected
    assert Prefilter(TOKENS)(data) == expected


def test_prefilters_of_the_same_tokens_share_one_search(engine_name):
    # Views of one table set derive equal prefilters; each automaton costs milliseconds to build.
    first, same = Prefilter(TOKENS, groups=[("verl", "workers")]), Prefilter(list(reversed(TOKENS)), groups=[("verl", "workers")])
    other = Prefilter(TOKENS[:2], groups=[("verl", "workers")])
    assert first._searches is same._searches
    assert other._searches is not first._searches
    assert not other(b"see examples/ppo_trainer/run.sh") and first(b"see examples/ppo_trainer/run.sh")
    assert same(b"from verl.workers import x") and other(b"from verl.workers import x")


def test_empty_token_set_matches_nothing():
    assert not Prefilter(())(b"anything")


def test_prefilter_pickles_as_tokens():
    import pickle

    check = pickle.loads(pickle.dumps(Prefilter(TOKENS)))
    assert check.tokens == tuple(sorted(TOKENS)) and check(b"x recipe.vla y")


def test_shell_variable_tokens_are_prefiltered():
    mappings = compose(load_builtin(), "v0.7.1")
    assert "train_etp" in build_prefilter(mappings).base.tokens
    assert build_prefilter(mappings)(b"#!/bin/bash\ntrain_etp=1\n")


def test_kind_from_name_never_opens_data_files(tmp_path):
    assert sniff(str(tmp_path / "missing.json")) == (None, None, SkipReason.NOT_A_KIND.because())  # not opened
    assert sniff(str(tmp_path / "missing.csv")).skip.why is SkipReason.NOT_A_KIND
    assert spec_by_name(str(tmp_path / "missing.py")).kind == "python"  # by name: nothing read
    assert spec_by_name(str(tmp_path / "missing.sh")).kind == "shell"
    assert sniff(str(tmp_path / "missing.sh")).skip.why is SkipReason.UNREADABLE  # the kind needs no read; the text does
    script = tmp_path / "launch"
    script.write_bytes(b"#!/usr/bin/env bash\necho\n")
    spec, data, skip = sniff(str(script))
    assert spec.kind == "shell" and data.startswith(b"#!") and skip is None
    blob = tmp_path / "weights"
    blob.write_bytes(b"\x00\x01" * 10)
    assert sniff(str(blob)).spec is None


def test_one_sniff_for_every_command_a_bom_before_the_shebang_included(tmp_path):
    script = tmp_path / "launch"
    script.write_bytes(b"\xef\xbb\xbf#!/bin/bash\necho\n")
    assert sniff(str(script)).spec.kind == "shell"
    utf16 = tmp_path / "notes.md"
    utf16.write_bytes("trainer.x=1\n".encode("utf-16"))
    assert sniff(str(utf16)).skip.why is SkipReason.UTF16
    # A name whose kind a command does not want is not read; a shebang's kind it does not want is said so.
    assert sniff(str(tmp_path / "missing.md"), frozenset({"shell"})) == (spec_by_name("x.md"), None, None)
    py = tmp_path / "tool"
    py.write_bytes(b"#!/usr/bin/env python3\nprint()\n")
    assert sniff(str(py), frozenset({"shell"})).data is None and sniff(str(py)).spec.kind == "python"


def test_a_file_of_no_kind_by_name_is_read_only_as_far_as_its_head(tmp_path, monkeypatch):
    big = tmp_path / "weights"
    big.write_bytes(b"just some text, no shebang\n" * 100_000)  # 2.7 MB
    _, data, skip = sniff(str(big))
    assert skip.why is SkipReason.NOT_A_KIND and len(data) == HEAD_BYTES
    script = tmp_path / "launch"
    script.write_bytes(b"#!/bin/bash\n" + b"echo x\n" * 100_000)
    assert sniff(str(script)).data == script.read_bytes()


def test_file_without_a_token_is_not_parsed(tmp_path, monkeypatch):
    (tmp_path / "old.sh").write_text(OLD_SCRIPT)
    (tmp_path / "new.sh").write_text(NEW_SCRIPT)
    (tmp_path / "launch").write_text(NEW_SCRIPT)
    loaded = []
    real = fileprocess.load_rewriter

    def spy(spec):
        loaded.append(spec.kind)
        return real(spec)

    monkeypatch.setattr(fileprocess, "load_rewriter", spy)
    monkeypatch.setenv("VERL_MIGRATE_NO_CACHE", "1")
    mappings, check = composed("main", "main", (str(TABLE),))
    results = {r.path.rsplit("/", 1)[-1]: r for r in run(RunOptions([str(tmp_path)], write=False, jobs=1),
                                                         mappings, prefilter=check)}
    assert results["old.sh"].status == "changed"
    assert results["new.sh"].status == "unchanged" and results["launch"].status == "unchanged"
    assert loaded == ["shell"]  # only old.sh reached a rewriter


def test_split_names_reach_the_kinds_that_split_them():
    from migrator.mapping import compose, load_builtin

    check = build_prefilter(compose(load_builtin()))
    nested_yaml = b"actor_rollout_ref:\n  rollout:\n    update_weights_bucket_megabytes: 512\n"
    assert check(nested_yaml, "yaml")
    assert not check(nested_yaml, "shell")  # a shell script must spell the whole key
    assert check(b"from recipe import fully_async_policy\n", "python")


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab.Sh_ -", max_size=12))
def test_extension_is_splitext_lowered(name):
    import os

    from migrator.filekind import _extension

    assert _extension(name) == os.path.splitext(name)[1].lower()


def test_builtin_tokens_hold_no_generic_key_name():
    """A value entry without a literal value (`reward.reward_manager.name=<any but verl's>`) is looked for by
    its key's longest component: a bare `name` or `mode` would send nearly every launch script to a parser."""
    tokens = compose(load_builtin(), None, "v0.9.0").old_tokens()
    assert not tokens & {"name", "mode", "path", "type", "enable", "_target_", "main_ppo"}
    check = build_prefilter(compose(load_builtin(), None, "v0.9.0"))
    plain = b"python3 -m verl.trainer.main_ppo \\\n    trainer.experiment_name=name \\\n    data.train_files=x\n"
    assert not check(plain, "shell")
    assert check(plain + b"    reward.reward_manager.name=my_manager\n", "shell")


@pytest.mark.parametrize("names", [["a.sh", "b.SH", ".sh", "run", "x.py", ".bashrc", "notes.md", "y.tar.gz", "z.yml"],
                                   [".sh", "run", "a.sh"], ["run", ".sh"]])
def test_the_kind_by_name_is_spec_fors_whatever_came_before(names):
    from migrator import filekind
    from migrator.rewrite import spec_for

    filekind._SPEC_BY_EXTENSION.clear()
    for name in names:
        assert filekind.spec_by_name(f"/t/{name}") is spec_for(name, b""), name


@pytest.mark.parametrize("source, hit", [
    (b"import verl\n", True),
    (b"import os, verl.utils\n", True),
    (b"import os,verl\n", True),
    (b"from  \\\n    verl.trainer import main_ppo\n", True),
    (b"try:\n    import verl\nexcept ImportError:\n    pass\n", True),
    (b"x = 1; from verl import DataProto\n", True),
    (b'subprocess.run([sys.executable, "-m", "verl.trainer.main_ppo", *ARGS])\n', False),
    (b"path = my.verl\nverl = 2\n", False),
])
def test_an_import_root_counts_only_where_an_import_can_name_it(engine_name, source, hit):
    check = Prefilter(("train_etp",), imported=("verl",))
    assert check(source) is hit
    assert check(source + b"train_etp=1\n")  # a plain token counts anywhere


def test_prefilter_with_imported_tokens_pickles():
    import pickle

    check = pickle.loads(pickle.dumps(Prefilter(("train_etp",), imported=("verl",))))
    assert check.imported == ("verl",) and check(b"import verl") and not check(b'"verl.x"')


def test_a_python_launcher_that_only_runs_verl_is_not_parsed():
    """`-m verl.trainer.main_ppo` in a launcher's list of arguments imports nothing: the import check has
    nothing to do, and nothing else of the tables is in the file."""
    mappings = compose(load_builtin(), "v0.7.1")
    check = build_prefilter(mappings)
    launcher = (b'import subprocess\nimport sys\n\nARGS = ["trainer.nnodes=1", "actor_rollout_ref.rollout.n=5"]\n'
                b'subprocess.run([sys.executable, "-m", "verl.trainer.main_ppo", *ARGS], check=True)\n')
    assert not check(launcher, "python")
    assert check(b"import verl\n" + launcher, "python")
    assert check(launcher, "notebook")  # a notebook's cells are JSON strings: every `verl` counts there


def test_a_token_only_shell_launches_need_sends_no_python_launcher_to_its_rewriter():
    """From v0.5.0 a launch of main_ppo gets `rollout.name=vllm` appended (a value default, v0.6.0), so the
    shell rewriter needs every file that names main_ppo; the Python rewriter appends it only inside a
    command string a shell runs, and a launcher's `"-m", "verl.trainer.main_ppo"` list must not send it to
    the deep passes."""
    from migrator.rewrite.python.statements import might_change

    mappings = compose(load_builtin(), "v0.5.0")
    assert "main_ppo" in mappings.old_tokens()
    check = build_prefilter(mappings)
    launcher = b'import subprocess\nsubprocess.run(["python3", "-m", "verl.trainer.main_ppo", "trainer.nnodes=1"])\n'
    assert not check(launcher, "python")
    assert not might_change(launcher, mappings)
    script = b"#!/bin/bash\npython3 -m verl.trainer.main_ppo trainer.nnodes=1\n"
    assert check(script, "shell")
    assert check(b"```bash\n" + script + b"```\n", "markdown")
    assert "main_ppo" not in mappings.old_tokens_for("python") and "main_ppo" in mappings.old_tokens_for("shell")



@pytest.mark.parametrize("call", [b'os.system("{}")', b'subprocess.run("{}", shell=True)', b'os.popen("{}")'])
def test_a_shell_command_string_in_python_still_gets_the_default(call):
    """A command string a shell runs goes through the shell rewriter, which appends the default there."""
    from migrator.rewrite import python
    from migrator.rewrite.python.statements import might_change

    mappings = compose(load_builtin(), "v0.5.0")
    source = b"import os\nimport subprocess\n" + call.replace(b"{}", b"python3 -m verl.trainer.main_ppo trainer.nnodes=1") \
        + b"\n"
    assert build_prefilter(mappings)(source, "python")
    assert might_change(source, mappings)
    edits = python.locate(source, mappings).edits
    assert [e.replacement for e in edits if e.kind == "value-default"] == [b" actor_rollout_ref.rollout.name=vllm"]


def test_the_scope_tells_value_defaults_tokens_alone_from_any_other(engine_name):
    """A kind that plans value defaults alone searches their tokens apart; a token another duty of the kind
    needs too (here a declared key, `x_declared`) is never the defaults' alone."""
    from migrator.filekind import ALL_ENTRIES, DEFAULTS_ALONE, KindPrefilter

    check = KindPrefilter({"a.b", "main_ppo"}, {"shell": {"x_declared"}},
                          defaults_by_kind={"shell": frozenset({"main_ppo", "x_declared"})})
    cases = {(b"python3 -m verl.trainer.main_ppo t.n=1", "shell"): DEFAULTS_ALONE,
             (b"python3 -m verl.trainer.main_ppo a.b=1", "shell"): ALL_ENTRIES,
             (b"python3 -m verl.trainer.main_ppo +x_declared=1", "shell"): ALL_ENTRIES,
             (b"python3 -m my.main_ppo_v2 t.n=1", "shell"): None,
             (b"echo nothing", "shell"): None,
             (b"python3 -m verl.trainer.main_ppo t.n=1", "markdown"): ALL_ENTRIES}  # no split there
    assert {case: check.scope(*case) for case in cases} == cases
    assert all(check(*case) == (scope is not None) for case, scope in cases.items())


SCOPE_TOKENS = ("a.b", "tp")
# Groups that share names, so one file may hold every name of several (the candidates `_Scan` checks for
# whole names one group at a time, each name's hits until one is whole).
SCOPE_GROUPS = (("verl", "workers", "rollout"), ("verl", "tp"), ("verl", "x"))
SCOPE_IMPORTED = ("verl",)
SCOPE_ALONE = ("main_ppo", "rollout")


def _whole_at(data: bytes, token: str) -> list[int]:
    return [m.start() for m in re.finditer(rb"(?:(?<![A-Za-z0-9_])|(?<=\\[A-Za-z0-9_]))(?=" + re.escape(token.encode())
                                           + rb"(?![A-Za-z0-9_]))", data)]


def _reference_scope(data: bytes) -> str | None:
    """What the scope means, spelt out: a token whole, or every name of a group whole; else an imported
    token whole where an import could name it, or an alone token whole (both: the whole scope)."""
    if any(_whole_at(data, t) for t in SCOPE_TOKENS):
        return prefilter.TOKEN_HIT
    if any(all(_whole_at(data, name) for name in group) for group in SCOPE_GROUPS):
        return prefilter.TOKEN_HIT
    imported = any(prefilter.import_position(data, at) for t in SCOPE_IMPORTED for at in _whole_at(data, t))
    alone = any(_whole_at(data, t) for t in SCOPE_ALONE)
    if imported and alone:
        return prefilter.TOKEN_HIT
    return prefilter.IMPORT_HIT if imported else prefilter.ALONE_HIT if alone else None


_SCOPE_PIECES = st.sampled_from([b"a.b", b"tp", b"verl", b"workers", b"rollout", b"main_ppo", b"import ", b"from ",
                                 b", ", b" ", b"x", b"_", b".", b"\n", b"\\n", b'"', b"verl.workers"])


@settings(max_examples=300, deadline=None)
@given(st.lists(_SCOPE_PIECES, max_size=12))
# Two groups' names all occur, one group's whole and the other's not, in either order of the two.
@example([b"verl", b" ", b"workers", b" ", b"rollout", b" ", b"_", b"x"])
@example([b"verl", b" ", b"x", b" ", b"_", b"workers", b" ", b"rollout"])
# A group's first name glued to an escape's letter (`"\\nverl x"`): whole, as every token is there.
@example([b"\\n", b"verl", b" ", b"x"])
def test_one_scan_finds_what_tokens_groups_imports_and_alone_tokens_mean(pieces):
    """The one-automaton scan (ahocorasick-rs) and the pure-Python fallback give the scope the definition
    gives, for tokens, groups, imported tokens and alone tokens that share names (`rollout` is a group's name
    and an alone token, `tp` a token and a group's name)."""
    data = b"".join(pieces)
    check = Prefilter(SCOPE_TOKENS, SCOPE_GROUPS, SCOPE_IMPORTED, SCOPE_ALONE)
    assert check.engine == "ahocorasick-rs"
    expected = _reference_scope(data)
    assert check.scope(data) == expected
    assert check(data) == (expected in (prefilter.TOKEN_HIT, prefilter.IMPORT_HIT))
    fallback = Prefilter.__new__(Prefilter)
    real = sys.modules.get("ahocorasick_rs")
    sys.modules["ahocorasick_rs"] = None
    try:
        fallback.__init__(SCOPE_TOKENS, SCOPE_GROUPS, SCOPE_IMPORTED, SCOPE_ALONE)
    finally:
        sys.modules["ahocorasick_rs"] = real
    assert fallback.engine == "re-trie"
    assert fallback.scope(data) == expected
    assert fallback(data) == check(data)
    assert sorted(check.matches(data)) == sorted(fallback.matches(data))


def test_a_prefilter_with_alone_tokens_pickles():
    import pickle

    check = pickle.loads(pickle.dumps(Prefilter(("tp",), imported=("verl",), alone=("main_ppo",))))
    assert check.alone == ("main_ppo",) and check.scope(b"-m x.main_ppo") == prefilter.ALONE_HIT
    assert check.scope(b"import verl") == prefilter.IMPORT_HIT and check.scope(b"x") is None
    assert check.scope(b"import verl\ntp = 1") == prefilter.TOKEN_HIT
    assert check.scope(b"import verl\n-m x.main_ppo") == prefilter.TOKEN_HIT


def test_an_automaton_is_built_on_the_first_search_of_its_kind(monkeypatch):
    """A run's parent process unpickles the composed tables and hands the files to its workers: it builds no
    automaton. A run of one script builds its kind's alone (each took 2-3 ms, seven of them a run)."""
    import pickle

    import ahocorasick_rs

    from migrator.filekind import KindPrefilter

    built = []
    real = ahocorasick_rs.BytesAhoCorasick
    monkeypatch.setattr(ahocorasick_rs, "BytesAhoCorasick", lambda patterns, *a, **k: built.append(len(patterns))
                        or real(patterns, *a, **k))
    check = pickle.loads(pickle.dumps(KindPrefilter({"a.b", "main_ppo"}, {"yaml": {"b"}, "python": {"c"}},
                                                    defaults_by_kind={"shell": frozenset({"main_ppo"})})))
    assert built == [] and check.engine == "ahocorasick-rs"
    assert check.scope(b"python3 -m verl.trainer.main_ppo t.n=1", "shell") == "defaults" and len(built) == 1
    assert check.scope(b"x: a.b", "shell") == "all" and len(built) == 1  # built once
    assert check.scope(b"b: 1", "yaml") == "all" and len(built) == 2
