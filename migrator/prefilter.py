"""Skip files that cannot need an edit, as cheaply as `grep` would.

Two checks run before a file is parsed:
- `kind_for`: the file kind from the name alone, or from the first bytes (the `#!` line) when the name does
  not decide; data and binary files (JSON, images, archives, ...) are never opened.
- `Prefilter`: one multi-pattern search over the raw bytes for every old token of the composed tables
  (keys, paths, modules, env and shell variables). A file with no hit is never decoded or parsed.

The search is Aho-Corasick from `ahocorasick-rs` when it is installed (a PyPI wheel), else one regular
expression shaped as a trie of the tokens. A flat alternation `a|b|c` is no option: Python's `re` tries
every branch at every position, which measured 37x slower than the trie (docs/performance.md).
"""

from __future__ import annotations

import os
import re

from migrator.rewrite import RewriterSpec, spec_for

# Read this much to decide the kind and to spot binary files; same bound as engine.BINARY_SNIFF.
HEAD_BYTES = 8192

# Extensions that never carry a script we rewrite: decided without opening the file.
BINARY_EXTENSIONS = frozenset({
    ".parquet", ".arrow", ".npy", ".npz", ".pt", ".pth", ".bin", ".safetensors", ".ckpt", ".onnx", ".pkl",
    ".pickle", ".h5", ".png", ".jpg", ".jpeg", ".gif", ".bmp", ".ico", ".webp", ".pdf", ".zip", ".gz", ".tgz",
    ".bz2", ".xz", ".zst", ".tar", ".whl", ".so", ".o", ".a", ".dylib", ".dll", ".exe", ".pyc", ".pyo", ".mp3",
    ".mp4", ".wav", ".woff", ".woff2", ".ttf", ".otf",
})
# Text that is data or another language: not a shell script whatever its first line says. A rewriter that
# registers one of these extensions (Python, YAML, Markdown) takes precedence, since `spec_for` is asked first.
OTHER_TEXT_EXTENSIONS = frozenset({
    ".json", ".jsonl", ".csv", ".tsv", ".svg", ".lock", ".sum", ".py", ".pyi", ".ipynb", ".md", ".rst", ".txt",
    ".yaml", ".yml", ".toml", ".cfg", ".ini", ".c", ".h", ".cc", ".cpp", ".hpp", ".cu", ".cuh", ".js", ".ts",
    ".html", ".css", ".go", ".rs", ".java", ".proto", ".xml",
})
NEVER_SCRIPT_EXTENSIONS = BINARY_EXTENSIONS | OTHER_TEXT_EXTENSIONS
NOT_A_KIND = "not a file kind verl-migrate rewrites"


def _extension(name: str) -> str:
    """os.path.splitext(name)[1].lower(), at a third of the cost (asked for every file of a tree)."""
    stripped = name.lstrip(".")
    dot = stripped.rfind(".")
    return stripped[dot:].lower() if dot >= 0 else ""


def _base_name(path: str) -> str:
    name = path.rpartition(os.sep)[2]
    return name.rpartition(os.altsep)[2] if os.altsep else name


def skip_reason_by_name(path: str) -> str | None:
    """Why the name alone says no rewriter applies (a binary or data file, another language), or None."""
    name = _base_name(path)
    ext = _extension(name)
    try:
        return _SKIP_REASON_BY_EXTENSION[ext]
    except KeyError:
        pass
    # Rewriters register plain extensions, so the lower-cased extension decides; asked once per extension.
    if ext not in NEVER_SCRIPT_EXTENSIONS or spec_for(name, b"") is not None:
        reason = None
    else:
        reason = "binary file" if ext in BINARY_EXTENSIONS else NOT_A_KIND
    _SKIP_REASON_BY_EXTENSION[ext] = reason
    return reason


_SKIP_REASON_BY_EXTENSION: dict[str, str | None] = {}


def kind_for(path: str) -> tuple[RewriterSpec | None, bytes | None]:
    """The rewriter for `path` and the head bytes read to decide it (None when the name decided).

    Raises OSError when the head had to be read and could not be.
    """
    name = os.path.basename(path)
    spec = spec_for(name, b"")
    if spec is not None:
        return spec, None
    if os.path.splitext(name)[1].lower() in NEVER_SCRIPT_EXTENSIONS:
        return None, None
    with open(path, "rb") as fh:
        head = fh.read(HEAD_BYTES)
    if b"\x00" in head:
        return None, head
    shebang = head[3:200] if head.startswith(b"\xef\xbb\xbf") else head[:200]
    return spec_for(name, shebang), head


class Prefilter:
    """A predicate over file bytes: True when some old token occurs. Pickles as its tokens."""

    def __init__(self, tokens):
        self.tokens = tuple(sorted(set(tokens)))
        self.engine = "none"
        self._search = _never
        self._automaton = None
        if not self.tokens:
            return
        try:
            import ahocorasick_rs
        except ImportError:
            self.engine = "re-trie"
            self._search = _trie_regex(self.tokens).search
        else:
            self.engine = "ahocorasick-rs"
            automaton = self._automaton = ahocorasick_rs.BytesAhoCorasick([t.encode() for t in self.tokens])
            find = automaton.find_matches_as_indexes
            self._search = lambda data: any(_whole(data, start, end) for _, start, end in find(data, overlapping=True))

    def __call__(self, data: bytes) -> bool:
        return bool(self._search(data))

    def starts(self, data: bytes) -> set[int]:
        """Where any token starts in data, whole name or not, overlapping ones included."""
        if self._automaton is not None:
            return {start for _, start, _ in self._automaton.find_matches_as_indexes(data, overlapping=True)}
        return occurrences(data, tuple(token.encode() for token in self.tokens))

    def __getstate__(self):
        return {"tokens": self.tokens}

    def __setstate__(self, state):
        self.__init__(state["tokens"])


def occurrences(data: bytes, words: tuple[bytes, ...]) -> set[int]:
    """Every offset where one of words starts (one `bytes.find` loop per word: for a few words)."""
    found = set()
    for word in words:
        at = data.find(word)
        while at >= 0:
            found.add(at)
            at = data.find(word, at + 1)
    return found


def _never(data: bytes) -> None:
    return None


# A token counts only as a whole name: `..._micro_batch_size` inside `..._micro_batch_size_per_gpu`, which
# every verl script carries, is no hit. Every rewriter demands at least this boundary, so nothing is lost.
_NAME_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
_NAME_CLASS = rb"[A-Za-z0-9_]"


def _whole(data: bytes, start: int, end: int) -> bool:
    # An escape sequence in a string literal (`"\nkey=1"`) glues a letter to the token's front.
    before_ok = start == 0 or data[start - 1] not in _NAME_BYTES or (start >= 2 and data[start - 2] == 0x5C)
    return before_ok and (end == len(data) or data[end] not in _NAME_BYTES)


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


class KindPrefilter:
    """The full old tokens for every file kind; kinds that split names also look for last components:
    YAML nests keys (`rollout:` / `  update_weights_bucket_megabytes: 512`), and Python and notebooks
    import modules by their last name (`from recipe import fully_async_policy`)."""

    def __init__(self, tokens, split_tokens_by_kind: dict[str, set[str]]):
        self.base = Prefilter(tokens)
        self.by_kind = {kind: Prefilter(set(tokens) | extra) for kind, extra in split_tokens_by_kind.items()}

    @property
    def engine(self) -> str:
        return self.base.engine

    def __call__(self, data: bytes, kind: str | None = None) -> bool:
        return self.by_kind.get(kind, self.base)(data)


def build_prefilter(mappings) -> KindPrefilter:
    """The prefilter for every old token of the composed tables; kinds whose registry entry says they
    split names also look for the names' last components."""
    from migrator.rewrite import REWRITERS

    tokens = mappings.old_tokens()
    last = {"modules": {name.rsplit(".", 1)[-1] for name in mappings.old_modules()},
            "keys": {name.rsplit(".", 1)[-1] for name in mappings.old_keys() if name in tokens}}
    return KindPrefilter(tokens, {spec.kind: set().union(*(last[part] for part in spec.split_names))
                                  for spec in REWRITERS if spec.split_names})
