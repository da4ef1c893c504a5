"""A full disk (ENOSPC), an exceeded quota (EDQUOT) or an I/O error while writing: that file fails with
the reason, keeps its bytes, leaves no temp file, the run goes on and exits 3, no traceback."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import uuid

import pytest

from migrator.engine import RunOptions, run
from tests.helpers import HANG_GUARD

OLD = b"python3 -m verl.trainer.main_ppo actor_rollout_ref.rollout.update_weights_bucket_megabytes=1\n"


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EDQUOT, errno.EIO])
def test_a_failing_write_fails_that_file_only(tmp_path, core_mappings, monkeypatch, code):
    for name in ("a.sh", "b.sh"):
        (tmp_path / name).write_bytes(OLD)
    real_fsync = os.fsync

    def fsync(fd):
        if ".verl-migrate-a.sh." in os.readlink(f"/proc/self/fd/{fd}"):  # a.sh's temp copy: the disk is full
            raise OSError(code, os.strerror(code))
        return real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    notes = []
    results = {os.path.basename(r.path): r for r in run(RunOptions([str(tmp_path)], jobs=1), core_mappings,
                                                         on_note=notes.append)}
    monkeypatch.undo()
    assert results["a.sh"].status == "failed"
    assert results["a.sh"].reason == f"could not write: {os.strerror(code)}"
    assert (tmp_path / "a.sh").read_bytes() == OLD
    assert results["b.sh"].status == "changed" and (tmp_path / "b.sh").read_bytes() != OLD
    assert sorted(os.listdir(tmp_path)) == ["a.sh", "b.sh"]  # no temp file, no lock left
    assert f"error: {tmp_path / 'a.sh'}: could not write: {os.strerror(code)}" in notes


@pytest.fixture
def tiny_tmpfs(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    mount = tmp_path / "disk"
    mount.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)],
                      capture_output=True).returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    yield mount
    subprocess.run(["umount", str(mount)], check=True)


def _fill(directory) -> None:
    try:
        with open(directory / f"filler-{uuid.uuid4().hex}", "wb") as fh:
            while True:
                fh.write(b"x" * 1024)
                fh.flush()
    except OSError as exc:
        assert exc.errno == errno.ENOSPC


def test_a_full_disk_through_the_cli(tiny_tmpfs):
    script = tiny_tmpfs / "run.sh"
    script.write_bytes(b"#" * 20000 + b"\n" + OLD)
    original = script.read_bytes()
    _fill(tiny_tmpfs)
    proc = subprocess.run([sys.executable, "-m", "migrator", "--to", "v0.8.0", str(tiny_tmpfs)],
                          capture_output=True, text=True, timeout=HANG_GUARD)
    assert proc.returncode == 3, proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    assert f"error: {script}: could not write: No space left on device" in proc.stderr
    assert "running without a lock there" in proc.stderr  # not even the lock file fits
    assert script.read_bytes() == original
    assert sorted(p.name for p in tiny_tmpfs.iterdir() if not p.name.startswith("filler-")) == ["run.sh"]
