"""Bugs the property tests and the fuzzer found, pinned as plain examples."""

from __future__ import annotations

import subprocess
import sys

import pytest

from migrator.cli import load_mappings
from migrator.engine import FileResult, process_file
from migrator.report import unified_diff

MAPPINGS = load_mappings(None, "v0.8.0", ())
REMOVED = b"data.val_batch_size"


@pytest.mark.parametrize("source, expected", [
    (b"python3 -m x \\\n    ~data.val_batch_size \\\n    ~data.val_batch_size\n", b"python3 -m x\n"),
    (b"python3 -m x \\\n  a.b=1 \\\n  data.val_batch_size=1 \\\n  data.val_batch_size=2 \\\n  data.val_batch_size=3\n"
     b"echo next\n", b"python3 -m x \\\n  a.b=1\necho next\n"),
    (b"python3 -m x \\\r\n  a.b=1 \\\r\n  data.val_batch_size=1 \\\r\n  data.val_batch_size=2\r\necho next\r\n",
     b"python3 -m x \\\r\n  a.b=1\r\necho next\r\n"),
    (b"python3 -m x \\\n  data.val_batch_size=1 \\\n  data.val_batch_size=2 \\\n  a.b=1\n", b"python3 -m x \\\n  a.b=1\n"),
    (b"ARGS=(\n  data.val_batch_size=1\n  data.val_batch_size=2\n)\n", b"ARGS=(\n)\n"),
])
def test_consecutive_removed_arguments_go_in_one_run(source, expected):
    first = process_file("run.sh", "run.sh", MAPPINGS, data=source)
    assert first.status == "changed" and first.after == expected
    assert sum(e.kind == "key-removal" for e in first.edits) == source.count(REMOVED)
    assert process_file("run.sh", "run.sh", MAPPINGS, data=first.after).status == "unchanged"


def test_diff_of_a_file_with_a_lone_cr_applies_with_patch(tmp_path):
    before = b"echo a\rb\npython3 -m x actor_rollout_ref.rollout.update_weights_bucket_megabytes=1\necho c\n"
    after = before.replace(b"rollout.update", b"rollout.checkpoint_engine.update")
    diff = unified_diff(FileResult("s.sh", "changed", before=before, after=after))
    assert b"No newline" not in diff
    (tmp_path / "s.sh").write_bytes(before)
    proc = subprocess.run(["patch", "-p1", "--binary", "--quiet"], input=diff, cwd=tmp_path, capture_output=True)
    if proc.returncode == 127:
        pytest.skip("no patch(1)")
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "s.sh").read_bytes() == after


def test_bash_syntax_error_reason_names_the_line(tmp_path):
    script = tmp_path / "broken.sh"
    script.write_bytes(b"#!/bin/bash\n\nif then\npython3 -m x data.val_batch_size=1\n")
    out = subprocess.run([sys.executable, "-m", "migrator", "--to", "v0.8.0", str(script)], capture_output=True,
                         text=True, timeout=60)
    assert "does not pass `bash -n` before any edit: line 3: syntax error near unexpected token `then'" in out.stderr
