"""Mode bits and extended attributes survive a rewrite, and a read-only file is left alone even for
root (for whom `os.access` always says yes)."""

from __future__ import annotations

import os
import stat

import pytest

from migrator.engine import RunOptions, run, write_atomic

OLD = b"python3 x.py actor_rollout_ref.rollout.update_weights_bucket_megabytes=1\n"


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
