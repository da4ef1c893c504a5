"""Cached pickles are code: none is loaded unless it and every directory up to the cache root belong to the
user running the tool and no one else can write them. The suite runs as root, so it can plant files as
another uid (`chown`); each refusal is paired with a control that loads the same plant when it is ours."""

from __future__ import annotations

import os
import pickle
import shutil
import stat
from pathlib import Path

import pytest

from migrator import cache
from tests.helpers import run_cli

pytestmark = pytest.mark.skipif(not hasattr(os, "getuid") or os.getuid() != 0,
                                reason="planting files as another uid needs root (CI runs as root)")

OTHER_UID = 54321

SCRIPT = """\
#!/bin/bash
python3 -m verl.trainer.main_ppo \\
    --config-name=ppo_megatron_trainer \\
    data.train_batch_size=256 \\
    actor_rollout_ref.rollout.name=vllm \\
    trainer.remove_previous_ckpt_in_save=True \\
    actor_rollout_ref.actor.no_such_key=1
"""


class _Plant:
    """Unpickling it makes the directory `marker`: proof that the pickle ran."""

    def __init__(self, marker: Path):
        self.marker = str(marker)

    def __reduce__(self):
        return (os.mkdir, (self.marker,))


def _plant_everywhere(root: Path, markers: Path) -> list[Path]:
    """Replace every pickle of a warm cache with a plant that names its file; return the planted files."""
    planted = []
    for path in sorted(root.rglob("*.pickle")):
        # Named by the path below the root: a table's shards (`verdicts-<version>/3.pickle`) share names.
        name = str(path.relative_to(root)).replace("/", "__").replace(".", "_")
        path.write_bytes(pickle.dumps(_Plant(markers / name)))
        planted.append(path)
    return planted


@pytest.fixture(scope="module")
def warmed(tmp_path_factory) -> Path:
    """A cache the two runs filled from cold, once per module: each test takes a copy of its own."""
    base = tmp_path_factory.mktemp("warmed")
    root = base / "cache"
    scripts = base / "scripts"
    scripts.mkdir()
    (scripts / "run.sh").write_text(SCRIPT)
    env = {"VERL_MIGRATE_CACHE_DIR": str(root), "VERL_MIGRATE_NO_CACHE": ""}
    assert run_cli("lint", "--to", "v0.9.0", scripts, env=env).returncode == 1
    assert run_cli("--check", "--from", "v0.4.1", "--to", "v0.9.0", scripts, env=env).returncode == 1
    return root


def _warm_cache(tmp_path: Path, warmed: Path, composed_entry: bool = True) -> tuple[Path, Path, dict]:
    root = tmp_path / "cache"
    shutil.copytree(warmed, root, symlinks=True)  # modes kept (0o700): the copy is ours alone, as a run makes it
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    (scripts / "run.sh").write_text(SCRIPT)
    env = {"VERL_MIGRATE_CACHE_DIR": str(root), "VERL_MIGRATE_NO_CACHE": ""}
    if composed_entry:  # the base this launch composes: a file on disk is read before the shipped one
        from migrator.verdict.compose import _disk_key
        from migrator.verdict.store import release_configs

        key = _disk_key(release_configs("v0.9.0"), "verl/trainer/config", "ppo_megatron_trainer", ())
        (root / "composed").mkdir(mode=0o700, exist_ok=True)
        (root / "composed" / f"{key}.pickle").write_bytes(b"x")
    return root, scripts, env


def _runs(scripts: Path, env: dict) -> list:
    return [run_cli("lint", "--to", "v0.9.0", scripts, env=env),
            run_cli("--check", "--from", "v0.4.1", "--to", "v0.9.0", scripts, env=env)]


def test_a_pickle_planted_by_another_user_is_never_loaded(tmp_path, warmed):
    root, scripts, env = _warm_cache(tmp_path, warmed)
    markers = tmp_path / "markers"
    markers.mkdir()
    planted = _plant_everywhere(root, markers)
    kinds = {p.relative_to(root).parts[0].split("-")[0] for p in planted}
    assert {"tables", "facts", "parsed", "verdicts", "reviews"} <= kinds and (root / "composed").is_dir()

    # Control: the same plants, ours, are loaded (so the names are the ones a run reads).
    _runs(scripts, env)
    loaded = {m.name.split("-")[0] for m in markers.iterdir()}
    assert {"tables", "facts", "parsed", "verdicts", "reviews"} <= loaded
    assert any(m.name.startswith(("composed", "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "a", "b", "c", "d",
                                  "e", "f")) for m in markers.iterdir())

    for marker in markers.iterdir():
        marker.rmdir()
    planted = _plant_everywhere(root, markers)
    for path in planted:
        os.chown(path, OTHER_UID, OTHER_UID)
    lint, check = _runs(scripts, env)
    assert list(markers.iterdir()) == []
    # ...and the run still gives its answers, computed afresh.
    assert lint.returncode == 1 and "VM007" in lint.stderr
    assert check.returncode == 1 and "1 file would change" in check.stderr


def test_a_directory_of_another_user_inside_the_cache_keeps_its_pickles_out(tmp_path, warmed):
    root, scripts, env = _warm_cache(tmp_path, warmed)
    markers = tmp_path / "markers"
    markers.mkdir()
    _plant_everywhere(root / "composed", markers)
    os.chown(root / "composed", OTHER_UID, OTHER_UID)
    for path in root.glob("verdicts-*"):
        shutil.rmtree(path)  # so the run composes, reading `composed/`
    _runs(scripts, env)
    assert list(markers.iterdir()) == []
    os.chown(root / "composed", 0, 0)
    for path in root.glob("verdicts-*"):
        shutil.rmtree(path)
    _runs(scripts, env)
    assert list(markers.iterdir()) != []  # control: ours, it is read


def test_a_table_directory_of_another_user_keeps_its_shards_out(tmp_path, warmed):
    root, scripts, env = _warm_cache(tmp_path, warmed)
    markers = tmp_path / "markers"
    markers.mkdir()
    (tables,) = root.glob("reviews-*")  # the shell reviews' shards: read by `--check --from`
    assert tables.is_dir() and list(tables.glob("*.pickle"))
    _plant_everywhere(tables, markers)
    os.chown(tables, OTHER_UID, OTHER_UID)
    _runs(scripts, env)
    assert list(markers.iterdir()) == []
    os.chown(tables, 0, 0)
    _runs(scripts, env)
    assert list(markers.iterdir()) != []  # control: ours, its shards are read


@pytest.mark.parametrize("how", ["owned by another user", "group-writable", "world-writable"])
def test_a_cache_root_that_is_not_ours_alone_is_not_used_and_the_run_says_so_once(tmp_path, warmed, how):
    # The old fallback's case: `$TMPDIR/verl-migrate-<uid>` (or XDG_CACHE_HOME on a shared directory),
    # made first by someone else.
    root, scripts, env = _warm_cache(tmp_path, warmed, composed_entry=False)
    markers = tmp_path / "markers"
    markers.mkdir()
    _plant_everywhere(root, markers)
    if how == "owned by another user":
        os.chown(root, OTHER_UID, OTHER_UID)
    else:
        os.chmod(root, 0o770 if how == "group-writable" else 0o707)
    lint, check = _runs(scripts, env)
    assert list(markers.iterdir()) == []
    for result in (lint, check):
        warnings = [line for line in result.stderr.splitlines() if line.startswith("warning: cache directory")]
        assert len(warnings) == 1, result.stderr
        assert str(root) in warnings[0] and "not used" in warnings[0]
    assert "VM007" in lint.stderr and "1 file would change" in check.stderr


def test_the_environment_governs_every_cache_and_nothing_spills_into_the_temp_directory(tmp_path):
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    (scripts / "run.sh").write_text(SCRIPT)
    temp = tmp_path / "tmp"
    temp.mkdir()
    home_file = tmp_path / "home-is-a-file"
    home_file.write_text("")  # ~/.cache cannot be made under it
    base = {"TMPDIR": str(temp), "HOME": str(home_file), "XDG_CACHE_HOME": "", "VERL_MIGRATE_CACHE_DIR": ""}

    off = {**base, "VERL_MIGRATE_NO_CACHE": "1"}
    lint, check = _runs(scripts, off)
    assert "VM007" in lint.stderr and "1 file would change" in check.stderr
    assert list(temp.iterdir()) == []  # the private config tree of each process is gone at its exit

    unwritable = {**base, "VERL_MIGRATE_NO_CACHE": ""}
    lint, check = _runs(scripts, unwritable)
    assert "VM007" in lint.stderr and "1 file would change" in check.stderr
    assert list(temp.iterdir()) == []
    assert "warning: cannot use the cache directory" in lint.stderr

    chosen = tmp_path / "chosen"
    lint, check = _runs(scripts, {**base, "VERL_MIGRATE_NO_CACHE": "", "VERL_MIGRATE_CACHE_DIR": str(chosen)})
    names = {p.name.split("-")[0] for p in chosen.iterdir()}
    assert {"tables", "facts", "parsed", "verdicts", "reviews", "configs"} <= names
    assert list(temp.iterdir()) == []
    assert stat.S_IMODE(chosen.stat().st_mode) == 0o700


# -- the module's own checks, on descriptors -----------------------------------------------------------

@pytest.fixture
def root(tmp_path, monkeypatch):
    path = tmp_path / "root"
    monkeypatch.setenv("VERL_MIGRATE_CACHE_DIR", str(path))
    monkeypatch.delenv("VERL_MIGRATE_NO_CACHE", raising=False)
    cache._checked.clear()
    assert cache.root() == path
    return path


def test_entries_behind_links_fifos_or_foreign_files_are_misses(root, tmp_path):
    assert cache.write("sub/entry.bin", b"data") == root / "sub" / "entry.bin"
    assert cache.read("sub/entry.bin") == b"data"
    os.chown(root / "sub" / "entry.bin", OTHER_UID, 0)
    assert cache.read("sub/entry.bin") is None
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_bytes(b"planted")
    os.symlink(elsewhere, root / "link.bin")
    assert cache.read("link.bin") is None
    os.symlink(tmp_path, root / "linkdir")
    assert cache.read("linkdir/elsewhere") is None
    os.mkfifo(root / "fifo.bin")
    assert cache.read("fifo.bin") is None  # never blocks
    (root / "loose.bin").write_bytes(b"x")
    os.chmod(root / "loose.bin", 0o666)
    assert cache.read("loose.bin") is None


def test_a_failed_write_leaves_no_temp_file(root, monkeypatch):
    def full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", full)
    assert cache.write("entry.bin", b"data") is None
    assert cache.store_pickle("other.pickle", {"a": 1}) is None
    assert [p.name for p in root.iterdir()] == []


def test_a_damaged_materialized_tree_is_rebuilt(root):
    from migrator.verdict import store

    configs = store.release_configs("v0.9.0")
    tree = store.materialize.__wrapped__(configs)
    target = tree / "verl/trainer/config/ppo_trainer.yaml"
    original = target.read_bytes()
    target.write_bytes(original.replace(b"actor_rollout_ref", b"damaged", 1))
    assert store.materialize.__wrapped__(configs) == tree
    assert target.read_bytes() == original
    (tree / "verl/trainer/config/extra.yaml").write_text("a: 1\n")  # an extra option of a group
    store.materialize.__wrapped__(configs)
    assert not (tree / "verl/trainer/config/extra.yaml").exists()
    assert [p.name for p in (root / "configs").iterdir()] == [configs.digest]
