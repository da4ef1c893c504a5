"""A `--table` is read exactly once, so it may be a pipe (`--table <(cat mine.yaml)`, i.e. /dev/fd/N)
or a FIFO; a FIFO that nobody writes to fails with a clear error instead of hanging."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pytest

from migrator.mapping import TableError, load_table
from migrator.mapping import load as table_load
from tests.helpers import HANG_GUARD

TABLE = b"""entries:
- kind: key-rename
  old: my_section.old_knob
  new: my_section.new_knob
  pr: 1
"""
SCRIPT = b"python3 -m verl.trainer.main_ppo my_section.old_knob=1\n"


def test_process_substitution(tmp_path):
    (tmp_path / "t.yaml").write_bytes(TABLE)
    (tmp_path / "run.sh").write_bytes(SCRIPT)
    for cached in ("1", ""):  # without the cache, and with it (its key reads the table too)
        proc = subprocess.run(["bash", "-c", f'"{sys.executable}" -m migrator --to main --table <(cat t.yaml) run.sh'],
                              cwd=tmp_path, capture_output=True, text=True, timeout=HANG_GUARD,
                              env={**os.environ, "VERL_MIGRATE_NO_CACHE": cached,
                                   "VERL_MIGRATE_CACHE_DIR": str(tmp_path / "cache")})
        assert proc.returncode == 0, proc.stderr
        assert (tmp_path / "run.sh").read_bytes() == b"python3 -m verl.trainer.main_ppo my_section.new_knob=1\n"
        (tmp_path / "run.sh").write_bytes(SCRIPT)


def test_a_fifo_with_a_writer(tmp_path, deadline):
    fifo = tmp_path / "t.fifo"
    os.mkfifo(fifo)

    def write():
        time.sleep(0.3)  # the reader is already waiting
        with open(fifo, "wb") as fh:
            fh.write(TABLE)

    writer = threading.Thread(target=write)
    writer.start()
    table = load_table(fifo)
    writer.join()
    assert [e.old for e in table.entries] == ["my_section.old_knob"]


def test_a_fifo_without_a_writer_fails_instead_of_hanging(tmp_path, monkeypatch, deadline):
    fifo = tmp_path / "t.fifo"
    os.mkfifo(fifo)
    monkeypatch.setattr(table_load, "FIFO_WAIT_SECONDS", 0.5, raising=False)
    with pytest.raises(TableError, match="a pipe or FIFO that nothing wrote to in 0.5 s"):
        load_table(fifo)  # nothing ever writes: only the wait's own limit ends it (`deadline` fails a hang)


def test_a_directory_is_not_a_table(tmp_path):
    with pytest.raises(TableError, match="is a directory"):
        load_table(tmp_path)
