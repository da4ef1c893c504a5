"""File kinds that hand strings to the shell rewriter, and the names that show a file may.

Python's locator runs a command string through the shell rewriter when a shell runs it
(`python.locator.shell_command`: `os.system`, `os.popen`, `shell=True`, `subprocess.getoutput`), so a
token only shell launches need (a value default's `main_ppo`, `EntryKind.token_kinds`) matters in a
Python file that also spells one of those names, and only there: a launcher's
`subprocess.run([..., "-m", "verl.trainer.main_ppo"])` runs no shell. Markdown and notebooks hand their
shell blocks over whole: the kinds say so themselves (`token_kinds`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from migrator.mapping import MappingSet

# Calls that always hand their string to a shell; any other subprocess call does with `shell=True`.
SHELL_STRING_CALLS = frozenset({"os.system", "os.popen", "subprocess.getoutput", "subprocess.getstatusoutput"})
SHELL_KEYWORD = "shell"
# The last names of those calls, and the keyword, by the kind whose locator hands such strings to the shell.
CALL_NAMES = {"python": tuple(sorted({call.rsplit(".", 1)[1] for call in SHELL_STRING_CALLS} | {SHELL_KEYWORD}))}


def shell_only_groups(mappings: MappingSet, kind: str) -> set[tuple[str, str]]:
    """The tokens only the shell rewriter acts on that `kind` does not act on itself, each paired with
    every name that makes `kind` hand a string to the shell: a group counts where both are whole names."""
    names = CALL_NAMES.get(kind, ())
    if not names:
        return set()
    shell_only = mappings.tokens_not_for(kind) - mappings.tokens_not_for("shell")
    return {(token, name) for token in shell_only for name in names}
