"""The draft a derivation produces: one `Draft` per guessed entry, and the table text they make.

The bottom of the derive package: the pairing modules build these, nothing here imports them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import yaml

from migrator.mapping.kinds import KINDS


@dataclass
class Draft:
    """One drafted entry. `covers` lists the concrete old names it stands for (subtrees: every key)."""

    kind: str
    old: str
    fields: dict
    pr: int | None
    confidence: str
    evidence: str
    covers: tuple[str, ...] = ()

    def as_yaml_dict(self) -> dict:
        out = {"kind": self.kind, "old": self.old, **self.fields, "pr": self.pr or 0,
               "confidence": self.confidence, "evidence": self.evidence, "review": True}
        return out


@dataclass
class Derivation:
    from_rev: str
    to_rev: str
    drafts: list[Draft] = field(default_factory=list)
    removed_keys: set[str] = field(default_factory=set)
    # Keys some config files lost while others keep them: key -> those files (derive/keys.py).
    removed_from_some: dict[str, tuple[str, ...]] = field(default_factory=dict)
    removed_scripts: set[str] = field(default_factory=set)
    removed_modules: set[str] = field(default_factory=set)
    removed_symbols: set[str] = field(default_factory=set)  # `pkg.mod:Name` a module stopped binding

    def sorted_drafts(self) -> list[Draft]:
        return sorted(self.drafts, key=lambda d: (KINDS[d.kind].position, d.old))


def dump_table(derivation: Derivation, release: str | None = None) -> str:
    """The draft as a table file (docs/table-format.md)."""
    entries = []
    for draft in derivation.sorted_drafts():
        if draft.pr is None:
            continue  # no PR at all in the range: nothing to cite, nothing a table can hold
        entries.append(draft.as_yaml_dict())
    header = (f"# Draft table: verl-migrate derive {derivation.from_rev}..{derivation.to_rev}.\n"
              f"# Every entry is a guess: check it against its PR, fix it, then delete `review: true`.\n")
    body = yaml.safe_dump({"release": release or derivation.to_rev, "entries": entries}, sort_keys=False,
                          width=10_000, allow_unicode=True)
    return header + body
