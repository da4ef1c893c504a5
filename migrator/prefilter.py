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


class Prefilter:
    """A predicate over file bytes: True when some old token occurs, or every name of one of `groups`
    (identifiers, the first looked for first: `from verl.workers import rollout` spells `verl`, `workers` and
    `rollout`, never the module). `imported`: tokens that count only where an import statement could name
    them as a module (`import_position`): `verl` in `"-m", "verl.trainer.main_ppo"` is no hit.
    `starts`/`matches` report `tokens` only. Pickles as its tokens, groups and imported tokens."""

    def __init__(self, tokens, groups=(), imported=()):
        self.imported = tuple(sorted(set(imported) - set(tokens)))
        self.tokens = tuple(sorted(set(tokens) | set(self.imported)))
        self.groups = tuple(sorted({tuple(dict.fromkeys(g)) for g in groups if g}))
        self.engine = "none"
        self._search = _never
        self._automaton = None
        if self.groups:
            self._grouped = _Grouped(self.tokens, self.groups, self.imported)
            self.engine = self._grouped.engine
            self._search = self._grouped
            return
        if not self.tokens:
            return
        only_imported = {self.tokens.index(t) for t in self.imported}
        try:
            import ahocorasick_rs
        except ImportError:
            self.engine = "re-trie"
            pattern = _trie_regex(self.tokens)
            if only_imported:
                names = set(self.imported)
                self._search = lambda data: any(
                    m.group().decode() not in names or import_position(data, m.start()) for m in pattern.finditer(data))
            else:
                self._search = pattern.search
        else:
            self.engine = "ahocorasick-rs"
            automaton = self._automaton = ahocorasick_rs.BytesAhoCorasick([t.encode() for t in self.tokens])
            find = automaton.find_matches_as_indexes
            if only_imported:
                self._search = lambda data: any(_whole(data, start, end) and (
                    i not in only_imported or import_position(data, start))
                    for i, start, end in find(data, overlapping=True))
            else:
                self._search = lambda data: any(_whole(data, start, end)
                                                for _, start, end in find(data, overlapping=True))

    def __call__(self, data: bytes) -> bool:
        return bool(self._search(data))

    def starts(self, data: bytes) -> set[int]:
        """Where any token starts in data, whole name or not, overlapping ones included."""
        if self.groups:
            return {start for _, start, _ in self.matches(data)}
        if self._automaton is not None:
            return {start for _, start, _ in self._automaton.find_matches_as_indexes(data, overlapping=True)}
        return occurrences(data, tuple(token.encode() for token in self.tokens))

    def matches(self, data: bytes) -> list[tuple[str, int, int]]:
        """(token, start, end) of every occurrence, whole name or not, overlapping ones included."""
        if self.groups:
            return self._grouped.matches(data)
        if self._automaton is not None:
            return [(self.tokens[i], start, end)
                    for i, start, end in self._automaton.find_matches_as_indexes(data, overlapping=True)]
        out = []
        for token in self.tokens:
            for start in occurrences(data, (token.encode(),)):
                out.append((token, start, start + len(token.encode())))
        return out

    def __getstate__(self):
        return {"tokens": tuple(t for t in self.tokens if t not in self.imported), "groups": self.groups,
                "imported": self.imported}

    def __setstate__(self, state):
        self.__init__(state["tokens"], state.get("groups", ()), state.get("imported", ()))


class _Grouped:
    """Tokens and groups: a whole token is a hit at once; else, when some group's first name (its anchor:
    the package, `verl`) occurs, the whole names found decide the groups. Group names are identifiers,
    so their whole occurrences never overlap."""

    def __init__(self, tokens: tuple[str, ...], groups: tuple[tuple[str, ...], ...], imported: tuple[str, ...] = ()):
        self.groups = tuple(frozenset(g) for g in groups)
        self.tokens = Prefilter(tuple(t for t in tokens if t not in imported), imported=imported)
        self.anchors = Prefilter({g[0] for g in groups})
        self.names = sorted(set().union(*self.groups))
        self.engine = self.anchors.engine
        # Each group as the indexes of its names, under the index of its last name (the most specific:
        # `TaskRunner`, not `verl`): only groups whose last name occurs are compared with what was found.
        index = self._index = {name: i for i, name in enumerate(self.names)}
        self._by_last: dict[int, list[frozenset[int]]] = {}
        for group in groups:
            self._by_last.setdefault(index[group[-1]], []).append(frozenset(index[n] for n in group))
        self._lasts = frozenset(self._by_last)
        if self.engine == "ahocorasick-rs":
            import ahocorasick_rs

            self._find = ahocorasick_rs.BytesAhoCorasick([n.encode() for n in self.names]).find_matches_as_indexes
        else:
            self._find = None
            self._names = _trie_regex(tuple(self.names)).finditer

    def _complete(self, found: set[int]) -> bool:
        return any(group <= found for last in self._lasts & found for group in self._by_last[last])

    def __call__(self, data: bytes) -> bool:
        if self.tokens(data):
            return True
        if not self.anchors(data):
            return False
        if self._find is None:
            return self._complete({self._index[m.group().decode()] for m in self._names(data)})
        hits = self._find(data, overlapping=True)
        # Every name of a group must occur at all before any must occur as a whole name: most files that
        # name the package (every launcher's `-m verl.trainer.main_ppo`) hold no group even so.
        if not self._complete({i for i, _, _ in hits}):
            return False
        return self._complete({i for i, start, end in hits if _whole(data, start, end)})

    def matches(self, data: bytes) -> list[tuple[str, int, int]]:
        return self.tokens.matches(data)


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
