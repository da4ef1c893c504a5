"""The composed-table cache: hit, invalidation on a table edit, corrupt or unwritable cache ignored."""

from __future__ import annotations

import shutil

import pytest

from migrator import cache, tablecache
from tests.helpers.trees import OLD_SCRIPT, TABLE, run_with_table

NEW_KEY = b"actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu"


@pytest.fixture
def setup(tmp_path):
    table = tmp_path / "table.yaml"
    shutil.copy(TABLE, table)
    script = tmp_path / "tree" / "run.sh"
    script.parent.mkdir()
    script.write_text(OLD_SCRIPT)
    return table, script.parent, tmp_path / "cache"


def _entries(cache):
    return sorted(cache.glob("tables-*.pickle"))


def test_second_run_uses_the_cache(setup, monkeypatch):
    table, _, cache = setup
    monkeypatch.setenv("VERL_MIGRATE_CACHE_DIR", str(cache))
    first = tablecache.composed("main", "main", (str(table),))
    assert len(_entries(cache)) == 1

    def no_compose(*args, **kwargs):
        raise AssertionError("composed again despite an unchanged table")

    monkeypatch.setattr("migrator.mapping.compose", no_compose)
    mappings, check = tablecache.composed("main", "main", (str(table),))
    assert mappings.key("actor_rollout_ref.actor.ppo_micro_batch_size").new == first[0].key(
        "actor_rollout_ref.actor.ppo_micro_batch_size").new
    assert check(b"train_tp=1")


def test_editing_a_table_invalidates_the_cache(setup):
    table, tree, cache = setup
    env = {"VERL_MIGRATE_CACHE_DIR": str(cache)}
    first = run_with_table("--diff", str(tree), table=table, env=env)
    assert NEW_KEY in first.stdout
    assert len(_entries(cache)) == 1
    table.write_bytes(table.read_bytes().replace(NEW_KEY, b"actor_rollout_ref.actor.micro_batch_size_v2"))
    second = run_with_table("--diff", str(tree), table=table, env=env)
    # The edited table is read: its rename is planned, then backed out (main has no such key: Hydra would
    # reject it) and reported.
    assert ("actor_rollout_ref.actor.ppo_micro_batch_size -> actor_rollout_ref.actor.micro_batch_size_v2: "
            "not applied") in second.stderr.decode()
    assert NEW_KEY not in second.stdout
    assert len(_entries(cache)) == 2


def test_corrupt_cache_is_ignored(setup):
    table, tree, cache = setup
    env = {"VERL_MIGRATE_CACHE_DIR": str(cache)}
    expected = run_with_table("--diff", str(tree), table=table, env=env)
    for entry in _entries(cache):
        entry.write_bytes(b"\x80\x05 not a pickle")
    again = run_with_table("--diff", str(tree), table=table, env=env)
    assert again.returncode == 0, again.stderr
    assert again.stdout == expected.stdout and NEW_KEY in again.stdout
    for entry in _entries(cache):
        entry.write_bytes(b"")
    assert run_with_table("--diff", str(tree), table=table, env=env).stdout == expected.stdout


def test_unwritable_or_disabled_cache_never_breaks_a_run(setup):
    table, tree, cache = setup
    cache.write_text("a file where the cache directory should be")
    blocked = run_with_table("--diff", str(tree), table=table, env={"VERL_MIGRATE_CACHE_DIR": str(cache)})
    assert blocked.returncode == 0, blocked.stderr
    assert NEW_KEY in blocked.stdout
    off_dir = cache.parent / "off"
    off = run_with_table("--diff", str(tree), table=table, env={"VERL_MIGRATE_CACHE_DIR": str(off_dir),
                                                         "VERL_MIGRATE_NO_CACHE": "1"})
    assert NEW_KEY in off.stdout and not off_dir.exists()


def test_table_errors_still_reported_with_a_warm_cache(setup):
    table, tree, cache = setup
    env = {"VERL_MIGRATE_CACHE_DIR": str(cache)}
    run_with_table("--check", str(tree), table=table, env=env)
    table.write_text("entries:\n- kind: key-rename\n  old: a.b\n  pr: 1\n")
    broken = run_with_table("--check", str(tree), table=table, env=env)
    assert broken.returncode == 2
    assert b"missing field(s) new" in broken.stderr


def test_cache_dir_resolution(monkeypatch, tmp_path):
    monkeypatch.delenv("VERL_MIGRATE_CACHE_DIR", raising=False)
    monkeypatch.delenv("VERL_MIGRATE_NO_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache.configured_root() == tmp_path / "verl-migrate"
    monkeypatch.setenv("VERL_MIGRATE_CACHE_DIR", str(tmp_path / "x"))
    assert cache.configured_root() == tmp_path / "x"
    monkeypatch.setenv("VERL_MIGRATE_NO_CACHE", "1")
    assert cache.configured_root() is None


def test_the_key_follows_builtin_files_by_their_stat_without_reading_them(tmp_path, monkeypatch):
    # The built-in facts are 5 MB: the key stats them. Touching one (as an edit or a reinstall does)
    # changes the key; nothing under the built-in directory is read to make it.
    from pathlib import Path

    import migrator.mapping.load as load

    builtin = tmp_path / "mappings"
    shutil.copytree(load.builtin_mappings_dir() / "verl", builtin / "verl",
                    ignore=shutil.ignore_patterns("configs", "entry-config-keys"))
    monkeypatch.setattr(load, "builtin_mappings_dir", lambda: builtin)
    first = tablecache.cache_key("v0.1", None, ())
    real = Path.read_bytes
    monkeypatch.setattr(Path, "read_bytes", lambda self: (_ for _ in ()).throw(AssertionError(self))
                        if builtin in self.parents else real(self))
    assert tablecache.cache_key("v0.1", None, ()) == first
    facts = builtin / "verl" / "facts" / "prs.tsv"
    import os

    st = facts.stat()
    os.utime(facts, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))  # rewritten a second later, same size
    assert tablecache.cache_key("v0.1", None, ()) != first


def test_a_new_table_composes_over_the_cached_builtin_tables(setup, monkeypatch):
    # Each new --table misses the composed cache; the built-in tables under it come from their own
    # entry, so only the new table is parsed.
    table, _, cache = setup
    monkeypatch.setenv("VERL_MIGRATE_CACHE_DIR", str(cache))
    tablecache.composed("main", "main", (str(table),))
    assert len(list(cache.glob("builtin-*.pickle"))) == 1

    import migrator.mapping as mapping

    monkeypatch.setattr(mapping, "load_builtin", lambda: (_ for _ in ()).throw(AssertionError("parsed again")))
    other = table.parent / "other.yaml"
    other.write_bytes(table.read_bytes() + b"\n")
    mappings, _ = tablecache.composed("main", "main", (str(other),))
    assert mappings.key("actor_rollout_ref.actor.ppo_micro_batch_size") is not None


def test_the_shipped_hydra_configs_are_no_input_of_the_tables(tmp_path, monkeypatch):
    # 300 files the tables never read (only Hydra's verdicts do): stat'ing them took half the key's time.
    import os

    import migrator.mapping.load as load

    builtin = tmp_path / "mappings"
    shutil.copytree(load.builtin_mappings_dir() / "verl", builtin / "verl",
                    ignore=shutil.ignore_patterns("blobs", "entry-config-keys"))
    monkeypatch.setattr(load, "builtin_mappings_dir", lambda: builtin)
    first = tablecache.builtin_key()
    configs = builtin / "verl" / "facts" / tablecache.HYDRA_CONFIGS
    index = next(configs.rglob("*.yaml"))
    os.utime(index, ns=(0, 10**9))
    (configs / "new.yaml").write_text("x: 1\n")
    assert tablecache.builtin_key() == first
    keys = next((builtin / "verl" / "facts" / "config-keys").glob("*.keys"))
    os.utime(keys, ns=(0, 10**9))
    assert tablecache.builtin_key() != first


def test_the_key_follows_every_module_that_names_prefilter_tokens(monkeypatch):
    """The cache holds the prefilter too: the modules whose constants `build_prefilter` adds to the tables'
    tokens (the shell-string call names, callback names, import roots, the manual-step marker) are inputs of
    the key, so editing one of them (a new shell call name) recomposes instead of reusing a stale filter."""
    import inspect
    import re
    from pathlib import Path

    import migrator
    from migrator import filekind

    stated = []
    monkeypatch.setattr(tablecache, "add_stat_signatures", lambda digest, inputs: stated.extend(inputs))
    assert tablecache.builtin_key() is not None
    package = Path(migrator.__file__).resolve().parent
    names = set(re.findall(r"from migrator\.([\w.]+) import", inspect.getsource(filekind)))
    modules = {package / (name.replace(".", "/") + ".py") for name in names}
    modules = {m if m.is_file() else m.with_suffix("") / "__init__.py" for m in modules}
    deciding = {m for m in modules if m.relative_to(package).parts[0] not in ("codes.py", "fileread.py")}
    assert deciding and deciding <= {Path(p).resolve() for p in stated}
