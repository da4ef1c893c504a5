"""A string value's edits, under the rule for fork entry points the shell rewriter follows: a command in it
that runs a module verl does not ship at the files' release (`python -m verl.trainer.main_grpo ...`, a fork's
own entry point with its vendored config) keeps its keys, and one note (VM157) says why."""

from __future__ import annotations

import re

from migrator.edits import Edit, Finding
from migrator.rewrite import literal
from migrator.rewrite.shell.entrypoint import fork_launch, fork_note

_KEY = re.compile(rb"[A-Za-z_][\w.-]*")


def scalar_edits(src: bytes, start: int, end: int, maps, **options) -> tuple[list[Edit], list[Finding]]:
    """`literal.text_edits` of src[start:end], less the key and value edits and findings after a fork's entry word."""
    edits, findings = literal.text_edits(src, start, end, maps, **options)
    fork = fork_launch(src[start:end], maps)
    if fork is None:
        return edits, findings
    after = start + fork[0]

    def about_key(kind: str, at: int) -> bool:
        return at > after and kind.startswith(("key-", "value-"))

    left = [at for at in sorted({e.start for e in edits if about_key(e.kind, e.start)} |
                                {f.offset for f in findings if about_key(f.kind, f.offset)})]
    if not left:
        return edits, findings
    keys = [m.group().decode("ascii") for at in left if (m := _KEY.match(src, at)) is not None]
    return ([e for e in edits if not about_key(e.kind, e.start)],
            [f for f in findings if not about_key(f.kind, f.offset)] + [fork_note(after, fork[1], keys)])
