"""What becomes of one repository path (a script, or anything under a moved directory) from --from to
--to: moves chain and gather their env presets and args, a removal ends the chain; a move must land on
a path the target release ships (precision rules)."""

from __future__ import annotations

from migrator.mapping.changes import PathChange
from migrator.mapping.kind import Role
from migrator.mapping.precision import path_lands


class PathChanges:
    def __init__(self, steps, precision, to_release: str):
        self.steps = steps  # the ReleaseRange
        self.precision = precision
        self.to_release = to_release
        self._cache: dict = {}

    def path(self, path: str) -> PathChange | None:
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
                break
            env.update(entry.env)
            args.extend(entry.args)
            current = after
        else:
            if chain and current != path:
                result = PathChange(path, current, tuple(env.items()), tuple(args), None, tuple(chain))
                facts = self.precision.facts_for(chain)
                if facts is not None and not path_lands(facts, current, self.to_release):
                    result = PathChange(path, None, (), (), f"the table moves it to {current}, which verl "
                                        f"{self.to_release} does not ship: find its successor by hand", tuple(chain))
        self._cache[path] = result
        return result

    def old_paths(self) -> set[str]:
        out = set()
        for step in self.steps.steps:
            out.update(step.paths)
            out.update(step.dirs)
        return out
