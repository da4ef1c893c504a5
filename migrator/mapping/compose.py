"""Compose release tables from `--from` to `--to` into one `MappingSet` that rewriters query.

Composition is sequential application: a key is passed through each release's table in order, so
renames chain (a → b, then b → c gives a → c) and a removal after a rename removes the original key.
Cycles inside one table are load errors; across releases a key may move and move back (verl merged
the profiler settings in v0.5.0 and split them again in v0.6.0), which composes to no change.

A name that verl later brought back is read in its newest meaning: with the releases' facts (key
lists and trees), a key or path is passed only through the releases after the last one in which it
was live (present, and not deprecated by that release's own table). So a v0.7.1 script's
`actor_rollout_ref.ref.profiler.ranks` stays as it is, although v0.5.0 once renamed that key.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from migrator.mapping.entries import (
    Entry,
    EnvRemoval,
    EnvRename,
    FileCondition,
    KeyNoAction,
    KeyRemoval,
    KeyRename,
    KeywordRename,
    ModuleMove,
    ModuleNoAction,
    ModuleRemoval,
    PathMove,
    PathRemoval,
    SignatureChange,
    SymbolMove,
    SymbolRemoval,
    VarRename,
    split_symbol,
)
from migrator.mapping.entrycontext import (  # noqa: F401  (re-exported)
    ConfigChange,
    EntryContext,
    EntryPointChange,
    EntryPointQueries,
    KeyChange,
    _CitesPRs,
)
from migrator.mapping.entrypoints import (
    ConfigDirMove,
    ConfigDirRemoval,
    ConfigNameMove,
    EntryPointMove,
    EntryPointRemoval,
    KeyScope,
)
from migrator.mapping.hints import hint_at_target
from migrator.mapping.load import ReleaseTable, TableError, TableSet, check_table_consistency, load_table
from migrator.mapping.precision import (
    PrecisionRules,
    module_lands,
    path_lands,
)
from migrator.mapping.value_changes import ValueChange, compose_value, defaults, value_entries, value_tokens


@dataclass(frozen=True)
class PathChange(_CitesPRs):
    old: str
    new: str | None  # None: removed
    env: tuple[tuple[str, str], ...]
    args: tuple[str, ...]
    hint: str | None
    entries: tuple[Entry, ...]


@dataclass(frozen=True)
class ModuleChange(_CitesPRs):
    old: str
    new: str | None  # None: removed (a manual step, `hint` says where it went)
    entries: tuple[Entry, ...]
    hint: str | None = None


@dataclass(frozen=True)
class SymbolChange(_CitesPRs):
    """What becomes of `pkg.mod:Name`: module entries carry it along, symbol entries move or rename it.
    `new` is None for a removal (`hint` says what to use); `explicit` when a symbol entry decided."""

    old: str
    new: str | None
    entries: tuple[Entry, ...]
    hint: str | None = None
    explicit: bool = False


@dataclass(frozen=True)
class KeywordChange(_CitesPRs):
    function: str
    old: str
    new: str
    entries: tuple[Entry, ...]


@dataclass(frozen=True)
class NameRule:
    """An env or shell-variable rule, in release order. `new` None means removal."""

    old: str
    new: str | None
    value: str | None
    when: FileCondition | None
    entry: Entry

    def applies_to(self, source: bytes) -> bool:
        return self.when is None or self.when.matches(source)


def _unscoped(entry: Entry) -> bool:
    return not getattr(entry, "scope", ())


class _Step:
    """One release's table, indexed for lookups."""

    def __init__(self, table: ReleaseTable):
        self.table = table
        # Key entries by old key; one key may have several entries with different scopes.
        self.keys: dict[str, list[Entry]] = {}
        self.key_subtrees: dict[str, list[Entry]] = {}  # prefix without ".*"
        self.paths: dict[str, Entry] = {}
        self.dirs: dict[str, Entry] = {}
        self.modules: dict[str, ModuleMove | ModuleRemoval | ModuleNoAction] = {}
        self.symbols: dict[str, SymbolMove | SymbolRemoval] = {}
        self.keywords: dict[tuple[str, str], KeywordRename] = {}
        self.signatures: dict[str, list[SignatureChange]] = {}
        self.entry_points: dict[str, EntryPointMove | EntryPointRemoval] = {}
        self.config_names: dict[str, ConfigNameMove] = {}
        self.config_dirs: dict[str, ConfigDirMove | ConfigDirRemoval] = {}
        self.key_scopes: dict[str, KeyScope] = {}
        self.value_entries = value_entries(table.entries)
        for e in table.entries:
            if isinstance(e, (KeyRename, KeyRemoval, KeyNoAction)):
                if e.old.endswith(".*"):
                    self.key_subtrees.setdefault(e.old[:-2], []).append(e)
                else:
                    self.keys.setdefault(e.old, []).append(e)
            elif isinstance(e, (EntryPointMove, EntryPointRemoval)):
                self.entry_points[e.old] = e
            elif isinstance(e, ConfigNameMove):
                self.config_names[e.old] = e
            elif isinstance(e, (ConfigDirMove, ConfigDirRemoval)):
                self.config_dirs[e.old.rstrip("/")] = e
            elif isinstance(e, KeyScope):
                self.key_scopes[e.old] = e
            elif isinstance(e, (PathMove, PathRemoval)):
                (self.dirs if e.old.endswith("/") else self.paths)[e.old] = e
            elif isinstance(e, (ModuleMove, ModuleRemoval, ModuleNoAction)):
                self.modules[e.old] = e
            elif isinstance(e, (SymbolMove, SymbolRemoval)):
                self.symbols[e.old] = e
            elif isinstance(e, KeywordRename):
                self.keywords[(e.function, e.old)] = e
            elif isinstance(e, SignatureChange):
                self.signatures.setdefault(e.symbol, []).append(e)

    def key_entry(self, key: str, applies=None) -> tuple[Entry, str] | None:
        """The entry for `key` and the key after it (longest match: exact key, then nearest subtree).
        `applies(entry)` says whether an entry's scope covers the file's config (default: unscoped only)."""
        applies = applies or _unscoped
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
                if isinstance(e, KeyRename):
                    return e, e.new[:-2] + key[len(prefix):]
                return e, key
        return None

    def scope_of(self, entry: Entry) -> KeyScope | None:
        return self.key_scopes.get(entry.old)  # type: ignore[attr-defined]

    def path_entry(self, path: str) -> tuple[Entry, str] | None:
        e = self.paths.get(path)
        if e is not None:
            return e, getattr(e, "new", path)
        if self.dirs:
            idx = path.find("/")
            while idx != -1:
                e = self.dirs.get(path[: idx + 1])
                if e is not None:
                    return e, (e.new + path[idx + 1:]) if isinstance(e, PathMove) else path
                idx = path.find("/", idx + 1)
        return None

    def module_entry(self, module: str) -> tuple[ModuleMove | ModuleRemoval | ModuleNoAction, str | None] | None:
        """The entry for `module` (or the package holding it) and its name after it (None: removed)."""
        parts = module.split(".")
        for n in range(len(parts), 0, -1):
            e = self.modules.get(".".join(parts[:n]))
            if e is not None:
                if isinstance(e, ModuleNoAction):
                    return e, module
                return e, (e.new + module[len(e.old):]) if isinstance(e, ModuleMove) else None
        return None

    def symbol_entry(self, ref: str) -> tuple[Entry, str | None, bool] | None:
        """The entry deciding `pkg.mod:Name` in this release, its name after it (None: removed), and
        whether a symbol entry (not its module's) decided. A symbol entry wins over its module's."""
        e = self.symbols.get(ref)
        if e is not None:
            return e, (e.target if isinstance(e, SymbolMove) else None), True
        module, name = split_symbol(ref)
        found = self.module_entry(module)
        if found is None or isinstance(found[0], ModuleNoAction):
            return None
        return found[0], (f"{found[1]}:{name}" if found[1] is not None else None), False


@dataclass
class MappingSet(EntryPointQueries, PrecisionRules):
    """The composed migration from `from_release` to `to_release`: what rewriters ask about."""

    from_release: str
    to_release: str
    tables: tuple[ReleaseTable, ...]
    history: TableSet | None = field(default=None, repr=False)
    _steps: list[_Step] = field(init=False, repr=False)
    _key_cache: dict = field(init=False, repr=False, default_factory=dict)
    _path_cache: dict = field(init=False, repr=False, default_factory=dict)
    _module_cache: dict = field(init=False, repr=False, default_factory=dict)

    def __post_init__(self):
        self._steps = [_Step(t) for t in self.tables]
        self._live_cache: dict = {}
        self._symbol_cache: dict = {}
        self._history_steps: list[tuple[str, _Step]] = []
        if self.history is not None and self.history.facts is not None:
            releases = self.history.releases
            upto = releases[: releases.index(self.to_release) + 1] if self.to_release in releases else releases
            self._history_steps = [(r, _Step(self.history.tables[r]) if r in self.history.tables else None)
                                   for r in upto]
            self._release_rank = {r: i for i, r in enumerate(releases)}
        self.env_rules: tuple[NameRule, ...] = tuple(
            NameRule(e.old, getattr(e, "new", None), e.value, e.when, e)
            for t in self.tables for e in t.entries if isinstance(e, (EnvRename, EnvRemoval)))
        self.var_rules: tuple[NameRule, ...] = tuple(
            NameRule(e.old, e.new, None, e.when, e)
            for t in self.tables for e in t.entries if isinstance(e, VarRename))

    # -- queries -----------------------------------------------------------------------------
    def key(self, key: str, context: EntryContext | None = None) -> KeyChange | None:
        """The composed change for a concrete config key, or None when it stays as it is.
        `context`: the entry point whose config the key belongs to (None: main_ppo's, the `ppo` family)."""
        if context is not None and (context.module or context.config):
            result = self._key_in(key, context)
            # The precision rules hold in every config: a fork's key under a moved subtree stays, a key
            # the target still has is not removed (migrator/mapping/precision.py).
            for entry in (result.entries if result is not None and result.action != "warn" else ()):
                if getattr(entry, "old", "").endswith(".*") and key.startswith(entry.old[:-1]):
                    unknown = self._fork_key_in_subtree(key, entry)
                    if unknown is not None:
                        return unknown
            moved = result is not None and any(e.KIND == "entry-point-move" for e in result.entries)
            # The facts' key lists are main_ppo's: another entry point's keys are judged by its own remap.
            return result if moved or not self.is_ppo_config(context.config) else self._still_read(key, result)
        try:
            return self._key_cache[key]
        except KeyError:
            pass
        current, chain = key, []
        result = None
        steps = self._steps_after(self._last_live(key, "key"))
        for index, step in enumerate(steps):
            found = step.key_entry(current)
            if found is None:
                continue
            entry, after = found
            if isinstance(entry, KeyNoAction):
                continue
            unknown = self._fork_key_in_subtree(current, entry)
            if unknown is not None:
                result = unknown
                break
            chain.append(entry)
            if isinstance(entry, KeyRemoval):
                result = KeyChange(key, None, entry.action, hint_at_target(entry.hint, steps[index + 1:]), tuple(chain))
                break
            current = after
        else:
            if chain and current != key:
                result = KeyChange(key, current, "rename", None, tuple(chain))
        result = self._still_read(key, result)
        self._key_cache[key] = result
        return result

    def path(self, path: str) -> PathChange | None:
        """The composed change for a repository-relative path, or None."""
        try:
            return self._path_cache[path]
        except KeyError:
            pass
        current, chain, env, args = path, [], {}, []
        result = None
        for step in self._steps_after(self._last_live(path, "path")):
            found = step.path_entry(current)
            if found is None:
                continue
            entry, after = found
            chain.append(entry)
            if isinstance(entry, PathRemoval):
                result = PathChange(path, None, tuple(env.items()), tuple(args), entry.hint, tuple(chain))
                break
            assert isinstance(entry, PathMove)
            env.update(entry.env)
            args.extend(entry.args)
            current = after
        else:
            if chain and current != path:
                result = PathChange(path, current, tuple(env.items()), tuple(args), None, tuple(chain))
                facts = self._facts if self._all_indexed(chain) else None
                if facts is not None and not path_lands(facts, current, self.to_release):
                    result = PathChange(path, None, (), (), f"the table moves it to {current}, which verl "
                                        f"{self.to_release} does not ship: find its successor by hand", tuple(chain))
        self._path_cache[path] = result
        return result

    def module(self, module: str) -> ModuleChange | None:
        """The composed change for a module (or a member of a moved package), or None."""
        if module not in self._module_cache:  # asked for every dotted name of every candidate file
            self._module_cache[module] = self._compose_module(module)
        return self._module_cache[module]

    def _compose_module(self, module: str) -> ModuleChange | None:
        current, chain = module, []
        for step in self._steps:
            found = step.module_entry(current)
            if found is not None and not isinstance(found[0], ModuleNoAction):
                chain.append(found[0])
                current = found[1]
                if current is None:
                    return ModuleChange(module, None, tuple(chain), chain[-1].hint)
        if chain and current != module:
            facts = self._facts if self._all_indexed(chain) else None  # a user's table may name their own modules
            if facts is not None and not module_lands(facts, current, self.to_release, self.history.releases):
                return ModuleChange(module, None, tuple(chain), f"the table moves it to {current}, which verl "
                                    f"{self.to_release} does not ship: find its successor by hand")
            return ModuleChange(module, current, tuple(chain))
        return None

    def symbol(self, ref: str) -> SymbolChange | None:
        """The composed change for `pkg.mod:Name`: chains of symbol entries and of its module's moves
        (`a:X` -> `b:X` -> `c:Y`); a removal of the symbol or of the module it is in by then ends it."""
        cached = self._symbol_cache.get(ref, False)
        if cached is not False:
            return cached
        current, chain, explicit, result = ref, [], False, None
        for step in self._steps:
            found = step.symbol_entry(current)
            if found is None:
                continue
            entry, after, by_symbol = found
            chain.append(entry)
            explicit = explicit or by_symbol
            if after is None:
                result = SymbolChange(ref, None, tuple(chain), getattr(entry, "hint", None), explicit)
                break
            current = after
        else:
            if chain and current != ref:
                result = SymbolChange(ref, current, tuple(chain), None, explicit)
        self._symbol_cache[ref] = result
        return result

    def keyword(self, function: str, keyword: str) -> KeywordChange | None:
        """The keyword a call of `function` (named as in the first release) passes instead of `keyword`.
        A release's keyword entry names the function as it was before that release's symbol moves."""
        current, kw, chain = function, keyword, []
        for step in self._steps:
            e = step.keywords.get((current, kw))
            if e is not None:
                chain.append(e)
                kw = e.new
            found = step.symbol_entry(current)
            if found is not None:
                if found[1] is None:
                    break
                current = found[1]
        return KeywordChange(function, keyword, kw, tuple(chain)) if chain and kw != keyword else None

    def signature_changes(self, symbol: str) -> list[SignatureChange]:
        """Signature changes of `pkg.mod:Name` (a function, or a class and its methods) in the range,
        following the name through moves."""
        current, out = symbol, []
        for step in self._steps:
            out.extend(step.signatures.get(current, ()))
            found = step.symbol_entry(current)
            if found is not None:
                if found[1] is None:
                    break
                current = found[1]
        return out

    def api_modules(self) -> set[str]:
        """Modules that symbol, keyword and signature entries name (the tokens that call for the API pass)."""
        out = set()
        for step in self._steps:
            out.update(split_symbol(ref)[0] for ref in step.symbols)
            out.update(split_symbol(function)[0] for function, _ in step.keywords)
            out.update(split_symbol(symbol)[0] for symbol in step.signatures)
        return out

    def value(self, key: str, value: str, siblings: dict | None = None) -> ValueChange | None:
        """The composed change for the literal `value` of `key` (as the user wrote the key), or None."""
        if not any(s.value_entries for s in self._steps):
            return None
        memo = self.__dict__.setdefault("_value_cache", {}) if not siblings else {}  # asked per override
        if (key, value) not in memo:
            rename_steps = self._steps_after(self._last_live(key, "key"))
            memo[key, value] = compose_value(self._steps, rename_steps, key, value, siblings, self._final_key_name)
        return memo[key, value]

    def _final_key_name(self, key: str) -> str:
        change = self.key(key)
        return change.new if change is not None and change.new is not None else key

    @property
    def from_release_given(self) -> bool:
        """Did the run name the files' release (not the baseline that `--from` defaults to)?"""
        return self.history is not None and self.from_release != self.history.releases[0]

    def value_defaults(self) -> list:
        """Value-default entries in the range, in release order."""
        return defaults(self.entries())

    def _last_live(self, name: str, family: str) -> int:
        """Rank of the newest release in which `name` was live, or -1 (never seen: apply everything)."""
        if not self._history_steps:
            return -1
        try:
            return self._live_cache[(family, name)]
        except KeyError:
            pass
        facts = self.history.facts  # type: ignore[union-attr]
        last_live, state = -1, "gone"
        for rank, (release, step) in enumerate(self._history_steps):
            present = name in (facts.keys(release) if family == "key" else facts.paths(release))
            if not present:
                state = "gone"
                continue
            found = None
            if step is not None:
                found = step.key_entry(name) if family == "key" else step.path_entry(name)
            if found is not None and not isinstance(found[0], KeyNoAction):
                state = "deprecated"  # the release that still ships it also maps it away
            elif state == "gone":
                state = "live"
            if state == "live":
                last_live = rank
        self._live_cache[(family, name)] = last_live
        return last_live

    def _steps_after(self, rank: int) -> list[_Step]:
        if rank < 0:
            return self._steps
        return [s for s in self._steps
                if not s.table.release or self._release_rank.get(s.table.release, 1 << 30) > rank]

    # -- what the table knows ------------------------------------------------------------------
    def entries(self) -> list[Entry]:
        return [e for t in self.tables for e in t.entries]

    def old_keys(self) -> set[str]:
        """Every key (subtree keys without '.*') that some step maps."""
        out = set()
        for step in self._steps:
            out.update(step.keys)
            out.update(step.key_subtrees)
        return out

    def is_subtree(self, old: str) -> bool:
        """Is `old` (without '.*') the root of a subtree entry somewhere in the composed range?"""
        return any(old in step.key_subtrees for step in self._steps)

    def old_paths(self) -> set[str]:
        out = set()
        for step in self._steps:
            out.update(step.paths)
            out.update(step.dirs)
        return out

    def old_modules(self) -> set[str]:
        return {m for step in self._steps for m, e in step.modules.items() if not isinstance(e, ModuleNoAction)}

    def old_tokens(self) -> frozenset[str]:
        """Every literal a file must contain for any entry to apply (for prefiltering). Exact keys and
        paths that compose to no change (verl brought them back, or only a no-action entry names them:
        `actor_rollout_ref.model.enable_gradient_checkpointing` is in nearly every script) are left out.
        Composed once, and kept with the composed tables in their cache: a worker never composes it."""
        cached = self.__dict__.get("_old_tokens")
        if cached is None:
            cached = self._old_tokens = frozenset(self._compose_old_tokens())
        return cached

    def _compose_old_tokens(self) -> set[str]:
        keys = {k for k in self.old_keys() if self.is_subtree(k) or self.key(k) is not None}
        paths = {p for p in self.old_paths() if p.endswith("/") or self.path(p) is not None}
        tokens = keys | paths | self.old_modules() | self.api_modules()
        tokens |= {r.old for r in self.env_rules} | {r.old for r in self.var_rules}
        for _, step in self._history_steps:  # entry points gone before --from are moved too (_entry_steps)
            if step is not None:
                tokens.update(_entry_tokens(step.entry_points))
        for step in self._steps:  # entry points (`-m a.b.c` or `a/b/c.py`), config names and dirs, scoped keys
            tokens.update(_entry_tokens(step.entry_points))
            tokens.update(step.config_names)
            tokens.update(step.config_dirs)
            tokens.update(e.old.removesuffix(".*") for es in (*step.keys.values(), *step.key_subtrees.values())
                          for e in es if getattr(e, "scope", ()))
        tokens |= self._value_tokens()
        return {t for t in tokens if t}

    def _value_tokens(self) -> set[str]:
        from migrator.layout import verl_layout  # its module imports this package's loader

        out = value_tokens(e for step in self._steps for e in step.value_entries)
        if self.from_release_given and self.value_defaults():
            out.add(verl_layout().ppo_name)  # a value default is inserted into PPO launches (only with --from)
        return out

    @property
    def is_empty(self) -> bool:
        return not any(t.entries for t in self.tables)


def _entry_tokens(modules) -> set[str]:
    """An entry point as `-m` names it and as a script path names it."""
    return {form for m in modules for form in (m, m.replace(".", "/") + ".py")}


def compose(tables: TableSet, from_release: str | None = None, to_release: str | None = None,
            extra_tables: list[Path | tuple[str, bytes]] | None = None) -> MappingSet:
    """Compose the tables of the releases after `from_release` up to and including `to_release`.

    Extra (user) tables naming a release are merged into it, replacing built-in entries that
    have the same `old`; tables without a release apply after the target release. An extra table
    is a path or (path, bytes already read): a pipe can be read only once.
    """
    releases = list(tables.releases)
    from_release = from_release or releases[0]
    to_release = to_release or releases[-1]
    for name, label in ((from_release, "--from"), (to_release, "--to")):
        if name not in releases:
            raise UnknownRelease(label, name, releases)
    lo, hi = releases.index(from_release), releases.index(to_release)
    if lo > hi:
        raise TableError("--from/--to", None, f"--from {from_release} is newer than --to {to_release}")
    chosen = {r: tables.tables[r] for r in releases[lo + 1: hi + 1]}
    trailing: list[ReleaseTable] = []
    for source in extra_tables or []:
        path, data = source if isinstance(source, tuple) else (source, None)
        user = load_table(Path(path), data=data)
        if not user.release:
            trailing.append(user)
            continue
        if user.release not in releases:
            raise TableError(str(path), None, f"table names unknown release {user.release!r} "
                                              f"(known: {', '.join(releases)})")
        if user.release not in chosen:
            continue  # outside the requested range
        base = chosen[user.release]
        overridden = {e.identity for e in user.entries}
        merged = ReleaseTable(base.release, base.file,
                              tuple(e for e in base.entries if e.identity not in overridden) + user.entries)
        check_table_consistency(merged)
        chosen[user.release] = merged
    return MappingSet(from_release, to_release, tuple(chosen.values()) + tuple(trailing), history=tables)


class UnknownRelease(TableError):
    def __init__(self, option: str, name: str, known: list[str]):
        super().__init__(option, None, unknown_release_message(name, known))


def unknown_release_message(name: str, known) -> str:
    """`unknown release '0.9.0' (known: ...); did you mean 'v0.9.0'?`"""
    import difflib

    known = list(known)
    close = [f"v{name}"] if f"v{name}" in known else difflib.get_close_matches(str(name), known, n=1, cutoff=0.6)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return f"unknown release {name!r} (known: {', '.join(known)}){hint}"
