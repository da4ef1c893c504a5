"""One tree holding every hostile shape of the third reliability round at once, beside ordinary files,
through one real run: each hostile file is migrated or skipped with its reason, every ordinary file
comes out exactly as a run on the ordinary files alone leaves it, the exit code is the documented one
(0: skips are no failures), the JSON report is UTF-8, and no lock or temp file is left."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.helpers import HANG_GUARD, run_cli

OLD_KEY = "actor_rollout_ref.rollout.update_weights_bucket_megabytes"
BUCKET = OLD_KEY.rsplit(".", 1)[1]
LAUNCH = f"python3 -m verl.trainer.main_ppo {OLD_KEY}=512 trainer.total_epochs=1\n"
OLD_IMPORT = "import verl.utils.reward_score.math\n"
ANOTHER_UID = 54321


def _notebook(*cells: str, metadata: str = "{}") -> str:
    code = ", ".join(f'{{"cell_type": "code", "metadata": {{}}, "outputs": [], "source": [{c}]}}' for c in cells)
    return f'{{"cells": [{code}], "metadata": {metadata}, "nbformat": 4, "nbformat_minor": 5}}'


BANG = json.dumps(f"!{LAUNCH}")

ORDINARY = {  # migrated the same with or without the hostile files beside them
    "run.sh": f"#!/bin/bash\n{LAUNCH}",
    "launcher.py": f"{OLD_IMPORT}import subprocess\nsubprocess.run(['bash', '-c', '{LAUNCH.strip()}'])\n",
    "config.yaml": f"actor_rollout_ref:\n  rollout:\n    {BUCKET}: 512\n    name: vllm\n",
    "notes.md": f"Run `{LAUNCH.strip()}`.\n",
    "cells.ipynb": _notebook(BANG),
    "sub/deeper/train.sh": f"#!/bin/bash\nexport VLLM_ATTENTION_BACKEND=XFORMERS\n{LAUNCH}",
}

# name -> (bytes, the outcome: a status, and for a skip the start of its reason)
HOSTILE: dict[bytes, tuple[bytes, str, str]] = {
    b"minuses.py": ((OLD_IMPORT + "x = " + "-" * 50_000 + "a\n").encode(), "skipped", "nested too deeply"),
    b"sum.py": ((OLD_IMPORT + "x = a" + "+a" * 3_500 + "\n").encode(), "skipped", "nested too deeply"),
    b"brackets.py": ((OLD_IMPORT + "x = " + "(" * 2_000 + "a" + ")" * 2_000 + "\n").encode(), "skipped",
                     "nested too deeply"),
    b"heredoc.sh": (("#!/bin/bash\ncat <<EOF\n" + "a" * 32_000 + "\nEOF\n" + LAUNCH).encode(), "changed", ""),
    b"arrays.sh": (("#!/bin/bash\n" + "x=(\n" * 2_000 + LAUNCH).encode(), "skipped", "the script does not pass"),
    b"bigint.yaml": (f"actor_rollout_ref:\n  rollout:\n    {BUCKET}: 512\n    seed: {'1' * 5_001}\n".encode(),
                     "changed", ""),
    b"baddate.yaml": (f"actor_rollout_ref:\n  rollout:\n    {BUCKET}: 512\n    day: 2001-13-45\n".encode(),
                      "changed", ""),
    b"deep.yaml": ((f"actor_rollout_ref:\n  rollout:\n    {BUCKET}: 512\nx: " + "[" * 500 + "]" * 500 + "\n").encode(),
                   "skipped", "nested too deeply to check safely"),
    b"set.yaml": (f"!!set\n? a\nactor_rollout_ref:\n  rollout:\n    {BUCKET}: 1\n".encode(), "unchanged", ""),
    b"flow.yaml": (f"{{actor_rollout_ref: {{rollout: {{{BUCKET}: 512}}}}}}\n".encode(), "unchanged", ""),
    b"intsource.ipynb": (_notebook(f"5, {BANG}").encode(), "skipped", "not a notebook: the source of cell 1"),
    b"surrogate.ipynb": (_notebook(f'"x = \'\\ud800\\u0041\'\\n", {BANG}').encode(), "changed", ""),
    b"deep.ipynb": (_notebook(BANG, metadata='{"x": ' + "[" * 100_000 + "]" * 100_000 + "}").encode(), "skipped",
                    "not a parsable notebook: its JSON is nested too deeply"),
    b"blocks.md": (f"1. Config:\n\n   ```yaml\n   actor_rollout_ref:\n     rollout:\n       {BUCKET}: 512\n   ```\n\n"
                   f"2. Code:\n\n   ```python\n   {OLD_IMPORT}   ```\n".encode(), "changed", ""),
    b"not-utf8-\xff.sh": (f"#!/bin/bash\n{LAUNCH}".encode(), "changed", ""),
}


def _write(root: Path, files: dict) -> None:
    for name, data in files.items():
        path = os.path.join(os.fsencode(root), name if isinstance(name, bytes) else name.encode())
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as fh:
            fh.write(data if isinstance(data, bytes) else data.encode())


def _read(root: Path, name) -> bytes:
    with open(os.path.join(os.fsencode(root), name if isinstance(name, bytes) else name.encode()), "rb") as fh:
        return fh.read()


def _leftovers(root: Path) -> list[bytes]:
    return [os.path.join(d, n) for d, _, names in os.walk(os.fsencode(root)) for n in names
            if n.startswith(b".verl-migrate")]


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory):
    base = tmp_path_factory.mktemp("hostile-tree")
    reference = base / "reference"
    _write(reference, ORDINARY)
    clean = run_cli("--to", "v0.8.0", reference)
    assert clean.returncode == 0, clean.stderr
    shared = base / "shared"  # a world-writable parent, as /tmp is
    shared.mkdir()
    shared.chmod(0o1777)
    root = shared / "tree"
    _write(root, ORDINARY)
    _write(root, {name: data for name, (data, _, _) in HOSTILE.items()})
    os.mkfifo(shared / ".verl-migrate.lock")  # a FIFO of the lock's name above the root: never opened
    proc = run_cli("--to", "v0.8.0", "--output-format", "json", root, text=False, timeout=HANG_GUARD)
    yield reference, root, proc


def test_the_run_ends_with_the_documented_code_and_no_traceback(hostile_run):
    _, _, proc = hostile_run
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert b"Traceback" not in proc.stderr + proc.stdout


def test_every_ordinary_file_is_migrated_as_it_is_alone(hostile_run):
    reference, root, _ = hostile_run
    for name in ORDINARY:
        assert _read(root, name) == _read(reference, name), name
    assert _read(root, "run.sh") != ORDINARY["run.sh"].encode()  # there was work to do


def test_each_hostile_file_is_migrated_or_skipped_with_its_reason(hostile_run):
    _, root, proc = hostile_run
    report = json.loads(proc.stdout.decode("utf-8"))  # strict UTF-8, with the name that is not
    by_name = {os.path.basename(os.fsencode(f["path"])): f for f in report["files"]}
    for name, (data, status, reason) in HOSTILE.items():
        row = by_name.get(name, {"status": "unchanged", "reason": None})
        assert row["status"] == status, (name, row)
        assert (row["reason"] or "").startswith(reason), (name, row)
        if status != "changed":
            assert _read(root, name) == data, name
    assert by_name[b"flow.yaml"]["findings"][0]["code"] == "VM113"
    assert OLD_KEY.encode() not in _read(root, b"heredoc.sh").split(b"EOF\n")[-1]


def test_no_lock_and_no_temp_file_is_left(hostile_run):
    _, root, _ = hostile_run
    assert _leftovers(root) == []
    assert (root.parent / ".verl-migrate.lock").is_fifo()


@pytest.mark.skipif(os.geteuid() != 0, reason="planting a lock as another user needs root (chown)")
def test_a_lock_planted_in_the_shared_parent_stops_nothing(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    root = shared / "tree"
    _write(root, ORDINARY)
    _write(root, {name: data for name, (data, _, _) in HOSTILE.items() if name.endswith(b".py")})
    planted = shared / ".verl-migrate.lock"
    planted.write_text('{"pid": 1, "host": "%s", "started": "x", "started_epoch": 1}' % os.uname().nodename)
    os.chown(planted, ANOTHER_UID, ANOTHER_UID)
    proc = run_cli("--to", "v0.8.0", root)
    assert proc.returncode == 0, proc.stderr
    assert _read(root, "run.sh") != ORDINARY["run.sh"].encode()
    assert _leftovers(root) == [] and planted.exists()
    shutil.rmtree(root)
