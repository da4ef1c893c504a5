"""Manual steps leave a trace (rewrite/shell/markers.py): a removed argument whose meaning has no replacement
leaves one marker comment before its command, in the script's line ending; a second run adds none and
reports the marker again, as does lint (VM009); where no comment line is legal the argument stays. Real
tables: SFT's `data.prompt_key` has no place in sft_trainer (verl#5382)."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from migrator.fileprocess import process_file
from migrator.mapping import compose, load_builtin
from migrator.rewrite.shell.markers import marker_line

SFT = b"torchrun --nproc_per_node=2 -m verl.trainer.fsdp_sft_trainer"
MARKER = (b"# verl-migrate: VM111 removed data.prompt_key (verl #5382): sft_trainer reads only multi-turn data: "
          b"convert the parquet to a messages column")


@pytest.fixture(scope="module")
def maps():
    return compose(load_builtin(), "v0.6.1", "v0.9.0", [])


def run(maps, src: bytes):
    result = process_file("run.sh", "run.sh", maps, data=src)
    assert result.status in ("changed", "unchanged"), result.reason
    return result, result.after or src


def bash_n(data: bytes) -> None:
    if shutil.which("bash"):
        assert subprocess.run(["bash", "-n"], input=data.replace(b"\r\n", b"\n"), capture_output=True).returncode == 0


def test_a_deleted_manual_step_leaves_a_marker_before_its_command(maps):
    src = b"set -x\n  " + SFT + b" \\\n    data.train_files=t.parquet \\\n    data.prompt_key=q \\\n    trainer.total_epochs=1\n"
    result, after = run(maps, src)
    lines = after.split(b"\n")
    assert lines[1].startswith(b"  " + MARKER)  # the command's own indentation, one line
    assert lines[2].startswith(b"  torchrun ") and b"data.prompt_key" not in lines[2] + b"".join(lines[3:])
    bash_n(after)
    assert [f.line for f in result.findings if "removed data.prompt_key" in f.message] == [4]  # in the original


def test_the_marker_takes_the_scripts_line_ending(maps):
    src = SFT + b" \\\r\n    data.prompt_key=q \\\r\n    data.train_files=t.parquet\r\n"
    _, after = run(maps, src)
    first, rest = after.split(b"\r\n", 1)
    assert first.startswith(MARKER) and rest.startswith(b"torchrun ")
    assert after.count(b"\n") == after.count(b"\r\n")
    bash_n(after)


def test_a_second_run_adds_no_marker_and_reports_the_open_step(maps):
    src = SFT + b" \\\n    data.prompt_key=q \\\n    data.train_files=t.parquet\n"
    _, once = run(maps, src)
    again, twice = run(maps, once)
    assert again.status == "unchanged" and twice == once
    (open_step,) = [f for f in again.findings if "open manual step" in f.message]
    assert (open_step.line, open_step.code, open_step.severity, open_step.prs) == (1, "VM111", "manual", (5382,))
    assert "removed data.prompt_key" in open_step.message
    # Deleting the marker closes the step.
    done, _ = run(maps, once.split(b"\n", 1)[1])
    assert not [f for f in done.findings if "open manual step" in f.message]


def test_an_argument_stays_where_no_comment_line_is_legal(maps):
    # The command starts on a line that continues the one before: a comment line there would end it.
    src = b"NCCL_DEBUG=WARN \\\n" + SFT + b" \\\n    data.prompt_key=q \\\n    data.train_files=t.parquet\n"
    result, after = run(maps, src)
    assert b"    data.prompt_key=q \\\n" in after and b"# verl-migrate: VM" not in after
    assert [f.message for f in result.findings if "prompt_key" in f.message] == [
        "data.prompt_key was removed; delete it by hand"]
    bash_n(after)


def test_inside_a_command_substitution_no_marker_is_placed(maps):
    src = b'OUT="$(' + SFT + b' data.prompt_key=q data.train_files=t.parquet)"\n'
    result, after = run(maps, src)
    assert b"data.prompt_key=q" in after and b"# verl-migrate: VM" not in after
    bash_n(after)


def test_a_marker_line_is_one_line_whatever_the_note():
    line = marker_line("VM111", "data.x", (1, 2), "first\nsecond\r\n  third")
    assert line == b"# verl-migrate: VM111 removed data.x (verl #1, #2): first second third"
