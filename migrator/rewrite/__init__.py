"""Rewriters: one module per file kind. Each only *locates* spans and returns `Edit`s and `Finding`s.

The engine picks a rewriter by extension or shebang from `REWRITERS`, imports it lazily (`load_rewriter`),
and does all applying, validating and writing itself. Every kind's module is a `Rewriter`: it offers the
protocol's four functions (those a kind has no use for say so: no proof, no second look), so nothing
is looked up by name.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:  # annotations only: the registry must import nothing heavy
    from migrator.edits import Edit, LocateResult, Review
    from migrator.mapping import MappingSet


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
    # Its locator plans the defaults value-default entries append to launches alone, at a fraction of the
    # full walk's cost, where the file holds no old token but theirs (`MappingSet.only_defaults`).
    plans_defaults_alone: bool = False
    # Its locator skips the table's passes where the file holds no old token but an import root at an
    # import (`from verl.utils import hf_tokenizer`) and spells no renamed key's name (`MappingSet.only_imports`).
    plans_imports_alone: bool = False


@runtime_checkable
class Rewriter(Protocol):
    """What the engine (and `embedded`, for code inside other files) asks of a file kind; each kind's
    module is one (tests/unit/rewrite/test_registry.py checks every module of `REWRITERS`)."""

    def locate(self, source: bytes, mappings: MappingSet, path: str = "") -> LocateResult:
        """The edits and findings for `source`; raises `edits.SourceNotParsed` when it cannot parse it."""

    def validate(self, before: bytes, after: bytes, mappings: MappingSet | None = None) -> str | None:
        """Why `after` must not be written (it no longer parses, or changed more than the tables say), or None."""

    def edits_keep_validity(self, before: bytes, applied: Sequence[Edit]) -> bool:
        """True when the applied edits provably keep `before` valid, sparing a costly `validate` (`bash -n`)."""

    def review_edits(self, before: bytes, after: bytes, applied: Sequence[Edit], mappings: MappingSet) -> Review | None:
        """A second look at the applied edits of a changed file: edits to back out or add, findings; None
        when the kind has none."""


REWRITERS: tuple[RewriterSpec, ...] = (
    RewriterSpec("shell", "migrator.rewrite.shell", (".sh", ".bash"), ("bash", "sh", "dash", "zsh", "ksh"),
                 frozenset({"declared-keys"}), plans_defaults_alone=True),
    RewriterSpec("python", "migrator.rewrite.python", (".py",), ("python", "python3"), frozenset({"modules"}),
                 plans_imports_alone=True),
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


def load_rewriter(spec: RewriterSpec) -> Rewriter:
    """The kind's module, imported on first use: it is the kind's `Rewriter`."""
    return importlib.import_module(spec.module)
