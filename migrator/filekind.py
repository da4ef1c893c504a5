"""Before a file is parsed, per file kind (`migrator.rewrite.REWRITERS`), for every command that reads files
(the rewrite, `lint`, `--from auto`):
- `sniff`: the one read/sniff/kind step. The kind from the name alone, or from the first bytes (the `#!`
  line, after a UTF-8 BOM) when the name does not decide; data and binary files (JSON, images, archives,
  ...) are never opened; binary and UTF-16 text is skipped with its reason.
- `build_prefilter`: the `prefilter.Prefilter` search for every old token of the composed tables, plus the
  parts of names for the kinds that split them.
"""

from __future__ import annotations

import os
from typing import NamedTuple

from migrator.codes import Reason, SkipReason
from migrator.fileread import read_bytes, read_head_then_rest
from migrator.prefilter import ALONE_HIT, IMPORT_HIT, TOKEN_HIT, Prefilter
from migrator.rewrite import REWRITERS, RewriterSpec, spec_for
from migrator.rewrite.python.callbacks import callback_tokens
from migrator.rewrite.python.resolution import import_roots
from migrator.rewrite.shell.markers import MARKER_TOKEN

# Read this much to decide the kind and to spot binary files.
HEAD_BYTES = 8192
UTF8_BOM = b"\xef\xbb\xbf"
UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")

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
_NOT_A_KIND = SkipReason.NOT_A_KIND.because()
_BINARY = SkipReason.BINARY.because()
_UTF16 = SkipReason.UTF16.because()


def _extension(name: str) -> str:
    """os.path.splitext(name)[1].lower(), at a third of the cost (asked for every file of a tree)."""
    stripped = name.lstrip(".")
    dot = stripped.rfind(".")
    return stripped[dot:].lower() if dot >= 0 else ""


def _base_name(path: str) -> str:
    name = path.rpartition(os.sep)[2]
    return name.rpartition(os.altsep)[2] if os.altsep else name


def skip_reason_by_name(path: str) -> Reason | None:
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
        reason = _BINARY if ext in BINARY_EXTENSIONS else _NOT_A_KIND
    _SKIP_REASON_BY_EXTENSION[ext] = reason
    return reason


_SKIP_REASON_BY_EXTENSION: dict[str, Reason | None] = {}


def spec_by_name(path: str) -> RewriterSpec | None:
    """The rewriter the file's name alone gives (`spec_for(name, b"")`), asked once per extension: the
    rewriters register plain extensions. A name without one (`run`, `.sh`) is asked each time."""
    name = _base_name(path)
    ext = _extension(name)
    if not ext:
        return spec_for(name, b"")
    try:
        return _SPEC_BY_EXTENSION[ext]
    except KeyError:
        pass
    spec = _SPEC_BY_EXTENSION[ext] = spec_for(name, b"")
    return spec


_SPEC_BY_EXTENSION: dict = {}


def shebang_head(data: bytes) -> bytes:
    """The bytes the `#!` line is read from: the first line's worth, after a UTF-8 BOM."""
    return data[3:200] if data.startswith(UTF8_BOM) else data[:200]


def sniff_bytes(data: bytes) -> Reason | None:
    """Why a file's bytes are not text we edit (UTF-16, binary), or None."""
    if data.startswith(UTF16_BOMS):
        return _UTF16
    if b"\x00" in data[:HEAD_BYTES]:
        return _BINARY
    return None


class Sniffed(NamedTuple):
    """What the read/sniff/kind step found: the kind (None: none) and the bytes, or why the file is skipped
    (then `data` may be None: decided by the name, or unreadable)."""

    spec: RewriterSpec | None
    data: bytes | None
    skip: Reason | None


def _kind_from_head(name: str):
    def decides(head: bytes) -> bool:
        """Whether the rest is wanted: the head is text whose `#!` line names a kind."""
        return sniff_bytes(head) is None and spec_for(name, shebang_head(head)) is not None
    return decides


def sniff(path: str, kinds: frozenset[str] | None = None, spec: RewriterSpec | None = None) -> Sniffed:
    """The one read/sniff/kind step. A name that gives a kind outside `kinds` (None: every kind) is not
    read: `Sniffed(spec, None, None)`. A name that gives no kind reads only the head, and the rest when
    the `#!` line names one. `spec`: the kind, when the caller decided it. Never raises."""
    spec = spec or spec_by_name(path)
    if spec is None:
        reason = skip_reason_by_name(path)
        if reason is not None:
            return Sniffed(None, None, reason)
    elif kinds is not None and spec.kind not in kinds:
        return Sniffed(spec, None, None)
    try:
        if spec is not None:
            data = read_bytes(path)
        else:
            data = read_head_then_rest(path, HEAD_BYTES, _kind_from_head(_base_name(path)))
    except OSError as exc:
        return Sniffed(spec, None, SkipReason.UNREADABLE.because(exc.strerror or exc))
    reason = sniff_bytes(data)
    if reason is not None:
        return Sniffed(None, data, reason)
    if spec is None:
        spec = spec_for(_base_name(path), shebang_head(data))
        if spec is None:
            return Sniffed(None, data, _NOT_A_KIND)
        if kinds is not None and spec.kind not in kinds:
            return Sniffed(spec, None, None)
    return Sniffed(spec, data, None)


# What `KindPrefilter.scope` finds in a file: some entry's token, or only the import roots the import check
# needs, or value defaults' tokens alone.
ALL_ENTRIES = TOKEN_HIT
IMPORTS_ALONE = IMPORT_HIT
DEFAULTS_ALONE = ALONE_HIT


class KindPrefilter:
    """The full old tokens for every file kind; kinds that split names also look for their parts:
    YAML nests keys (`rollout:` / `  update_weights_bucket_megabytes: 512`), so a key's last component
    counts; code imports modules in parts (`from recipe import fully_async_policy`), so a module counts
    when all its components occur (`Prefilter` groups), and so does an API entry's module with the
    name it changes."""

    def __init__(self, tokens, split_tokens_by_kind: dict[str, set[str]],
                 groups_by_kind: dict[str, set[tuple[str, ...]]] | None = None,
                 imported_by_kind: dict[str, set[str]] | None = None,
                 dropped_by_kind: dict[str, set[str]] | None = None,
                 defaults_by_kind: dict[str, frozenset[str]] | None = None):
        groups_by_kind = groups_by_kind or {}
        imported_by_kind = imported_by_kind or {}
        dropped_by_kind = {kind: dropped for kind, dropped in (dropped_by_kind or {}).items() if dropped}
        # A token some other duty of the kind's searches for too (a declared key, a split name) is not the
        # value defaults' alone there.
        defaults_by_kind = {kind: set(defaults) - split_tokens_by_kind.get(kind, set())
                            for kind, defaults in (defaults_by_kind or {}).items()}
        self.base = Prefilter(tokens)
        kind_tokens = {kind: (set(tokens) - dropped_by_kind.get(kind, set())) | split_tokens_by_kind.get(kind, set())
                       for kind in {*split_tokens_by_kind, *groups_by_kind, *imported_by_kind, *dropped_by_kind,
                                    *defaults_by_kind}}
        # A kind whose locator plans value defaults alone tells their tokens apart (`Prefilter.scope`): a
        # file that holds no other token goes to it with `MappingSet.only_defaults`.
        self.by_kind = {kind: Prefilter(found - defaults_by_kind.get(kind, set()), groups_by_kind.get(kind, ()),
                                        imported_by_kind.get(kind, ()), found & defaults_by_kind.get(kind, set()))
                        for kind, found in kind_tokens.items()}

    @property
    def engine(self) -> str:
        return self.base.engine

    def __call__(self, data: bytes, kind: str | None = None) -> bool:
        return self.scope(data, kind) is not None

    def scope(self, data: bytes, kind: str | None = None) -> str | None:
        """ALL_ENTRIES when some old token of `kind` occurs whole, IMPORTS_ALONE when only import roots do
        where an import could name them, DEFAULTS_ALONE when only value defaults' tokens do (and `kind`
        searches them apart), None when none does: one scan of the bytes."""
        return self.by_kind.get(kind, self.base).scope(data)


def build_prefilter(mappings) -> KindPrefilter:
    """The prefilter for every old token of the composed tables; kinds whose registry entry says they
    split names also look for the names' parts."""
    from migrator.mapping.spelled_names import api_groups, module_groups  # the kind check alone needs no tables
    from migrator.rewrite.shell_strings import shell_only_groups

    tokens = mappings.old_tokens()
    # The modules that symbol, keyword and signature entries name matter to code that imports them and
    # names what the entry changes: in a launch script `verl.trainer.main_ppo` (TaskRunner moved out of
    # it) is every line, in code an import of it alone has nothing to rewrite.
    api_only = mappings.api_modules() - mappings.old_modules()
    key_lasts = {name.rsplit(".", 1)[-1] for name in mappings.old_keys() if name in tokens}
    modules = module_groups(mappings.old_modules())
    extra = {spec.kind: key_lasts if "keys" in spec.split_names else set() for spec in REWRITERS if spec.split_names}
    groups = {spec.kind: modules for spec in REWRITERS if "modules" in spec.split_names}
    key_parts = {tuple(name.split(".")) for name in mappings.old_keys() if name in tokens and "." in name}
    for spec in REWRITERS:
        if "key-parts" in spec.split_names:
            groups[spec.kind] = groups.get(spec.kind, set()) | key_parts
    apis = api_groups(mappings.entries())
    # Every import of a package the module facts cover is checked at the target (python.resolution), and
    # every function of a shape verl calls (python.callbacks).
    # In a Python file a root counts only where an import could name it: a launcher's `"-m",
    # "verl.trainer.main_ppo"` imports nothing (a notebook's JSON escapes its lines: every `verl` counts there).
    roots, callbacks = import_roots(mappings), callback_tokens(mappings)
    imported = {"python": roots}
    for kind in ("python", "notebook"):
        groups[kind] = groups.get(kind, set()) | apis
        extra[kind] = extra.get(kind, set()) | callbacks | (roots if kind not in imported else set())
    # A launch command's `+key=` on a key the target declares, which Hydra refuses (shell.keys drops the `+`),
    # a key the target declares no more under a free-form node, which needs a `+` (shell.keys adds it),
    # and an open manual step an earlier run marked in a script (shell.markers), reported until deleted.
    declared = mappings.declared_key_tokens() | mappings.open_key_tokens() | {MARKER_TOKEN}
    for spec in REWRITERS:
        if "declared-keys" in spec.split_names:
            extra[spec.kind] = extra[spec.kind] | declared
    # Tokens only some kinds' rewriters act on (a value default's `main_ppo`: shell launches) are no hit in
    # the other kinds' files, but for a kind that hands strings to the shell rewriter (Python's
    # `os.system(...)`), together with the name of such a call.
    dropped = {spec.kind: mappings.tokens_not_for(spec.kind) for spec in REWRITERS}
    for spec in REWRITERS:
        handed = shell_only_groups(mappings, spec.kind)
        if handed:
            groups[spec.kind] = groups.get(spec.kind, set()) | handed
    alone = {spec.kind: mappings.default_only_tokens() for spec in REWRITERS if spec.plans_defaults_alone}
    return KindPrefilter(tokens - api_only, extra, groups, imported, dropped, alone)
