"""Skip files that cannot need an edit, as cheaply as `grep` would: `Prefilter` is one multi-pattern
search over the raw bytes for every old token of the composed tables (keys, paths, modules, env and
shell variables). A file with no hit is never decoded or parsed.

The search is Aho-Corasick from `ahocorasick-rs` when it is installed (a PyPI wheel), else one regular
expression shaped as a trie of the tokens. A flat alternation `a|b|c` is no option: Python's `re` tries
every branch at every position, which measured 37x slower than the trie (docs/performance.md).
Which tokens each file kind searches for, and the kind check before it, are in `filekind`; this module
imports nothing of the package, so rewriters may use the search too.
"""

from __future__ import annotations

import re
from functools import cached_property, lru_cache
from typing import NamedTuple

# What `Prefilter.scope` finds: some token (or group) occurs whole; or only `imported` tokens do, where an
# import could name them; or only tokens of `alone` do.
TOKEN_HIT = "all"
IMPORT_HIT = "imports"
ALONE_HIT = "defaults"
HITS = frozenset({TOKEN_HIT, IMPORT_HIT})  # what the predicate counts as a hit


class Prefilter:
    """A predicate over file bytes: True when some old token occurs, or every name of one of `groups`
    (identifiers, the first looked for first: `from verl.workers import rollout` spells `verl`, `workers` and
    `rollout`, never the module). `imported`: tokens that count only where an import statement could name
    them as a module (`import_position`): `verl` in `"-m", "verl.trainer.main_ppo"` is no hit; `scope` tells
    a file holding them alone apart (the Python rewriter's import check needs them, its other passes do
    not). `alone`: tokens that are no hit of the predicate, which `scope` tells apart too (a value
    default's `main_ppo`: a file holding it and no other token needs less work). `starts`/`matches` report
    `tokens` only. Pickles as its tokens, groups, imported and alone tokens.

    With ahocorasick-rs every kind of token is one automaton (`_Scan`): a file costs one scan, whatever it
    holds (a launcher naming `verl` cost three before: the tokens, the groups' first names and their names)."""

    def __init__(self, tokens, groups=(), imported=(), alone=()):
        self.imported = tuple(sorted(set(imported) - set(tokens)))
        self.tokens = tuple(sorted(set(tokens) | set(self.imported)))
        self.groups = tuple(sorted({tuple(dict.fromkeys(g)) for g in groups if g}))
        self.alone = tuple(sorted(set(alone) - set(self.tokens)))
        if not (self.tokens or self.groups or self.alone):
            self.engine = "none"
        else:
            try:
                import ahocorasick_rs  # noqa: F401 - which engine `_searches` will use
            except ImportError:
                self.engine = "re-trie"
            else:
                self.engine = "ahocorasick-rs"

    @cached_property
    def _searches(self) -> _Searches:
        """The search, made when first asked for: a run's parent process hands the files to its workers and
        never searches, and a pre-commit run of one script needs one kind's of the seven (2-3 ms each).
        Prefilters of the same tokens share one (`_searches_for`)."""
        return _searches_for(self.engine, self.tokens, self.groups, self.imported, self.alone)

    def __call__(self, data: bytes) -> bool:
        return self.scope(data) in HITS

    def scope(self, data: bytes) -> str | None:
        """TOKEN_HIT when a token other than `imported` or a group occurs whole; else IMPORT_HIT when only
        imported tokens do (where an import could name them), ALONE_HIT when only tokens of `alone` do;
        TOKEN_HIT when both of those do (no narrower scope covers the two); None when none does."""
        scan, search, search_imported, search_alone = self._searches
        if scan is not None:
            return scan.scope(data)
        if search(data):
            return TOKEN_HIT
        return _narrowest(bool(search_imported(data)), bool(search_alone(data)))

    def starts(self, data: bytes) -> set[int]:
        """Where any token starts in data, whole name or not, overlapping ones included."""
        if self._searches.scan is not None:
            return {start for _, start, _ in self.matches(data)}
        return occurrences(data, tuple(token.encode() for token in self.tokens))

    def matches(self, data: bytes) -> list[tuple[str, int, int]]:
        """(token, start, end) of every occurrence, whole name or not, overlapping ones included."""
        scan = self._searches.scan
        if scan is not None:
            return scan.matches(data)
        out = []
        for token in self.tokens:
            for start in occurrences(data, (token.encode(),)):
                out.append((token, start, start + len(token.encode())))
        return out

    def __getstate__(self):
        return {"tokens": tuple(t for t in self.tokens if t not in self.imported), "groups": self.groups,
                "imported": self.imported, "alone": self.alone}

    def __setstate__(self, state):
        self.__init__(state["tokens"], state.get("groups", ()), state.get("imported", ()), state.get("alone", ()))


class _Searches(NamedTuple):
    """A prefilter's search: one automaton (`scan`), or the pure-Python fallback's three predicates."""

    scan: _Scan | None
    search: object
    imported: object
    alone: object


# A pass's prefilter is derived once per view state of the tables (`per_table_set`), and views that differ
# only in what the pass does not read (a file that launches verl or not) derive the same tokens: the bench
# tree's Python files had six automata built twice (0.2-1.9 ms each, in every worker). A search holds nothing
# of a file, so one per distinct set of tokens serves every prefilter of them.
@lru_cache(maxsize=64)
def _searches_for(engine: str, tokens: tuple[str, ...], groups: tuple[tuple[str, ...], ...],
                  imported: tuple[str, ...], alone: tuple[str, ...]) -> _Searches:
    if engine == "none":
        return _Searches(None, _never, _never, _never)
    if engine == "re-trie":
        plain = tuple(t for t in tokens if t not in imported)
        return _Searches(None, _Grouped(plain, groups) if groups else _trie_search(plain, ()),
                         _trie_search(imported, imported) if imported else _never,
                         _trie_search(alone, ()) if alone else _never)
    import ahocorasick_rs

    return _Searches(_Scan(ahocorasick_rs, tokens, groups, imported, alone), None, None, None)


class _Scan:
    """Every token, group name and alone token in one Aho-Corasick automaton. A whole token is a hit at once
    (an imported one where an import could name it); else, when some group's first name (its anchor: the
    package, `verl`) occurs whole, the names found decide the groups: every name of a group must occur at
    all before any must occur as a whole name (most files that name the package, every launcher's
    `-m verl.trainer.main_ppo`, hold no group even so), and only the groups whose last name occurs are
    compared (the most specific: `TaskRunner`, not `verl`). Group names are identifiers, so their whole
    occurrences never overlap. A file holds 40-90 hits of common group names (`config`, `rollout`): the
    roles are sets of pattern indexes, met with the set of the hits' indexes, and only the hits of a
    pattern that can decide are looked at one by one."""

    def __init__(self, ahocorasick_rs, tokens, groups, imported, alone):
        names = sorted({name for group in groups for name in group})
        patterns = sorted(set(tokens) | set(names) | set(alone))
        index = {pattern: i for i, pattern in enumerate(patterns)}
        self.patterns = patterns
        self.token_indexes = frozenset(index[t] for t in tokens)
        self._imported = frozenset(index[t] for t in imported)
        self._plain = self.token_indexes - self._imported
        self._anchors = frozenset(index[g[0]] for g in groups)
        self._alone = frozenset(index[t] for t in alone)
        self._names = frozenset(index[name] for name in names)
        self._complete = _Groups(groups, index).complete
        self._find = ahocorasick_rs.BytesAhoCorasick([p.encode() for p in patterns]).find_matches_as_indexes

    def scope(self, data: bytes) -> str | None:
        hits = self._find(data, overlapping=True)
        if not hits:
            return None
        found = {i for i, _, _ in hits}
        if found & self._plain and any(_whole(data, start, end) for i, start, end in hits if i in self._plain):
            return TOKEN_HIT
        anchors = found & self._anchors
        # The set checks first (most files that name the package complete no group even by substrings), then
        # the hits one by one: an anchor whole, then every name's.
        if anchors and self._complete(found) \
                and any(_whole(data, start, end) for i, start, end in hits if i in anchors) \
                and self._complete(self._whole_names(data, hits)):
            return TOKEN_HIT
        imported, alone = found & self._imported, found & self._alone
        return _narrowest(
            bool(imported) and any(_whole(data, start, end) and import_position(data, start)
                                   for i, start, end in hits if i in imported),
            bool(alone) and any(_whole(data, start, end) for i, start, end in hits if i in alone))

    def _whole_names(self, data: bytes, hits) -> set[int]:
        """The indexes of the group names that occur whole: `_whole` spelt out in the loop, which runs over
        every hit of a launcher that names `verl` and its groups' other names (40-odd; a call each cost a
        tenth of the launcher's scan)."""
        names, size = self._names, len(data)
        return {i for i, start, end in hits if i in names
                and (start == 0 or data[start - 1] not in NAME_BYTES or (start >= 2 and data[start - 2] == 0x5C))
                and (end == size or data[end] not in NAME_BYTES)}

    def matches(self, data: bytes) -> list[tuple[str, int, int]]:
        tokens, patterns = self.token_indexes, self.patterns
        return [(patterns[i], start, end) for i, start, end in self._find(data, overlapping=True) if i in tokens]


def _narrowest(imported: bool, alone: bool) -> str | None:
    """The scope of a file in which no plain token or group occurs: the narrow one its tokens give."""
    if imported and alone:
        return TOKEN_HIT
    return IMPORT_HIT if imported else ALONE_HIT if alone else None


class _Groups:
    """The groups as sets of their names' indexes, filed under their last name's (the most specific:
    `TaskRunner`, not `verl`): only the groups whose last name was found are compared with what was."""

    def __init__(self, groups, index: dict[str, int]):
        self._by_last: dict[int, list[frozenset[int]]] = {}
        for group in groups:
            self._by_last.setdefault(index[group[-1]], []).append(frozenset(index[n] for n in group))
        self._lasts = frozenset(self._by_last)

    def complete(self, found: set[int]) -> bool:
        """Are all the names of some group among `found`?"""
        return any(group <= found for last in self._lasts & found for group in self._by_last[last])


def _trie_search(tokens: tuple[str, ...], imported: tuple[str, ...]):
    """The pure-Python fallback's predicate for plain tokens (no groups)."""
    if not tokens:
        return _never
    pattern = _trie_regex(tokens)
    if not imported:
        return pattern.search
    names = set(imported)
    return lambda data: any(m.group().decode() not in names or import_position(data, m.start())
                            for m in pattern.finditer(data))


class _Grouped:
    """The pure-Python fallback for tokens and groups: a whole token is a hit at once; else, when some
    group's first name (its anchor: the package, `verl`) occurs, the whole names found decide the groups."""

    def __init__(self, tokens: tuple[str, ...], groups: tuple[tuple[str, ...], ...]):
        self.tokens = _trie_search(tokens, ())
        self.anchors = _trie_search(tuple(sorted({g[0] for g in groups})), ())
        names = sorted({name for group in groups for name in group})
        self._index = {name: i for i, name in enumerate(names)}
        self._complete = _Groups(groups, self._index).complete
        self._names = _trie_regex(tuple(names)).finditer

    def __call__(self, data: bytes) -> bool:
        if self.tokens(data):
            return True
        if not self.anchors(data):
            return False
        return self._complete({self._index[m.group().decode()] for m in self._names(data)})


def occurrences(data: bytes, words: tuple[bytes, ...]) -> set[int]:
    """Every offset where one of words starts (one `bytes.find` loop per word: for a few words)."""
    found = set()
    for word in words:
        at = data.find(word)
        while at >= 0:
            found.add(at)
            at = data.find(word, at + 1)
    return found


# What may stand between an import's keyword (or the comma of `import a, b`) and a module it names:
# blanks, line breaks and a backslash continuation.
_BETWEEN = frozenset(b" \t\f\r\n\\")
_IMPORT_WORDS = (b"import", b"from")


def import_position(data: bytes, start: int) -> bool:
    """Could an import statement name a module that starts at `start`? Only right after `import`, `from`
    or a comma (`import os, verl`), blanks and continuations between: an over-approximation (a comment or
    a string may read so too), never missing a real import."""
    at = start
    while at > 0 and data[at - 1] in _BETWEEN:
        at -= 1
    if at > 0 and data[at - 1] == 0x2C:  # ,
        return True
    word_start = at
    while word_start > 0 and data[word_start - 1] in NAME_BYTES:
        word_start -= 1
    return data[word_start:at] in _IMPORT_WORDS


def _never(data: bytes) -> None:
    return None


# A token counts only as a whole name: `..._micro_batch_size` inside `..._micro_batch_size_per_gpu`, which
# every verl script carries, is no hit. Every rewriter demands at least this boundary, so nothing is lost.
NAME_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")  # of an identifier
_NAME_CLASS = rb"[A-Za-z0-9_]"


def _whole(data: bytes, start: int, end: int) -> bool:
    # An escape sequence in a string literal (`"\nkey=1"`) glues a letter to the token's front.
    before_ok = start == 0 or data[start - 1] not in NAME_BYTES or (start >= 2 and data[start - 2] == 0x5C)
    return before_ok and (end == len(data) or data[end] not in NAME_BYTES)


def _trie_regex(tokens: tuple[str, ...]) -> re.Pattern:
    """One pattern that walks a trie of the tokens: each position costs one branch per byte matched."""
    trie: dict = {}
    for token in tokens:
        node = trie
        for byte in token.encode():
            node = node.setdefault(byte, {})
        node[None] = True

    def emit(node: dict) -> bytes:
        branches = [re.escape(bytes([b])) + emit(child) for b, child in sorted((k, v) for k, v in node.items()
                                                                                if k is not None)]
        if not branches:
            return b""
        body = branches[0] if len(branches) == 1 else b"(?:" + b"|".join(branches) + b")"
        # A token ends here: longer tokens are tried first, the shorter one when they fail the boundary.
        return b"(?:" + body + b")?" if None in node else body

    before = rb"(?:(?<!" + _NAME_CLASS + rb")|(?<=\\" + _NAME_CLASS + rb"))"
    return re.compile(before + emit(trie) + rb"(?!" + _NAME_CLASS + rb")")
