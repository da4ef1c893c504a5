"""The facts a process reads (config keys, trees, module facts, entry points) come from the cache while
their files are unchanged, and from the files again as soon as one changes."""

from __future__ import annotations

import os
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from migrator import cache as diskcache
from migrator.config import known_releases
from migrator.mapping import facts as facts_module
from migrator.mapping.facts import ReleaseFacts, read_entry_points
from migrator.mapping.load import builtin_mappings_dir
from tests.helpers import HANG_GUARD, run_cli

SHIPPED = builtin_mappings_dir() / "verl" / "facts"


@pytest.fixture
def facts_dir(tmp_path, monkeypatch):
    """A copy of the shipped facts (edited by the tests), and a cache of this test's own."""
    monkeypatch.setenv("VERL_MIGRATE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("VERL_MIGRATE_NO_CACHE", raising=False)
    directory = tmp_path / "facts"
    for part in ("config-keys", "trees", "modules"):
        shutil.copytree(SHIPPED / part, directory / part)
    shutil.copy(SHIPPED / "entry-points.yaml", directory / "entry-points.yaml")
    return directory


def _read_all(directory: Path, releases: tuple[str, ...]):
    read_entry_points.cache_clear()
    facts = ReleaseFacts(directory)
    return ({r: facts.key_types(r) for r in releases}, {r: facts.paths(r) for r in releases},
            facts._module_releases, facts._module_names,
            {r: {m: (n.defined, n.reexported, n.others) for m, n in names.items()}
             for r, names in facts.module_names(ALL_RELEASES).items()},
            read_entry_points(directory))


RELEASES = ("v0.1", "v0.2.0.post2", "v0.4.1", "v0.6.0", "v0.7.1", "main")
ALL_RELEASES = tuple(known_releases())  # the module facts name every release's place in the order


def test_cached_facts_equal_the_files_read_afresh(facts_dir, monkeypatch):
    first = _read_all(facts_dir, RELEASES)
    entries = sorted(p.name for p in (facts_dir.parent / "cache").glob("facts-*.pickle"))
    assert {e.split("-")[1] for e in entries} == {"entrypoints", "keytypes", "moduleends", "moduleindex",
                                                  "modulenames", "paths"}
    assert sum(e.split("-")[1] == "modulenames" for e in entries) == len(ALL_RELEASES)  # one a release
    monkeypatch.setattr(Path, "read_text", lambda *a, **k: pytest.fail("read a facts file despite the cache"))
    assert _read_all(facts_dir, RELEASES) == first


def test_an_edited_facts_file_is_read_again(facts_dir):
    before = _read_all(facts_dir, RELEASES)[0]["v0.1"]
    keys = facts_dir / "config-keys" / "v0.1.ppo_trainer.keys"
    keys.write_text(keys.read_text(encoding="utf-8") + "brand_new.key\tint\n", encoding="utf-8")
    after = _read_all(facts_dir, RELEASES)[0]["v0.1"]
    assert after == {**before, "brand_new.key": "int"}


def test_a_release_whose_name_starts_another_keeps_its_own_keys(facts_dir):
    (facts_dir / "config-keys" / "v0.2.ppo_trainer.keys").write_text("only.in_v02\tstr\n", encoding="utf-8")
    key_types = _read_all(facts_dir, ("v0.2", "v0.2.0.post2"))[0]
    assert key_types["v0.2"] == {"only.in_v02": "str"}
    assert "only.in_v02" not in key_types["v0.2.0.post2"] and key_types["v0.2.0.post2"]


def test_a_corrupt_or_foreign_entry_is_read_again_from_the_files(facts_dir):
    first = _read_all(facts_dir, RELEASES)
    for entry in (facts_dir.parent / "cache").glob("facts-*.pickle"):
        entry.write_bytes(b"not a pickle")
    assert _read_all(facts_dir, RELEASES) == first


def test_without_a_cache_the_files_are_read(facts_dir, monkeypatch):
    monkeypatch.setenv("VERL_MIGRATE_NO_CACHE", "1")
    assert _read_all(facts_dir, RELEASES)[0]["main"]
    assert not (facts_dir.parent / "cache").exists()


def test_an_edit_to_the_reading_code_is_a_miss(facts_dir, monkeypatch, tmp_path):
    _read_all(facts_dir, RELEASES)
    reader = tmp_path / "facts_reader.py"
    reader.write_text("# another version of the reading code\n")
    monkeypatch.setattr(facts_module, "_READERS", [reader])
    computed = []
    real = diskcache.derived
    monkeypatch.setattr(diskcache, "derived", lambda tag, inputs, compute: real(
        tag, inputs, lambda: (computed.append(tag), compute())[1]))
    _read_all(facts_dir, RELEASES)
    assert "keytypes" in computed


def test_each_fact_keeps_its_two_newest_entries(facts_dir):
    keys = facts_dir / "config-keys" / "v0.1.ppo_trainer.keys"
    for n in range(4):
        keys.write_text(keys.read_text(encoding="utf-8") + f"k{n}.x\tint\n", encoding="utf-8")
        os.utime(keys, ns=(n * 10**9, n * 10**9))
        _read_all(facts_dir, RELEASES)
    assert len(list((facts_dir.parent / "cache").glob("facts-keytypes-*.pickle"))) == 2
    assert len(list((facts_dir.parent / "cache").glob("facts-paths-*.pickle"))) == 1


def test_the_tables_cache_pickles_the_facts_without_what_they_read(facts_dir):
    facts = ReleaseFacts(facts_dir)
    assert facts.key_types("main")
    copy = pickle.loads(pickle.dumps(facts))
    assert copy.directory == facts_dir and "_key_types" not in vars(copy)
    assert copy.key_types("main") == facts.key_types("main")


@pytest.mark.parametrize("releases", [[], ["--from", "v0.6.0"]])
def test_a_warm_run_on_a_launch_script_never_imports_pyyaml(tmp_path, releases):
    # The review of a launch reads the shipped config index and the entry points, and an explicit --from
    # the release list and the paths between releases (VM301): from the cache on a warm run, which then
    # needs no YAML parser at all (its import alone was ~17 ms of every process).
    script = tmp_path / "scripts" / "run.sh"
    script.parent.mkdir()
    script.write_text("#!/bin/bash\npython3 -m verl.trainer.main_ppo "
                      "actor_rollout_ref.rollout.update_weights_bucket_megabytes=1 trainer.n_gpus_per_node=8\n")
    env = {"VERL_MIGRATE_CACHE_DIR": str(tmp_path / "cache"), "VERL_MIGRATE_NO_CACHE": ""}
    cold = run_cli("--check", *releases, script.parent, env=env)
    assert cold.returncode == 1 and "1 file would change" in cold.stderr, cold.stderr
    warm = subprocess.run([sys.executable, "-X", "importtime", "-m", "migrator", "--check", *releases, str(script.parent)],
                          capture_output=True, text=True, env={**os.environ, **env}, timeout=HANG_GUARD)
    assert warm.returncode == 1 and "1 file would change" in warm.stderr, warm.stderr
    imported = {line.rsplit("|", 1)[-1].strip() for line in warm.stderr.splitlines() if line.startswith("import time:")}
    assert "migrator.rewrite.shell.review" in imported  # the review ran
    assert "yaml" not in imported


def test_the_module_facts_of_a_release_are_read_only_when_asked_for(facts_dir, monkeypatch):
    _read_all(facts_dir, RELEASES)  # every release cached
    facts = ReleaseFacts(facts_dir)
    names = facts.module_names(ALL_RELEASES)
    assert "main" in names and list(names) == [r for r in ALL_RELEASES if facts.modules_cover(r, ALL_RELEASES)]
    read = []
    real = diskcache.load
    monkeypatch.setattr(diskcache, "load", lambda key, prefix: (read.append(prefix), real(key, prefix))[1])
    assert names["main"] is names["main"] and "verl" in names["main"]
    assert [p for p in read if p.startswith("facts-modulenames")] == [read[0]] and read[0].endswith("-main-")
    with pytest.raises(KeyError):
        names["v9.9"]


def test_facts_entries_no_run_used_for_a_month_go(facts_dir):
    cache = facts_dir.parent / "cache"
    _read_all(facts_dir, RELEASES)
    month_ago = __import__("time").time() - diskcache.UNUSED_FACTS_SECONDS - 60
    orphan = cache / "facts-oldformat-1234.pickle"  # a tag an older version of the package wrote
    orphan.write_bytes(b"x")
    os.utime(orphan, (month_ago, month_ago))
    used = next(cache.glob("facts-keytypes-*.pickle"))
    os.utime(used, (month_ago, month_ago))
    _read_all(facts_dir, RELEASES)  # a hit touches the entry it reads
    assert used.stat().st_mtime > month_ago + 3600
    keys = facts_dir / "config-keys" / "v0.1.ppo_trainer.keys"
    keys.write_text(keys.read_text(encoding="utf-8") + "another.key\tint\n", encoding="utf-8")
    _read_all(facts_dir, RELEASES)  # a miss stores, and forgets what no run used for a month
    assert not orphan.exists()
    assert list(cache.glob("facts-keytypes-*.pickle"))
