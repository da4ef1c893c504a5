"""The two checks before a file is parsed, both per file kind (`migrator.rewrite.REWRITERS`):
- `kind_for`: the file kind from the name alone, or from the first bytes (the `#!` line) when the name does
  not decide; data and binary files (JSON, images, archives, ...) are never opened.
- `build_prefilter`: the `prefilter.Prefilter` search for every old token of the composed tables, plus the
  parts of names for the kinds that split them.
"""

from __future__ import annotations

import os

from migrator.prefilter import Prefilter
from migrator.rewrite import REWRITERS, RewriterSpec, spec_for
from migrator.rewrite.python.callbacks import callback_tokens
from migrator.rewrite.python.resolution import import_roots

# Read this much to decide the kind and to spot binary files; same bound as fileprocess.BINARY_SNIFF.
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



class KindPrefilter:
    """The full old tokens for every file kind; kinds that split names also look for their parts:
    YAML nests keys (`rollout:` / `  update_weights_bucket_megabytes: 512`), so a key's last component
    counts; code imports modules in parts (`from recipe import fully_async_policy`), so a module counts
    when all its components occur (`Prefilter` groups), and so does an API entry's module with the
    name it changes."""

    def __init__(self, tokens, split_tokens_by_kind: dict[str, set[str]],
                 groups_by_kind: dict[str, set[tuple[str, ...]]] | None = None):
        groups_by_kind = groups_by_kind or {}
        self.base = Prefilter(tokens)
        self.by_kind = {kind: Prefilter(set(tokens) | split_tokens_by_kind.get(kind, set()),
                                        groups_by_kind.get(kind, ()))
                        for kind in {*split_tokens_by_kind, *groups_by_kind}}

    @property
    def engine(self) -> str:
        return self.base.engine

    def __call__(self, data: bytes, kind: str | None = None) -> bool:
        return self.by_kind.get(kind, self.base)(data)


def build_prefilter(mappings) -> KindPrefilter:
    """The prefilter for every old token of the composed tables; kinds whose registry entry says they
    split names also look for the names' parts."""
    from migrator.mapping.spelled_names import api_groups, module_groups  # the kind check alone needs no tables

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
    roots = import_roots(mappings) | callback_tokens(mappings)
    for kind in ("python", "notebook"):
        groups[kind] = groups.get(kind, set()) | apis
        extra[kind] = extra.get(kind, set()) | roots
    # A launch command's `+key=` on a key the target declares, which Hydra refuses (shell.keys drops the `+`).
    declared = mappings.declared_key_tokens()
    for spec in REWRITERS:
        if "declared-keys" in spec.split_names:
            extra[spec.kind] = extra[spec.kind] | declared
    return KindPrefilter(tokens - api_only, extra, groups)
