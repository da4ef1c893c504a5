"""The signatures and members of the verl names the tables move or rename keywords of
(`facts/api/signatures.yaml`), per release, written by `scripts/extract_api_signatures.py`.

A symbol (`pkg.mod:Name`) maps to runs of releases with one shape each:

    verl.utils.rollout_skip:RolloutSkip:
    - releases: v0.7.0..v0.8.0
      class: (config,rollout_wg)
      members: dump is_active ... wrap_generate_sequences

A function has `function: (params)` and, when every `return` gives a tuple of one length, `returns: N`;
a class `class: (params of its constructor)` and `members:` (its public methods and attributes, inherited
ones included: a name with a leading `_` is never checked). `?` stands for what the source does not settle (a base class from outside verl, a
`__getattr__`). Parameters: `x=` has a default, `/` ends the positional-only ones, `*args`, a bare `*`
starts the keyword-only ones, `**kw`. A name at no release has an empty list. docs/python-api.md says
what the rewriter checks with them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from migrator.mapping.fields import split_symbol

UNKNOWN = "?"
API_FACTS = Path("api") / "signatures.yaml"


@dataclass(frozen=True)
class Params:
    """A parameter list: which names a call may pass by position, by keyword, and which it must pass."""

    positional: tuple[str, ...]  # in order, positional-only ones first
    positional_only: int  # how many of `positional` take no keyword
    keyword_only: tuple[str, ...]
    required: frozenset[str]
    star_args: bool
    star_kwargs: bool

    @classmethod
    def parse(cls, text: str) -> Params | None:
        if text == UNKNOWN:
            return None
        positional, keyword_only, required = [], [], set()
        positional_only, star_args, star_kwargs, after_star = 0, False, False, False
        for token in [t for t in text.strip("()").split(",") if t]:
            if token == "/":
                positional_only = len(positional)
            elif token.startswith("**"):
                star_kwargs = True
            elif token.startswith("*"):
                star_args = star_args or token != "*"
                after_star = True
            else:
                name = token.rstrip("=")
                if not token.endswith("="):
                    required.add(name)
                (keyword_only if after_star else positional).append(name)
        return cls(tuple(positional), positional_only, tuple(keyword_only), frozenset(required), star_args,
                   star_kwargs)

    def misfit(self, positional: int, keywords: tuple[str, ...], complete: bool) -> list[str]:
        """What a call with `positional` arguments and `keywords` does that these parameters refuse;
        `complete`: the call spells all its arguments (no `*xs`, `**kw`), so a missing one is provable."""
        wrong = []
        if positional > len(self.positional) and not self.star_args:
            wrong.append(f"passes {positional} positional arguments where it takes at most {len(self.positional)}")
        by_keyword = set(self.positional[self.positional_only:]) | set(self.keyword_only)
        unknown = [k for k in keywords if k not in by_keyword]
        if unknown and not self.star_kwargs:
            wrong.append("passes " + ", ".join(f"{k}=" for k in unknown) + ", which it has no parameter for")
        if complete:
            given = set(self.positional[:positional]) | (set(keywords) & by_keyword)
            missing = [p for p in (*self.positional, *self.keyword_only) if p in self.required and p not in given]
            if missing:
                wrong.append("leaves out the required " + ", ".join(missing))
        return wrong


@dataclass(frozen=True)
class Shape:
    """One symbol at one release: a function or a class (`kind`), its parameters (a class: its
    constructor's; None when unknown), its members (None when unknown or a function) and the length of
    the tuple it returns (None when unknown)."""

    kind: str
    params: Params | None
    signature: str
    members: frozenset[str] | None = None
    returns: int | None = None


def parse_shape(run: dict) -> Shape | None:
    if "function" in run:
        return Shape("function", Params.parse(run["function"]), run["function"], returns=run.get("returns"))
    if "class" in run:
        members = run.get("members", UNKNOWN)
        return Shape("class", Params.parse(run["class"]), run["class"],
                     None if members == UNKNOWN else frozenset(members.split()))
    return None


def shape_at(data: dict, symbol: str, release: str, releases: tuple[str, ...]) -> Shape | None:
    """The shape of `symbol` at `release` from the fact file's `symbols`, or None (not known there)."""
    from migrator.mapping.modulefacts import expand_runs

    for run in data.get(symbol) or ():
        if release in expand_runs(run["releases"], list(releases)):
            return parse_shape(run)
    return None


def referenced_symbols(tables, module_names) -> set[str]:
    """The symbols whose shapes the fact file records: the old and new names of every symbol move and
    rename, every function with a renamed keyword, and the public names a moved module defines at the
    release before its move, under their old and their new module. `tables`: releases in order with their
    tables (`TableSet`); `module_names`: {release: {module: ModuleNames}} (the module facts)."""
    out: set[str] = set()
    for index, release in enumerate(tables.releases):
        table = tables.tables.get(release)
        for entry in table.entries if table is not None else ():
            if entry.KIND in ("symbol-move", "symbol-rename"):
                out.update((entry.old, entry.target))
            elif entry.KIND == "keyword-rename":
                out.add(entry.function)
            elif entry.KIND == "module-move" and index > 0:
                names = module_names.get(tables.releases[index - 1], {}).get(entry.old)
                for name in sorted(names.defined) if names is not None else ():
                    if not name.startswith("_"):
                        out.update((f"{entry.old}:{name}", f"{entry.new}:{name}"))
    return {symbol for symbol in out if split_symbol(symbol)[1]}
