"""Rewriters: one module per file kind. Each only *locates* spans and returns `Edit`s and `Finding`s.

The engine picks a rewriter by extension or shebang from `REWRITERS`, imports it lazily, and does
all applying, validating and writing itself.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass


@dataclass(frozen=True)
class RewriterSpec:
    kind: str
    module: str
    extensions: tuple[str, ...]
    shebang_interpreters: tuple[str, ...] = ()
    # Names this kind may spell only in part, so the prefilter also looks for their last component:
    # "keys" (YAML nests them), "modules" (`from recipe import fully_async_policy`), "key-parts" (a
    # YAML code block nests keys: every component must occur); and "declared-keys": its launch commands
    # may write `+key=` on a key the target declares, which Hydra refuses.
    split_names: frozenset[str] = frozenset()
    # "module:function" that takes a second look at the applied edits of a changed file:
    # review(before, after, applied, mappings) -> edits.Review (edits to back out or add, findings).
    review: str | None = None


REWRITERS: tuple[RewriterSpec, ...] = (
    RewriterSpec("shell", "migrator.rewrite.shell", (".sh", ".bash"), ("bash", "sh", "dash", "zsh", "ksh"),
                 frozenset({"declared-keys"}), review="migrator.rewrite.shell:review_edits"),
    RewriterSpec("python", "migrator.rewrite.python", (".py",), ("python", "python3"), frozenset({"modules"})),
    RewriterSpec("yaml", "migrator.rewrite.yaml", (".yaml", ".yml"), (), frozenset({"keys", "modules"})),
    RewriterSpec("markdown", "migrator.rewrite.markdown", (".md", ".markdown", ".rst", ".txt"),
                 split_names=frozenset({"declared-keys", "key-parts", "modules"})),
    RewriterSpec("notebook", "migrator.rewrite.notebook", (".ipynb",), (), frozenset({"modules"})),
)


def spec_for(name: str, head: bytes) -> RewriterSpec | None:
    """The rewriter for a file, by extension first, then by the interpreter on its `#!` line."""
    lower = name.lower()
    for spec in REWRITERS:
        if lower.endswith(spec.extensions):
            return spec
    if head.startswith(b"#!"):
        first = head.split(b"\n", 1)[0].decode("latin-1").split()
        words = [w.rsplit("/", 1)[-1] for w in first[:3]]
        if words and words[0].startswith("#!"):
            words[0] = words[0][2:].rsplit("/", 1)[-1]
        interpreter = words[1] if words and words[0] == "env" and len(words) > 1 else (words[0] if words else "")
        for spec in REWRITERS:
            if interpreter in spec.shebang_interpreters:
                return spec
    return None


def load_rewriter(spec: RewriterSpec):
    return importlib.import_module(spec.module)


def load_review(spec: RewriterSpec):
    """The kind's review function, or None when it has none."""
    if spec.review is None:
        return None
    module, _, name = spec.review.partition(":")
    return getattr(importlib.import_module(module), name)
