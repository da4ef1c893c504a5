"""The names that show a Python file may hand a string to the shell are the Python locator's own calls."""

from __future__ import annotations

import pytest

from migrator.mapping import compose, load_builtin
from migrator.rewrite.shell_strings import SHELL_STRING_CALLS, shell_only_groups


@pytest.mark.parametrize("call", sorted(SHELL_STRING_CALLS) + ["subprocess.run"])
def test_every_call_that_hands_a_string_to_the_shell_lets_its_file_through_and_gets_the_default(call):
    """The prefilter passes a Python file whose only old token is one shell launches need (`main_ppo`)
    exactly when it spells a name of such a call, and the locator then edits the command string."""
    from migrator.filekind import build_prefilter
    from migrator.rewrite import python

    mappings = compose(load_builtin(), "v0.5.0")
    extra = ", shell=True" if call == "subprocess.run" else ""
    source = (f'import os\nimport subprocess\n{call}("python3 -m verl.trainer.main_ppo trainer.nnodes=1"{extra})\n'
              ).encode()
    assert build_prefilter(mappings)(source, "python")
    edits = python.locate(source, mappings).edits
    assert [e.replacement for e in edits if e.kind == "value-default"] == [b" actor_rollout_ref.rollout.name=vllm"]
    unnamed = source.replace(call.rsplit(".", 1)[1].encode(), b"run_it").replace(b"shell=True", b"check=True")
    assert not build_prefilter(mappings)(unnamed, "python")  # no such call: the file is not even read further


def test_only_the_tokens_python_does_not_act_on_are_paired():
    mappings = compose(load_builtin(), "v0.5.0")
    groups = shell_only_groups(mappings, "python")
    assert ("main_ppo", "system") in groups and ("main_ppo", "shell") in groups
    assert {token for token, _ in groups} == set(mappings.old_tokens_for("shell") - mappings.old_tokens_for("python"))
    assert not shell_only_groups(mappings, "yaml")
