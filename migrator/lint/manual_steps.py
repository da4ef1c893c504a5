"""VM009 open manual step: a marker comment a migration left where it deleted an argument whose meaning has
no replacement (`# verl-migrate: VM111 removed data.prompt_key (verl #5382): ...`), still in the script.

Example: after `fsdp_sft_trainer` became `sft_trainer`, `data.prompt_key=question` was deleted and the
script now expects multi-turn data (a messages column): until the data is converted, the job trains on
nothing it was meant to. Each marker is reported until a person makes the change and deletes the line.
"""

from __future__ import annotations

from migrator.lint.registry import Problem, check
from migrator.rewrite.shell.markers import OPEN_STEP_HINT, marker_at, open_step_message


@check("VM009", "open-manual-step")
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
                yield Problem(node.start_byte, f"{open_step_message(marker)} ({marker.code}{', ' + prs if prs else ''})",
                              OPEN_STEP_HINT)
            continue
        stack.extend(reversed(node.children))
