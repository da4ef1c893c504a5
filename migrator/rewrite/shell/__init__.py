"""Shell scripts (bash): locate old Hydra keys, script paths, modules, env and shell variables.

Parsed with tree-sitter-bash, which parses verl's scripts (arrays, `$(( ))`, `case`) where bashlex
fails, and keeps parse errors local. The tree is only used to *classify* bytes (argument, string,
comment, heredoc, assignment); every edit is a byte span of the original source.

Modules, each importing only those above it: `syntax` (parser, byte classes), `removal_spans`, `plan`
(one script's bytes, mappings, edits and findings), then the planners, each an object with its own state
handed the plan and the planners it needs: `removals` (removed arguments per command), `defaults` (old
defaults of keys made mandatory), `launches` (entry points, and the config each key belongs to), `keys`,
`moves`, `variables`; `locator` (the one walker, which builds them), `validity` (the proof that skips
`bash -n`, and `bash -n`), `overrides` (read-only view for the lint).
"""

from __future__ import annotations

from migrator.rewrite.shell.locator import locate
from migrator.rewrite.shell.overrides import override_occurrences
from migrator.rewrite.shell.syntax import ARGUMENT_TYPES, LITERAL_TYPES, SCRIPT_RUNNERS, WORD_BOUNDARY, parse

# A test that patches a name patches it where the code looks it up (`validity.BASH_N_TIMEOUT`): this is a
# copy of the binding.
from migrator.rewrite.shell.validity import BASH_N_TIMEOUT, edits_keep_validity, validate

KIND = "shell"


def review_edits(before: bytes, after: bytes, applied: list, mappings):
    """Hydra's second look at the applied edits (`review.py`), also for launch commands embedded in other
    files (`embedded.block_edits`); imported on first use, as the engine does through `REWRITERS`. (Not
    named `review`: importing the submodule sets that attribute of this package.)"""
    from migrator.rewrite.shell.review import review as hydra_review

    return hydra_review(before, after, applied, mappings)

__all__ = [
    "ARGUMENT_TYPES", "BASH_N_TIMEOUT", "KIND", "LITERAL_TYPES", "SCRIPT_RUNNERS", "WORD_BOUNDARY",
    "edits_keep_validity", "locate", "override_occurrences", "parse", "review_edits", "validate",
]
