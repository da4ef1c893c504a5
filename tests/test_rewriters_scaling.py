"""Locating edits is linear in the number of edits: no per-edit rescan of the file or of a line."""

from __future__ import annotations

import time

from migrator.tablecache import composed
from migrator.rewrite import shell

MAPPINGS = composed(None, "v0.8.0", ())[0]
KEY = b"actor_rollout_ref.rollout.update_weights_bucket_megabytes"


def _renames_in_one_array(count: int) -> bytes:
    # One array on one line: its elements were looked up by a list scan each (quadratic).
    elements = b" ".join(b"%s=%d" % (KEY, i) for i in range(count))
    return b"ARGS=(" + elements + b')\npython3 -m verl.trainer.main_ppo "${ARGS[@]}"\n'


def _locate_seconds(source: bytes, count: int) -> float:
    started = time.perf_counter()
    located = shell.locate(source, MAPPINGS)
    elapsed = time.perf_counter() - started
    assert len(located.edits) == count
    return elapsed


def test_twenty_thousand_renames_in_one_file_locate_in_linear_time():
    shell.parse(b"warm up\n")
    half = _locate_seconds(_renames_in_one_array(10_000), 10_000)
    full = _locate_seconds(_renames_in_one_array(20_000), 20_000)
    assert full < 10, full
    assert full < 3 * max(half, 0.05), (half, full)  # quadratic would be 4x
