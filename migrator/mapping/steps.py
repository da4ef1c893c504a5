"""The releases a composed `MappingSet` walks: each release's table indexed for lookups (`ReleaseStep`), and
the range of them with the history before it (`ReleaseRange`), which knows when a name was last live.

A name that verl later brought back is read in its newest meaning: with the releases' facts (key
lists and trees), a key or path is passed only through the releases after the last one in which it
was live (present, and not deprecated by that release's own table). So a v0.7.1 script's
`actor_rollout_ref.ref.profiler.ranks` stays as it is, although v0.5.0 once renamed that key.
"""

from __future__ import annotations

from migrator.mapping.fields import split_symbol
from migrator.mapping.kind import Entry, Role
from migrator.mapping.kinds.config import CONFIG_DIR, CONFIG_NAME
from migrator.mapping.kinds.entry_point import ENTRY_POINT
from migrator.mapping.kinds.key import KEY
from migrator.mapping.kinds.key_scope import KEY_SCOPE
from migrator.mapping.kinds.keyword import KEYWORD
from migrator.mapping.kinds.module import MODULE
from migrator.mapping.kinds.path import PATH
from migrator.mapping.kinds.signature import SIGNATURE
from migrator.mapping.kinds.symbol import SYMBOL
from migrator.mapping.kinds.value import VALUE


def unscoped(entry: Entry) -> bool:
    return not getattr(entry, "scope", ())


class ReleaseStep:
    """One release's table, indexed by what each family's composition looks up."""

    def __init__(self, table):
        self.table = table
        # Key entries by old key; one key may have several entries with different scopes.
        self.keys: dict[str, list[Entry]] = {}
        self.key_subtrees: dict[str, list[Entry]] = {}  # prefix without ".*"
        self.paths: dict[str, Entry] = {}
        self.dirs: dict[str, Entry] = {}
        self.modules: dict[str, Entry] = {}
        self.symbols: dict[str, Entry] = {}
        self.keywords: dict[tuple[str, str], Entry] = {}
        self.signatures: dict[str, list[Entry]] = {}
        self.keyword_functions: set[str] = set()  # the functions of `keywords`
        self.entry_points: dict[str, Entry] = {}
        self.config_names: dict[str, Entry] = {}
        self.config_dirs: dict[str, Entry] = {}
        self.key_scopes: dict[str, Entry] = {}
        self.value_entries: list[Entry] = []  # walked for a value, in table order (defaults are inserted instead)
        for e in table.entries:
            family = e.unit.family
            if family is KEY:
                if e.old.endswith(".*"):
                    self.key_subtrees.setdefault(e.old[:-2], []).append(e)
                else:
                    self.keys.setdefault(e.old, []).append(e)
            elif family is ENTRY_POINT:
                self.entry_points[e.old] = e
            elif family is CONFIG_NAME:
                self.config_names[e.old] = e
            elif family is CONFIG_DIR:
                self.config_dirs[e.old.rstrip("/")] = e
            elif family is KEY_SCOPE:
                self.key_scopes[e.old] = e
            elif family is PATH:
                (self.dirs if e.old.endswith("/") else self.paths)[e.old] = e
            elif family is MODULE:
                self.modules[e.old] = e
            elif family is SYMBOL:
                self.symbols[e.old] = e
            elif family is KEYWORD:
                self.keywords[(e.function, e.old)] = e
                self.keyword_functions.add(e.function)
            elif family is SIGNATURE:
                self.signatures.setdefault(e.symbol, []).append(e)
            elif family is VALUE and e.unit.role is not Role.DEFAULT:
                self.value_entries.append(e)

    @property
    def release(self) -> str:
        return self.table.release

    def key_entry(self, key: str, applies=None) -> tuple[Entry, str] | None:
        """The entry for `key` and the key after it (longest match: exact key, then nearest subtree).
        `applies(entry)` says whether an entry's scope covers the file's config (default: unscoped only)."""
        applies = applies or unscoped
        e = next((c for c in self.keys.get(key, ()) if applies(c)), None)
        if e is not None:
            return e, getattr(e, "new", key)
        if not self.key_subtrees:
            return None
        parts = key.split(".")
        for n in range(len(parts), 0, -1):  # the subtree's root node itself belongs to the subtree
            prefix = ".".join(parts[:n])
            e = next((c for c in self.key_subtrees.get(prefix, ()) if applies(c)), None)
            if e is not None:
                if e.unit.role is Role.MOVE:
                    return e, e.new[:-2] + key[len(prefix):]
                return e, key
        return None

    def scope_of(self, entry: Entry):
        """The release's key-scope for the key an unscoped key entry names, or None."""
        return self.key_scopes.get(entry.old)

    def path_entry(self, path: str) -> tuple[Entry, str] | None:
        e = self.paths.get(path)
        if e is not None:
            return e, getattr(e, "new", path)
        if self.dirs:
            idx = path.find("/")
            while idx != -1:
                e = self.dirs.get(path[: idx + 1])
                if e is not None:
                    return e, (e.new + path[idx + 1:]) if e.unit.role is Role.MOVE else path
                idx = path.find("/", idx + 1)
        return None

    def module_entry(self, module: str) -> tuple[Entry, str | None] | None:
        """The entry for `module` (or the package holding it) and its name after it (None: removed)."""
        parts = module.split(".")
        for n in range(len(parts), 0, -1):
            e = self.modules.get(".".join(parts[:n]))
            if e is not None:
                role = e.unit.role
                if role is Role.NO_ACTION:
                    return e, module
                return e, (e.new + module[len(e.old):]) if role is Role.MOVE else None
        return None

    def symbol_entry(self, ref: str) -> tuple[Entry, str | None, bool] | None:
        """The entry deciding `pkg.mod:Name` in this release, its name after it (None: removed), and
        whether a symbol entry (not its module's) decided. A symbol entry wins over its module's."""
        e = self.symbols.get(ref)
        if e is not None:
            return e, (e.target if e.unit.role is Role.MOVE else None), True
        module, name = split_symbol(ref)
        found = self.module_entry(module)
        if found is None or found[0].unit.role is Role.NO_ACTION:
            return None
        return found[0], (f"{found[1]}:{name}" if found[1] is not None else None), False


class ReleaseRange:
    """The steps from --from to --to (`steps`, the user's release-less tables last) and, when the table set
    has facts, every release's step up to --to (`history`: (release, step or None for the baseline))."""

    def __init__(self, tables, history, to_release: str):
        self.steps = [ReleaseStep(t) for t in tables]
        self.history: list[tuple[str, ReleaseStep | None]] = []
        self.rank: dict[str, int] = {}
        self._live: dict = {}
        self._facts = history.facts if history is not None else None
        if history is not None and history.facts is not None:
            releases = history.releases
            upto = releases[: releases.index(to_release) + 1] if to_release in releases else releases
            self.history = [(r, ReleaseStep(history.tables[r]) if r in history.tables else None) for r in upto]
            self.rank = {r: i for i, r in enumerate(releases)}

    def last_live(self, name: str, family: str) -> int:
        """Rank of the newest release in which `name` (a "key" or a "path") was live, or -1 (never seen:
        apply everything)."""
        if not self.history:
            return -1
        try:
            return self._live[(family, name)]
        except KeyError:
            pass
        facts = self._facts
        last_live, state = -1, "gone"
        for rank, (release, step) in enumerate(self.history):
            present = name in (facts.keys(release) if family == "key" else facts.paths(release))
            if not present:
                state = "gone"
                continue
            found = None
            if step is not None:
                found = step.key_entry(name) if family == "key" else step.path_entry(name)
            if found is not None and found[0].unit.role is not Role.NO_ACTION:
                state = "deprecated"  # the release that still ships it also maps it away
            elif state == "gone":
                state = "live"
            if state == "live":
                last_live = rank
        self._live[(family, name)] = last_live
        return last_live

    def after(self, rank: int) -> list[ReleaseStep]:
        """The range's steps of releases newer than `rank` (all of them for -1; a user's release-less
        table always)."""
        if rank < 0:
            return self.steps
        return [s for s in self.steps if not s.release or self.rank.get(s.release, 1 << 30) > rank]

    def for_name(self, name: str, family: str) -> list[ReleaseStep]:
        """The steps a key or path goes through: those after the release it was last live in."""
        return self.after(self.last_live(name, family))
