"""The generated key-alias module: translate() against the composed tables."""

from __future__ import annotations

import importlib.util
import sys
import warnings
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.helpers import run_cli

from migrator.mapping import compose, load_builtin
from migrator.shims import policy_from_release
from tests.helpers import REPO

V071 = """\
release: v0.7.1
entries:
  - kind: key-rename
    old: p.*
    new: q.*
    pr: 11
  - kind: key-rename
    old: a.b
    new: a.c
    pr: 12
"""
V080 = """\
release: v0.8.0
entries:
  - kind: key-rename
    old: q.k
    new: r.k
    pr: 21
  - kind: key-rename
    old: x.*
    new: y.z.*
    pr: 22
  - kind: key-removal
    old: gone.key
    action: remove
    hint: nothing replaces it
    pr: 23
  - kind: key-removal
    old: warn.key
    action: warn
    hint: 'has no effect; set "other" instead'
    pr: 24
  - kind: key-no-action
    old: internal._target_
    why: generated
    pr: 25
"""


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    base = tmp_path_factory.mktemp("keys")
    (base / "v071.yaml").write_text(V071)
    (base / "v080.yaml").write_text(V080)
    return [base / "v071.yaml", base / "v080.yaml"]


@pytest.fixture(scope="module")
def keys(tables, tmp_path_factory):
    out = tmp_path_factory.mktemp("keys-out") / "deprecated_keys.py"
    args = []
    for t in tables:
        args += ["--table", str(t)]
    result = run_cli("shims", "keys", "--to", "v0.8.0", *args, "--out", str(out))
    assert result.returncode == 0, result.stderr
    spec = importlib.util.spec_from_file_location("deprecated_keys_under_test", out)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def fresh(keys):
    keys._WARNED.clear()
    return keys


@pytest.mark.parametrize("before, after", [
    ("a.b=1", "a.c=1"),
    ("+a.b=1", "+a.c=1"),
    ("++a.b=x=y z", "++a.c=x=y z"),
    ("~a.b", "~a.c"),
    ("~a.b=1", "~a.c=1"),
    ("a.b=", "a.c="),
    ("x.foo.bar=[1,2]", "y.z.foo.bar=[1,2]"),
    ("+x.foo=v", "+y.z.foo=v"),
    ("p.k=5", "r.k=5"),  # p.* -> q.* in v0.7.1, then q.k -> r.k in v0.8.0
    ("p.other=5", "q.other=5"),
    ("q.k=1", "r.k=1"),
    ("warn.key=true", "warn.key=true"),
    ("internal._target_=x", "internal._target_=x"),
    ("a.bc=1", "a.bc=1"),
    ("x=1", "y.z=1"),  # a subtree's root node belongs to the subtree
    ("unknown.key=1", "unknown.key=1"),
    ("--config-name=ppo_trainer", "--config-name=ppo_trainer"),
    ("a.b", "a.b"),  # not an override (no '='): left alone
    ("group@pkg.a.b=1", "group@pkg.a.b=1"),
])
def test_translate(keys, before, after):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert fresh(keys).translate([before]) == [after]


def test_removed_keys_are_dropped_and_order_kept(keys):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert fresh(keys).translate(["z=1", "gone.key=3", "~gone.key", "a.b=2", "w"]) == ["z=1", "a.c=2", "w"]


def test_warns_once_per_key_with_future_warning(keys):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fresh(keys).translate(["a.b=1", "+a.b=2", "warn.key=1", "gone.key=1", "other=1"])
        keys.translate(["a.b=3"])
    messages = [str(w.message) for w in caught]
    assert [w.category for w in caught] == [FutureWarning] * 3
    assert caught[0].filename == __file__
    assert messages[0] == ("verl-migrate: config key 'a.b' is deprecated: use 'a.c' "
                           "(https://github.com/verl-project/verl/pull/12); run: verl-migrate --to v0.8.0 <your scripts>")
    assert 'has no effect; set "other" instead' in messages[1] and "pull/24" in messages[1]
    assert "was removed" in messages[2] and "dropped" in messages[2]


def test_quiet_and_error_modes(keys, monkeypatch):
    monkeypatch.setenv("VERL_MIGRATE_SHIM", "quiet")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert fresh(keys).translate(["a.b=1"]) == ["a.c=1"]
    monkeypatch.setenv("VERL_MIGRATE_SHIM", "error")
    with pytest.raises(keys.DeprecatedOverrideError) as info:
        fresh(keys).translate(["a.b=1", "gone.key=1", "fine=1"])
    assert "'a.b'" in str(info.value) and "'gone.key'" in str(info.value)
    assert fresh(keys).translate(["fine=1"]) == ["fine=1"]


def test_standard_library_only(keys):
    source = open(keys.__file__).read()
    imports = {line.split()[1] for line in source.splitlines() if line.startswith(("import ", "    import "))}
    assert imports <= {"os", "re", "warnings", "shlex", "sys"}


KEY_PARTS = st.sampled_from(["p", "q", "k", "a", "b", "c", "x", "y", "z", "foo", "gone", "key", "warn", "other"])


@pytest.fixture(scope="module")
def composed(tables):
    return compose(load_builtin(), "v0.7.0", "v0.8.0", tables)


def same(got, expected) -> bool:
    if expected is None:
        return got is None
    return got is not None and (got[0], got[1], got[2], list(got[3])) == (
        expected.action, expected.new, expected.hint, list(expected.prs))


@settings(deadline=None)
@given(st.lists(KEY_PARTS, min_size=1, max_size=4))
def test_change_agrees_with_the_composed_mapping(keys, composed, parts):
    key = ".".join(parts)
    assert same(keys.change(key), composed.key(key))


@pytest.mark.parametrize("release", ["v0.8.0", "main"])
def test_committed_key_module_agrees_on_every_known_key(release, monkeypatch):
    """The built-in tables with their facts: every config key verl ever had, through translate's change()."""
    path = REPO / "shims/verl" / release / "verl_migrate_keys.py"
    spec = importlib.util.spec_from_file_location(f"committed_keys_{release.replace('.', '_')}", path)
    module = importlib.util.module_from_spec(spec)
    # No __pycache__ beside the committed shims: test_shims_committed compares that directory file by file.
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    spec.loader.exec_module(module)
    tables = load_builtin()
    mappings = compose(tables, policy_from_release(tables.releases, release), release)
    known = set().union(*(tables.facts.keys(r) for r in tables.releases)) | mappings.old_keys()
    assert len(known) > 1000
    wrong = [k for k in sorted(known) if not same(module.change(k), mappings.key(k))]
    assert wrong == []


def test_keys_command_refuses_to_overwrite_a_real_file(tmp_path):
    real = tmp_path / "mine.py"
    real.write_text("x = 1\n")
    result = run_cli("shims", "keys", "--to", "v0.8.0", "--out", str(real))
    assert result.returncode == 3 and real.read_text() == "x = 1\n"
    fresh_out = tmp_path / "gen.py"
    assert run_cli("shims", "keys", "--to", "v0.8.0", "--out", str(fresh_out)).returncode == 0
    assert run_cli("shims", "keys", "--to", "v0.8.0", "--out", str(fresh_out)).returncode == 0  # ours: updated


def test_cli_lists_shims():
    result = run_cli("shims", "--help")
    assert result.returncode == 0
    for command in ("generate", "install", "check", "keys"):
        assert command in result.stdout
