"""What each verl release's Python modules bind (`facts/modules/verl.modules`), read from the shipped file.

One line per distinct module content: `module<TAB>releases<TAB>defined<TAB>re-exported<TAB>private`, where releases
are runs (`v0.4.0..v0.6.1,main`), a defined function or class carries its parameters (`f(a,b,*,k)`)
and `*verl.x` stands for `from verl.x import *` (resolved here); private names are no API, but an
import still finds them (`from verl.x import _timer`). Written by
`scripts/extract_verl_modules.py`; docs/python-api.md describes it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class ModuleNames:
    """What one module binds at one release: defined names with their parameters (None: not callable),
    names re-exported from elsewhere in verl, and the other names `from module import name` finds."""

    defined: dict = field(default_factory=dict)
    reexported: set = field(default_factory=set)
    others: set = field(default_factory=set)

    def binds(self, name: str) -> bool:
        """Public API: a defined or re-exported name."""
        return name in self.defined or name in self.reexported

    def reaches(self, name: str) -> bool:
        """Would `from module import name` find it (a private name too; anything, with a module `__getattr__`)?"""
        return self.binds(name) or name in self.others or "__getattr__" in self.others


def parse_token(token: str) -> tuple[str, list[str] | None]:
    if "(" not in token:
        return token, None
    name, params = token[:-1].split("(", 1)
    return name, [p for p in params.split(",") if p]


def expand_runs(runs: str, releases: list[str]) -> list[str]:
    result = []
    for run in runs.split(","):
        first, _, last = run.partition("..")
        i, j = releases.index(first), releases.index(last or first)
        result += releases[i:j + 1]
    return result


def release_runs(indices: list[int], releases: list[str]) -> str:
    """'v0.4.0..v0.6.1,main' for sorted release indices."""
    runs, start = [], indices[0]
    for prev, cur in zip(indices, indices[1:] + [None]):
        if cur != prev + 1:
            runs.append(releases[start] if start == prev else f"{releases[start]}..{releases[prev]}")
            start = cur
    return ",".join(runs)


def read_module_facts(path: Path, releases: list[str]) -> dict[str, dict[str, ModuleNames]]:
    """{release: {module: ModuleNames}} with star imports resolved."""
    facts: dict[str, dict[str, ModuleNames]] = {r: {} for r in releases}
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if not line or line.startswith("#"):
            continue
        module, runs, defined, reexported, *others = line.split("\t")
        names = ModuleNames(dict(parse_token(t) for t in defined.split()), set(reexported.split()),
                            set(others[0].split()) if others else set())
        for release in expand_runs(runs, releases):
            facts[release][module] = names
    return {release: resolve_star_imports(modules) for release, modules in facts.items()}


def resolve_star_imports(modules: dict[str, ModuleNames]) -> dict[str, ModuleNames]:
    """Replace each `*verl.x` re-export by the public names verl.x binds (through its own star imports)."""
    resolved: dict[str, ModuleNames] = {}

    def names_of(module: str, seen: tuple = ()) -> ModuleNames:
        if module in resolved:
            return resolved[module]
        names = modules.get(module)
        if names is None or module in seen:
            return ModuleNames()
        stars = {n for n in names.reexported if n.startswith("*")}
        if stars:
            reexported = names.reexported - stars
            for star in stars:
                source = names_of(star[1:], seen + (module,))
                reexported |= {n for n in set(source.defined) | source.reexported if not n.startswith("_")}
            names = ModuleNames(names.defined, reexported - set(names.defined), names.others)
        resolved[module] = names
        return names

    return {module: names_of(module) for module in modules}
