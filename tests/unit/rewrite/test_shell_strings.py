"""The names that show a Python file may hand a string to the shell are the Python locator's own calls."""

from __future__ import annotations

from migrator.mapping import compose, load_builtin
from migrator.rewrite.python.locator import SHELL_STRING_CALLS
from migrator.rewrite.shell_strings import CALL_NAMES, shell_only_groups


def test_every_call_the_python_locator_hands_to_the_shell_is_named():
    handed = {call.rsplit(".", 1)[-1] for call in SHELL_STRING_CALLS} | {"shell"}  # and `shell=True`
    assert handed == set(CALL_NAMES["python"])


def test_only_the_tokens_python_does_not_act_on_are_paired():
    mappings = compose(load_builtin(), "v0.5.0")
    groups = shell_only_groups(mappings, "python")
    assert ("main_ppo", "system") in groups and ("main_ppo", "shell") in groups
    assert {token for token, _ in groups} == set(mappings.old_tokens_for("shell") - mappings.old_tokens_for("python"))
    assert not shell_only_groups(mappings, "yaml")
