"""A symlink given as PATH, to a file or to a directory (also as `link/`), is refused by name and
never followed; symlinks met inside a tree stay unfollowed."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.helpers import HANG_GUARD

OLD = b"python3 -m verl.trainer.main_ppo actor_rollout_ref.rollout.update_weights_bucket_megabytes=1\n"


def cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "migrator", "--to", "v0.8.0", *map(str, args)],
                          capture_output=True, text=True, timeout=HANG_GUARD)


@pytest.fixture
def links(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    (real / "a.sh").write_bytes(OLD)
    (tmp_path / "dirlink").symlink_to("real", target_is_directory=True)
    (tmp_path / "filelink.sh").symlink_to("real/a.sh")
    return tmp_path


@pytest.mark.parametrize("given, target", [("dirlink", "real"), ("dirlink/", "real"), ("filelink.sh", "real/a.sh")])
def test_a_symlink_path_is_refused_and_not_followed(links, given, target):
    proc = cli(f"{links}/{given}")
    assert proc.returncode == 3, proc.stderr
    # Named with its reason in the list of files not migrated (VM206: failed).
    assert f"VM206 failed {links}/{given}: is a symlink; pass its target ({links / target})" in proc.stderr
    assert (links / "real" / "a.sh").read_bytes() == OLD
    assert "Traceback" not in proc.stderr


def test_its_target_given_by_name_is_migrated(links):
    proc = cli(links / "real")
    assert proc.returncode == 0, proc.stderr
    assert (links / "real" / "a.sh").read_bytes() != OLD


def test_symlinks_inside_a_tree_stay_unfollowed(links):
    tree = links / "tree"
    tree.mkdir()
    (tree / "dirlink").symlink_to(links / "real", target_is_directory=True)
    (tree / "filelink.sh").symlink_to(links / "real" / "a.sh")
    proc = cli("-v", tree)
    assert proc.returncode == 0, proc.stderr
    assert (links / "real" / "a.sh").read_bytes() == OLD
    assert "filelink.sh: symlink to outside the tree; not written through" in proc.stderr
