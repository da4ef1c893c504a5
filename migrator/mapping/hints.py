"""A removal's hint names the key to use instead as it was then (`critic.model.fsdp_config.optimizer_offload`,
v0.3.0.post1); later releases may have renamed that key too. The composed hint names it as the target
release spells it, so a user is never sent to a key the target no longer has."""

from __future__ import annotations

import re

from migrator.mapping.kind import Role

# A dotted config key inside prose: not part of a path (`a/b.sh`), a URL (`...html#a.b`), a version, a
# `file:` or `pkg:` reference, or a file name (`a.b.yaml`).
_KEY_IN_TEXT = re.compile(r"(?<![\w./#:=-])[A-Za-z_]\w*(?:\.[A-Za-z_][\w-]*)+(?![\w/#-]|\.\w)")
_FILE_SUFFIXES = frozenset({"yaml", "yml", "py", "sh", "json", "md", "html", "txt", "toml", "cfg"})


def hint_at_target(hint: str | None, later_steps) -> str | None:
    """`hint` with each key it names followed through the renames of `later_steps` (the steps after the
    removal); a key a later step removes too stays as written (its own entry reports it)."""
    if not hint:
        return hint

    def final(match: re.Match) -> str:
        name = current = match.group(0)
        if name.rpartition(".")[2] in _FILE_SUFFIXES:
            return name
        for step in later_steps:
            found = step.key_entry(current)
            if found is None or found[0].unit.role is Role.NO_ACTION:
                continue
            if found[0].unit.role is Role.REMOVAL:
                return name
            current = found[1]
        return current

    return _KEY_IN_TEXT.sub(final, hint)
