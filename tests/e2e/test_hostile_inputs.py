"""Hostile and odd inputs in one real run: none prints a traceback or stops the run, files we can't
edit safely are left byte-for-byte as they were, and every other file is still migrated."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import HANG_GUARD

OLD_KEY = b"actor_rollout_ref.rollout.update_weights_bucket_megabytes"
NEW_KEY = b"actor_rollout_ref.rollout.checkpoint_engine.update_weights_bucket_megabytes"
LINE = b"python3 -m verl.trainer.main_ppo " + OLD_KEY + b"=512 trainer.total_epochs=1\n"
# Big: past every buffer a run reads, parses or pipes through (1 MiB reads, 64 KiB pipes to `bash -n`) many
# times over, and a thousand times the largest real launch script. 50 MiB cost the suite 15 CPU-s more.
BIG = 16 * 1024 * 1024

FILES: dict[bytes, bytes] = {
    b"control.sh": b"#!/bin/bash\n" + LINE,
    b"latin1.sh": b"#!/bin/bash\n# r\xe9glages du caf\xe9 \xa9 2024\n" + LINE + b"echo '\xe9t\xe9'\n",
    b"bom.sh": b"\xef\xbb\xbf#!/bin/bash\n" + LINE,
    b"mixed_eol.sh": b"#!/bin/bash\r\necho one\n" + LINE.replace(b"\n", b"\r\n") + b"echo cr\r\r\n\t" + LINE,
    b"nul.sh": b"#!/bin/bash\necho \x00\n" + LINE,
    b"random.sh": bytes(range(256)) * 4 + LINE,
    b"utf16.sh": "#!/bin/bash\n".encode("utf-16") + LINE.decode().encode("utf-16-le"),
    b"empty.sh": b"",
    b"only_newlines.sh": b"\n\n\r\n",
    b"big_with_token.sh": b"#!/bin/bash\n" + (b"#" * 4095 + b"\n") * (BIG // 4096) + LINE,
    b"big_without_token.sh": b"#!/bin/bash\n" + (b"#" * 4095 + b"\n") * (BIG // 4096),
    b"unparseable.sh": b"#!/bin/bash\nif then fi (((\n" + LINE,
    b"name with spaces.sh": LINE,
    "ünïcödé-名前.sh".encode(): LINE,
    b"new\nline.sh": LINE,
    b"not-utf8-\xff\xfe.sh": LINE,
    b"x.sh/inner.sh": LINE,  # a directory named x.sh
    b"no_extension": b"#!/usr/bin/env bash\n" + LINE,
    b"data.csv": LINE,  # not a kind we rewrite
}
MIGRATED = {b"control.sh", b"latin1.sh", b"bom.sh", b"mixed_eol.sh", b"big_with_token.sh", b"name with spaces.sh",
            "ünïcödé-名前.sh".encode(), b"new\nline.sh", b"not-utf8-\xff\xfe.sh", b"x.sh/inner.sh", b"no_extension"}


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory):
    base = tmp_path_factory.mktemp("hostile")
    root = base / "tree"
    outside = base / "outside"
    outside.mkdir()
    for name, data in FILES.items():
        path = os.path.join(bytes(root), name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as fh:
            fh.write(data)
    (outside / "theirs.sh").write_bytes(LINE)
    (root / "link_out.sh").symlink_to(outside / "theirs.sh")
    (root / "link_in.sh").symlink_to(root / "control.sh")
    (root / "loop_a.sh").symlink_to(root / "loop_b.sh")
    (root / "loop_b.sh").symlink_to(root / "loop_a.sh")
    (root / "dangling.sh").symlink_to(base / "missing.sh")
    (root / "dirlink").symlink_to(outside, target_is_directory=True)
    proc = subprocess.run([sys.executable, "-m", "migrator", "--to", "v0.8.0", "-v", str(root)],
                          capture_output=True, timeout=HANG_GUARD)
    yield root, outside, proc


def read(root: Path, name: bytes) -> bytes:
    with open(os.path.join(bytes(root), name), "rb") as fh:
        return fh.read()


def test_run_completes_without_traceback(hostile_run):
    _, _, proc = hostile_run
    assert b"Traceback" not in proc.stderr and b"Traceback" not in proc.stdout
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert b"files changed" in proc.stderr


@pytest.mark.parametrize("name", sorted(MIGRATED))
def test_every_ordinary_file_is_still_migrated(hostile_run, name):
    root, _, _ = hostile_run
    assert read(root, name) == FILES[name].replace(OLD_KEY, NEW_KEY)


def test_latin1_bytes_are_preserved_exactly(hostile_run):
    root, _, _ = hostile_run
    after = read(root, b"latin1.sh")
    assert b"r\xe9glages du caf\xe9 \xa9 2024" in after and b"'\xe9t\xe9'" in after


def test_bom_and_line_endings_are_preserved(hostile_run):
    root, _, _ = hostile_run
    assert read(root, b"bom.sh").startswith(b"\xef\xbb\xbf#!/bin/bash\n")
    after = read(root, b"mixed_eol.sh")
    assert after.count(b"\r\n") == FILES[b"mixed_eol.sh"].count(b"\r\n")
    assert after.count(b"\r") == FILES[b"mixed_eol.sh"].count(b"\r")


@pytest.mark.parametrize("name, reason", [(b"nul.sh", b"binary file"), (b"random.sh", b"binary file"),
                                          (b"utf16.sh", b"UTF-16")])
def test_binary_and_utf16_files_are_skipped_untouched(hostile_run, name, reason):
    root, _, proc = hostile_run
    assert read(root, name) == FILES[name]
    assert b"skipped " + os.path.join(bytes(root), name) + b": " + reason in proc.stderr


@pytest.mark.parametrize("name", [b"empty.sh", b"only_newlines.sh", b"big_without_token.sh", b"data.csv"])
def test_files_without_work_are_untouched(hostile_run, name):
    root, _, _ = hostile_run
    assert read(root, name) == FILES[name]


def test_unparseable_script_is_left_alone_and_reported(hostile_run):
    root, _, proc = hostile_run
    assert read(root, b"unparseable.sh") == FILES[b"unparseable.sh"]
    assert b"unparseable.sh: the script does not pass `bash -n` before any edit: line 2: syntax error" in proc.stderr


def test_symlink_out_of_the_tree_is_never_written_through(hostile_run):
    root, outside, proc = hostile_run
    assert (outside / "theirs.sh").read_bytes() == LINE
    assert (root / "link_out.sh").is_symlink()
    assert b"link_out.sh: symlink to outside the tree; not written through" in proc.stderr


def test_symlink_inside_the_tree_stays_a_symlink(hostile_run):
    root, _, _ = hostile_run
    assert (root / "link_in.sh").is_symlink() and os.readlink(root / "link_in.sh") == str(root / "control.sh")


def test_symlink_loops_and_dangling_links_are_skipped(hostile_run):
    root, _, proc = hostile_run
    for name in (b"loop_a.sh", b"loop_b.sh", b"dangling.sh"):
        assert os.path.islink(os.path.join(bytes(root), name))
        assert name + b": broken symlink or symlink loop" in proc.stderr


def test_directory_symlinks_are_not_followed(hostile_run):
    root, outside, proc = hostile_run
    assert (outside / "theirs.sh").read_bytes() == LINE
    assert b"dirlink" not in proc.stderr


def test_no_temp_or_lock_files_remain(hostile_run):
    root, _, _ = hostile_run
    leftovers = [name for _, _, names in os.walk(root) for name in names if name.startswith(".verl-migrate")]
    assert leftovers == []


def test_single_file_symlink_argument_is_not_written_through(tmp_path):
    outside = tmp_path / "outside.sh"
    outside.write_bytes(LINE)
    (tmp_path / "tree").mkdir()
    link = tmp_path / "tree" / "link.sh"
    link.symlink_to(outside)
    proc = subprocess.run([sys.executable, "-m", "migrator", "--to", "v0.8.0", str(link)], capture_output=True,
                          timeout=HANG_GUARD)
    assert b"Traceback" not in proc.stderr
    assert outside.read_bytes() == LINE and link.is_symlink()
