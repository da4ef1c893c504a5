"""Mode bits and extended attributes survive a rewrite, and a read-only file is left alone even for
root (for whom `os.access` always says yes)."""

from __future__ import annotations

import os
import stat

import pytest

from migrator.engine import RunOptions, run, write_atomic

OLD = b"python3 -m verl.trainer.main_ppo actor_rollout_ref.rollout.update_weights_bucket_megabytes=1\n"


def _run(tmp_path, core_mappings):
    return {os.path.basename(r.path): r for r in run(RunOptions([str(tmp_path)], jobs=1), core_mappings)}


@pytest.mark.parametrize("mode", [0o444, 0o400, 0o555, 0o4555])
def test_read_only_file_is_left_alone_whoever_runs(tmp_path, core_mappings, mode):
    script = tmp_path / "ro.sh"
    script.write_bytes(OLD)
    script.chmod(mode)
    (tmp_path / "rw.sh").write_bytes(OLD)
    results = _run(tmp_path, core_mappings)
    assert results["ro.sh"].status == "failed" and "read-only" in results["ro.sh"].reason
    assert script.read_bytes() == OLD and stat.S_IMODE(script.stat().st_mode) == mode
    assert results["rw.sh"].status == "changed" and (tmp_path / "rw.sh").read_bytes() != OLD


@pytest.mark.skipif(os.geteuid() != 0, reason="root: a file owned by someone else, writable by its owner only")
def test_root_writes_a_file_its_owner_may_write(tmp_path, core_mappings):
    script = tmp_path / "theirs.sh"
    script.write_bytes(OLD)
    os.chown(script, 65534, 65534)
    script.chmod(0o644)
    assert _run(tmp_path, core_mappings)["theirs.sh"].status == "changed"
    st = script.stat()
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (65534, 65534, 0o644)


@pytest.mark.parametrize("mode", [0o6755, 0o4755, 0o2775, 0o1777, 0o741])
def test_setuid_setgid_and_sticky_bits_are_kept(tmp_path, mode):
    target = tmp_path / "run.sh"
    target.write_bytes(b"old\n")
    target.chmod(mode)
    write_atomic(str(target), b"old\n", b"new\n")
    assert target.read_bytes() == b"new\n"
    assert oct(stat.S_IMODE(target.stat().st_mode)) == oct(mode)


def _supports_user_xattrs(directory) -> bool:
    probe = directory / "probe"
    probe.write_bytes(b"")
    try:
        os.setxattr(probe, "user.verl_migrate_probe", b"1")
        return True
    except (OSError, AttributeError):
        return False
    finally:
        probe.unlink()


def test_extended_attributes_are_copied(tmp_path, core_mappings):
    if not _supports_user_xattrs(tmp_path):
        pytest.skip("this file system has no user.* extended attributes")
    script = tmp_path / "run.sh"
    script.write_bytes(OLD)
    os.setxattr(script, "user.origin", b"team-a")
    os.setxattr(script, "user.empty", b"")
    assert _run(tmp_path, core_mappings)["run.sh"].status == "changed"
    assert script.read_bytes() != OLD
    assert os.getxattr(script, "user.origin") == b"team-a" and os.getxattr(script, "user.empty") == b""
