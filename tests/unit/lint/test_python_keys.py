"""VM003 in Python files and in a script's `python3 - <<'PY'` program (migrator/lint/python_keys.py): the keys
the Python rewriter would rename or remove, at the places it would edit."""

from __future__ import annotations

import pytest

from migrator.lint.facts import load_facts
from migrator.lint.runner import lint_python_source, lint_source
from migrator.mapping import compose, load_builtin

OLD = "actor_rollout_ref.rollout.update_weights_bucket_megabytes"
NEW = "actor_rollout_ref.rollout.checkpoint_engine.update_weights_bucket_megabytes"
LAUNCHER = f'import subprocess\n\nsubprocess.run(["python3", "-m", "verl.trainer.main_ppo", "{OLD}=512"])\n'


@pytest.fixture(scope="module")
def mappings():
    return compose(load_builtin(), None, "v0.9.0", [])


def test_a_launchers_override_string_with_a_renamed_key(mappings):
    report = lint_python_source(LAUNCHER.encode(), "launch.py", mappings, None, "v0.9.0")
    (found,) = report.findings
    assert (found.code, found.line, found.col, found.key) == ("VM003", 3, LAUNCHER.splitlines()[2].index(OLD) + 1, OLD)
    assert found.message.startswith(f"`{OLD}` was renamed to `{NEW}`")
    assert found.hint == "run `verl-migrate --to v0.9.0` on this file"


def test_a_key_the_target_still_has_and_a_suppressed_line_say_nothing(mappings):
    kept = LAUNCHER.replace(OLD, NEW)
    assert lint_python_source(kept.encode(), "launch.py", mappings, None, "v0.9.0").findings == []
    silenced = LAUNCHER.replace('=512"])', '=512"])  # verl-migrate: ignore[VM003]')
    assert lint_python_source(silenced.encode(), "launch.py", mappings, None, "v0.9.0").findings == []
    # Without the prefilter's leave (no table entry can change the file) the keys are not looked at.
    assert lint_python_source(LAUNCHER.encode(), "launch.py", mappings, None, "v0.9.0", keys=False).findings == []


def test_the_program_of_a_python_heredoc_is_linted_in_place(mappings):
    script = f"#!/bin/bash\nset -e\npython3 - <<'PY'\n{LAUNCHER}PY\n"
    report = lint_source(script.encode(), "run.sh", load_facts(), mappings, "v0.9.0")
    (found,) = [f for f in report.findings if f.code == "VM003"]
    assert (found.line, found.key) == (6, OLD) and found.col == LAUNCHER.splitlines()[2].index(OLD) + 1
    unquoted = script.replace("<<'PY'", "<<PY")  # bash expands the body first: not Python as written
    assert not [f for f in lint_source(unquoted.encode(), "run.sh", load_facts(), mappings, "v0.9.0").findings
                if f.code == "VM003"]
