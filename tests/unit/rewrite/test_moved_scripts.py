"""Moves of scripts by their proof (migrator/rewrite/moved_scripts.py), on a small release index whose
facts prove one move the same, one different, one not at all, and a chain of two
(tests/fixtures/tables/script_moves_releases/)."""

from __future__ import annotations

from functools import lru_cache

import pytest

from migrator.fileprocess import process_file
from migrator.mapping import compose
from migrator.mapping.load import load_release_index
from tests.helpers import FIXTURES

INDEX = FIXTURES / "tables" / "script_moves_releases"


@lru_cache(maxsize=None)
def _mappings(unsafe: bool):
    mappings = compose(load_release_index(INDEX), None, "v0.9.0", [])
    mappings.unsafe_fixes = unsafe
    return mappings


def run(source: str, name: str = "run.sh", unsafe: bool = False):
    return process_file(name, name, _mappings(unsafe), data=source.encode())


def codes(result) -> list[str]:
    return [f.code for f in result.findings]


def test_a_move_proven_the_same_is_a_plain_move_and_says_nothing():
    result = run("bash examples/run_same_old.sh trainer.nnodes=1\n")
    assert result.after == b"bash examples/run_same_new.sh trainer.nnodes=1\n"
    assert result.findings == []


def test_a_move_onto_a_script_that_trains_something_else_is_a_manual_step_with_the_differences():
    source = "set -e\nbash examples/run_dapo.sh trainer.nnodes=1 \"$@\"\n"
    result = run(source)
    assert result.status == "unchanged" and codes(result) == ["VM103"]
    finding = result.findings[0]
    assert finding.severity == "manual" and finding.line == 2 and finding.prs == (202,)
    # What the run trains on and what rewards it first, six of the eight, then how many more.
    assert ("examples/run_dapo.sh moved to examples/run_gsm8k.sh (verl#202), which trains something else: "
            "8 settings differ (data.train_files $HOME/data/dapo-math-17k.parquet -> $HOME/data/gsm8k/train.parquet; "
            "reward.reward_manager.name dapo -> naive; actor_rollout_ref.actor.clip_ratio_c 10.0 -> 3.0; ") \
        in finding.message
    assert "; and 2 more); not moved" in finding.message
    assert finding.message.endswith("run it as `NNODES=4 bash examples/run_gsm8k.sh`")
    assert "--unsafe-fixes" in finding.hint
    again = run(source)  # nothing was written: the next run reports it again
    assert again.status == "unchanged" and [f.message for f in again.findings] == [finding.message]


def test_unsafe_fixes_make_the_move_and_still_say_what_differs():
    result = run("bash examples/run_dapo.sh trainer.nnodes=1\n", unsafe=True)
    assert result.after == b"NNODES=4 bash examples/run_gsm8k.sh trainer.nnodes=1\n"
    assert codes(result) == ["VM104"] and result.findings[0].severity == "warning"
    assert "reward.reward_manager.name dapo -> naive" in result.findings[0].message
    again = run(result.after.decode(), unsafe=True)
    assert again.status == "unchanged" and again.findings == []


def test_an_unproven_move_says_it_is_unproven():
    result = run("bash examples/run_unknown.sh\n")
    assert result.status == "unchanged" and codes(result) == ["VM103"]
    assert ("examples/run_unknown.sh moved to examples/run_known.sh (verl#203), which is not proven to train what "
            "the old script trained (no training command recorded for the old script); not moved: to train what "
            "the new script trains, write `examples/run_known.sh` in its place") == result.findings[0].message


def test_a_chain_of_moves_lists_what_differs_from_the_first_script_to_the_last():
    # run_first -> run_second sets trainer.nnodes 1 -> 2, run_second -> run_third back to 1: only the logger differs.
    result = run("bash examples/run_first.sh\n")
    message = result.findings[0].message
    assert codes(result) == ["VM103"] and "(verl#101, verl#204)" in message
    assert "1 setting differs (trainer.logger console -> [console,wandb])" in message


def test_a_directory_move_has_no_proof_and_stays_a_plain_move():
    result = run("bash examples/old_dir/run.sh\n")
    assert result.after == b"bash examples/new_dir/run.sh\n" and result.findings == []


@pytest.mark.parametrize("source", ["# see examples/run_dapo.sh\n", "echo done  # was examples/run_dapo.sh\n"])
def test_a_comment_naming_a_held_move_is_left_as_it_is(source):
    result = run(source)
    assert result.status == "unchanged" and result.findings == []


def test_python_strings_and_yaml_values_get_the_same_finding():
    launcher = run('import os\nos.system("bash examples/run_dapo.sh")\nSCRIPT = "examples/run_unknown.sh"\n',
                   "launch.py")
    assert launcher.status == "unchanged" and codes(launcher) == ["VM103", "VM103"]
    assert launcher.findings[0].message.endswith("run it as `NNODES=4 bash examples/run_gsm8k.sh`")
    config = run("script: examples/run_unknown.sh\n", "job.yaml")
    assert config.status == "unchanged" and codes(config) == ["VM103"]
    made = run('SCRIPT = "examples/run_unknown.sh"\n', "launch.py", unsafe=True)
    assert made.after == b'SCRIPT = "examples/run_known.sh"\n' and codes(made) == ["VM104"]


def test_with_unsafe_fixes_presets_that_cannot_be_placed_stay_the_same_manual_step_that_says_what_differs():
    # No edit either way (the presets have no command to go before): the engine has nothing to decide, and
    # --unsafe-fixes reports what the safe run reports.
    for source, name in (('SCRIPT = "examples/run_dapo.sh"\n', "launch.py"),
                         ("echo examples/run_dapo.sh\n", "run.sh")):  # not the script a command runs
        result = run(source, name, unsafe=True)
        assert result.status == "unchanged" and codes(result) == ["VM103"]
        assert "which trains something else: 8 settings differ (" in result.findings[0].message
        assert result.findings[0].message.endswith("(by hand here)")
        assert [f.message for f in run(source, name).findings] == [f.message for f in result.findings]


def test_in_docs_and_notebooks_the_manual_step_of_a_held_move_is_at_the_line_that_names_the_script():
    # The move's finding travels with its edit out of the code block or cell into the file that holds it.
    doc = run("# Runs\n\nSome text.\n\n```bash\nset -e\nbash examples/run_dapo.sh trainer.nnodes=1\n```\n", "README.md")
    assert doc.status == "unchanged" and codes(doc) == ["VM103"] and doc.findings[0].line == 7
    made = run("# Runs\n\n```bash\nbash examples/run_dapo.sh\n```\n", "README.md", unsafe=True)
    assert codes(made) == ["VM104"] and made.findings[0].line == 4
    assert b"NNODES=4 bash examples/run_gsm8k.sh" in made.after
    notebook = ('{"cells": [{"cell_type": "markdown", "metadata": {}, "source": ["# Runs"]}, '
                '{"cell_type": "code", "metadata": {}, "execution_count": null, "outputs": [], '
                '"source": ["import os\\n", "os.system(\\"bash examples/run_unknown.sh\\")\\n"]}], '
                '"metadata": {}, "nbformat": 4, "nbformat_minor": 5}\n')
    held = run(notebook, "runs.ipynb")
    assert held.status == "unchanged" and codes(held) == ["VM103"] and held.findings[0].line == 1
    made = run(notebook, "runs.ipynb", unsafe=True)
    assert codes(made) == ["VM104"] and b"examples/run_known.sh" in made.after
