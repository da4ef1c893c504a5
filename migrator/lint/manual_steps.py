"""VM009 open manual step: a marker comment a migration left where it deleted an argument whose meaning has
no replacement (`# verl-migrate: VM111 removed data.prompt_key (verl #5382): ...`), still in the script;
reported with the code the marker names (VM111), as the rewrite reports it.

Example: after `fsdp_sft_trainer` became `sft_trainer`, `data.prompt_key=question` was deleted and the
script now expects multi-turn data (a messages column): until the data is converted, the job trains on
nothing it was meant to. Each marker is reported until a person makes the change and deletes the line.
"""

from __future__ import annotations

from migrator.codes import RULES, finding_code
from migrator.lint.registry import Problem, check
from migrator.rewrite.shell.markers import OPEN_STEP_HINT, marker_at, open_step_message

# The code a marker names (the rewrite's removal that left it, VM111): the rewrite reports an open marker
# with it, and so does the lint (one problem, one code); VM009 still selects and silences these in lint.
MARKER_CODE = finding_code("key-removal", "manual")


@check("VM009", "open-manual-step", also=(MARKER_CODE,))
def open_manual_steps(script):
    if b"# verl-migrate: VM" not in script.src:
        return
    stack = [script.tree.root_node]
    while stack:
        node = stack.pop()
        if node.type == "comment":
            marker = marker_at(script.src, node.start_byte, node.end_byte)
            if marker is not None:
                prs = ", ".join(f"verl#{pr}" for pr in marker.prs)
                code = marker.code if marker.code in RULES else None
                said = prs if code else ", ".join(filter(None, [marker.code, prs]))
                yield Problem(node.start_byte, open_step_message(marker) + (f" ({said})" if said else ""),
                              OPEN_STEP_HINT, code=code)
            continue
        stack.extend(reversed(node.children))
