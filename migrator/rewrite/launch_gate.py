"""Does a file launch verl, and does a piece of text hold what Hydra reads? The rule a rename of an override
obeys outside shell syntax (Python strings): renamed where verl's Hydra reads the text, elsewhere a manual
step with the exact replacement (`rename_not_read`), as a removal is."""

from __future__ import annotations

import functools
import re

from migrator.edits import Edit, Finding

_OVERRIDE_WORD = re.compile(rb"(?:\+\+|\+|~)?[A-Za-z_][\w.@/-]*=\S*\Z")


@functools.lru_cache(maxsize=1)
def launch_pattern() -> re.Pattern:
    """A verl launch as a launcher spells it: `-m verl.x` in a command string or as two list items
    (`"-m", "verl.x"`), or a python word then a script under verl's roots (`python3 verl/trainer/main_ppo.py`,
    `"python3", "/opt/verl/trainer/main_ppo.py"`). Not an import of an entry module (verl's own
    ray_trainer imports helpers from main_ppo) nor a path alone (a docstring)."""
    from migrator.layout import verl_layout

    roots = b"|".join(re.escape(r.encode()) for r in verl_layout().roots)
    return re.compile(rb"""-m['"]?[ \t,]*['"]?(?:""" + roots + rb""")\.|\bpython[\w.]*['"]?[ \t,]+['"]?"""
                      rb"""(?:[\w.~$/{}-]*/)?(?:""" + roots + rb""")/[\w/]+\.py\b""")


def launches_verl(src: bytes) -> bool:
    return launch_pattern().search(src) is not None


def hydra_reads(text: bytes, file_launches: bool) -> bool:
    """Is an override in `text` (one string of a file) read by verl's Hydra? Only in a file that launches
    verl, and only where the string is one override (a list item), holds the launch itself, or is nothing
    but overrides and flags (`"a.b=1 c.d=2"`, joined into a command); prose (`"set a.b=1 to tune"`) is not."""
    if not file_launches:
        return False
    words = text.split()
    if len(words) <= 1 or launch_pattern().search(text):
        return True
    return all(_OVERRIDE_WORD.match(w) or w.startswith(b"-") for w in words)


def rename_not_read(start: int, key: str, new: str, replacement: bytes, prs: tuple[int, ...]) -> Finding:
    """A rename where Hydra does not read the text (`echo`, a user's tool, prose, a file that launches
    nothing): the same rule as a removal, a manual step with the exact replacement (VM113)."""
    return Finding(start, "key-rename", f"{key} -> {new}: not edited here, where no verl command reads it; "
                   f"write `{replacement.decode()}` in its place if this names verl's key", None, prs)


def edit_not_read(edit: Edit, old: bytes) -> Finding:
    """An override's edit (`old`: the text it would replace) where Hydra does not read the text: the manual
    step of its kind (VM113 for a key; VM164, VM165, VM167 for a value) with the exact replacement."""
    if edit.kind == "key-rename":
        return rename_not_read(edit.start, old.decode("ascii", "replace"), edit.replacement.decode(),
                               edit.replacement, edit.prs)
    return Finding(edit.start, edit.kind, f"{edit.message}: not edited here, where no verl command reads it; "
                   f"write `{edit.replacement.decode()}` in its place if this is verl's override", None, edit.prs)
