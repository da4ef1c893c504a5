"""`read_bytes`: every byte of the file, whatever the reads give back."""

from __future__ import annotations

import os

import pytest

from migrator import fileread
from migrator.fileread import read_bytes


@pytest.mark.parametrize("data", [b"", b"x", b"a=1\r\nb=2\n" * 5000, bytes(range(256)) * 300])
def test_reads_the_whole_file(tmp_path, data):
    path = tmp_path / "f"
    path.write_bytes(data)
    assert read_bytes(str(path)) == data


def test_short_reads_are_read_on_to_the_end(tmp_path, monkeypatch):
    # Linux returns at most ~2 GiB a call and some network file systems less than asked: a short first
    # read is not the end of the file.
    data = os.urandom(100_000)
    path = tmp_path / "f"
    path.write_bytes(data)
    real_read = os.read
    monkeypatch.setattr(fileread.os, "read", lambda fd, n: real_read(fd, min(n, 4096)))
    assert read_bytes(str(path)) == data


def test_a_file_that_grew_after_its_size_was_taken_is_read_to_its_end(tmp_path, monkeypatch):
    path = tmp_path / "f"
    path.write_bytes(b"a=1\n")
    real_fstat = os.fstat

    def fstat_then_append(fd):
        st = real_fstat(fd)
        with open(path, "ab") as fh:
            fh.write(b"b=2\n" * 1000)
        return st

    monkeypatch.setattr(fileread.os, "fstat", fstat_then_append)
    assert read_bytes(str(path)) == b"a=1\n" + b"b=2\n" * 1000


def test_errors_are_oserrors_with_the_reason(tmp_path):
    with pytest.raises(FileNotFoundError):
        read_bytes(str(tmp_path / "missing"))
    with pytest.raises(IsADirectoryError):
        read_bytes(str(tmp_path))
