"""What becomes of one repository path (a script, or anything under a moved directory) from --from to
--to: moves chain and gather their env presets and args, a removal ends the chain; a move must land on
a path the target release ships (precision rules)."""

from __future__ import annotations

import dataclasses
import re
from functools import cache

from migrator.layout import verl_layout
from migrator.mapping.changes import PathChange
from migrator.mapping.kind import Role
from migrator.mapping.precision import path_lands
from migrator.mapping.script_moves import chained


@cache
def _hint_path_re() -> re.Pattern:
    """A script path a removal's hint names as the replacement (`use examples/x/run_y.sh with ...`)."""
    roots = "|".join(map(re.escape, verl_layout().script_roots))
    return re.compile(rf"(?<![\w/.-])((?:{roots})/[\w./-]+\.(?:sh|py|yaml))")


def _proof(facts, path: str, chain: list):
    """The verdict on the chain of script moves that took `path` where it is now, from the facts (None: a
    user's table made a step, or a directory move did: no proof is shipped)."""
    if facts is None or any(entry.old.endswith("/") for entry in chain):
        return None
    return chained([facts.script_move(entry.origin.release, entry.old, entry.new) for entry in chain])


class PathChanges:
    def __init__(self, steps, precision, to_release: str):
        self.steps = steps  # the ReleaseRange
        self.precision = precision
        self.to_release = to_release
        self._cache: dict = {}

    def path(self, path: str, _following: frozenset = frozenset()) -> PathChange | None:
        """The composed change for a repository-relative path, or None."""
        try:
            return self._cache[path]
        except KeyError:
            pass
        current, chain, env, args = path, [], {}, []
        result = None
        for step in self.steps.for_name(path, "path"):
            found = step.path_entry(current)
            if found is None:
                continue
            entry, after = found
            chain.append(entry)
            if entry.unit.role is Role.REMOVAL:
                result = PathChange(path, None, tuple(env.items()), tuple(args), entry.hint, tuple(chain))
                result = self._hint_followed(result, _following | {path})
                break
            env.update(entry.env)
            args.extend(entry.args)
            current = after
        else:
            if chain and current != path:
                facts = self.precision.facts_for(chain)
                result = PathChange(path, current, tuple(env.items()), tuple(args), None, tuple(chain),
                                    _proof(facts, path, chain))
                if facts is not None and not path_lands(facts, current, self.to_release):
                    result = PathChange(path, None, (), (), f"the table moves it to {current}, which verl "
                                        f"{self.to_release} does not ship: find its successor by hand", tuple(chain))
        self._cache[path] = result
        return result

    def _hint_followed(self, removal: PathChange, following: frozenset) -> PathChange:
        """The removal with the replacement its hint names followed through the rest of the range: a
        replacement that a later release moved is named at its new path, one it removed says so (with that
        removal's own hint). A hint written at v0.7.0 otherwise sends a v0.9.0 user to a file #4795 deleted."""
        later, cited = [], []

        def follow(match: re.Match) -> str:
            named = match.group(1)
            if named in following:
                return named
            change = self.path(named, following | {named})
            if change is None or self._position(change.entries[0]) <= self._position(removal.entries[-1]):
                return named  # unchanged after the hint was written
            cited.extend(change.entries)
            prs = ", ".join(f"#{e.pr}" for e in change.entries)
            if change.new is not None:
                return f"{change.new} (moved from {named} in {prs})"
            later.append(f"{named} was removed too ({prs})" + (f": {change.hint}" if change.hint else ""))
            return named

        hint = _hint_path_re().sub(follow, removal.hint or "")
        if not cited:
            return removal
        hint = "; ".join([hint, *later])
        return dataclasses.replace(removal, hint=hint, entries=removal.entries + tuple(dict.fromkeys(cited)))

    def _position(self, entry) -> int:
        """The entry's table's place in the range (user tables, which name no release, by their file)."""
        return next((i for i, step in enumerate(self.steps.steps)
                     if (step.table.release, step.table.file) == (entry.origin.release, entry.origin.file)), -1)

    def old_paths(self) -> set[str]:
        out = set()
        for step in self.steps.steps:
            out.update(step.paths)
            out.update(step.dirs)
        return out
