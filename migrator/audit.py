"""`verl-migrate audit`: fail verl's CI when a change breaks users' scripts without a table entry.

A change is breaking for verl-migrate when it deletes or moves a script under examples/ or recipe/,
removes a key from the generated trainer configs, removes or moves a Python module under verl/ or
recipe/, or a public name a module defined, or removes an entry point (a module with `@hydra.main`
that users launch with `python -m`; covered by an entry-point or module entry). Each one must be
covered by an entry (in any release's table, or a `--table` extra) whose `old` matches it: exactly, as
a key subtree, as a directory, as a package above the module, or (a name) by a symbol entry or an
entry for its module. Uncovered ones are listed with a suggested entry drafted by `derive`'s pairing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import yaml

from migrator import history
from migrator.derive import Derivation, derive
from migrator.layout import verl_layout
from migrator.mapping.kind import Entry
from migrator.mapping.load import load_builtin, load_table

PR_PLACEHOLDER = "PR_NUMBER"


@dataclass
class AuditResult:
    base: str
    head: str
    scripts: list[str]  # deleted or moved scripts
    keys: list[str]  # removed config keys
    uncovered_scripts: list[str]
    uncovered_keys: list[str]
    suggestions: list[dict]
    modules: list[str] = field(default_factory=list)  # removed or moved Python modules
    symbols: list[str] = field(default_factory=list)  # public names (`pkg.mod:Name`) a module stopped binding
    uncovered_modules: list[str] = field(default_factory=list)
    uncovered_symbols: list[str] = field(default_factory=list)
    entry_points: list[str] = field(default_factory=list)  # removed @hydra.main modules
    uncovered_entry_points: list[str] = field(default_factory=list)
    # Keys some configs lost while others keep them: key -> the config files that lost it.
    removed_from_some: dict[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not (self.uncovered_scripts or self.uncovered_keys or self.uncovered_modules or self.uncovered_symbols
                    or self.uncovered_entry_points)


def audited_head(repo) -> str:
    """HEAD, when nothing under verl's roots (where a change matters to the audit) has uncommitted changes:
    an audit reads commits."""
    audited = verl_layout().directories(tuple(sorted(verl_layout().roots)))
    dirty = history.dirty_paths(repo, audited)
    if dirty:
        shown = ", ".join(dirty[:5]) + (" ..." if len(dirty) > 5 else "")
        raise history.HistoryError(
            f"uncommitted changes under {', '.join(audited)} ({shown}); audit reads commits: "
            f"commit or stash them, or name the revision with --head")
    return "HEAD"


def table_entries(extra_tables: list[str]) -> list[Entry]:
    tables = load_builtin()
    entries = [e for t in tables.tables.values() for e in t.entries]
    for path in extra_tables:
        entries.extend(load_table(Path(path)).entries)
    return entries


def is_covered(name: str, family: str, entries: list[Entry]) -> bool:
    return any(e.FAMILY == family and e.unit.family.covers(e.old, name) for e in entries)


def symbol_covered(ref: str, entries: list[Entry]) -> bool:
    """A symbol entry for `pkg.mod:Name`, or any entry for its module (or a package above it)."""
    return any(e.FAMILY == "symbol" and e.old == ref for e in entries) or \
        is_covered(ref.partition(":")[0], "module", entries)


def hydra_entry_points(repo, rev: str) -> set[str]:
    """Modules with `@hydra.main` at `rev` (tests excluded): what users run with `python -m`."""
    paths = history.files_containing(repo, rev, "@hydra.main")
    return {p[:-3].replace("/", ".") for p in paths
            if p.endswith(".py") and not p.startswith("tests/") and "/tests/" not in p}


def entry_point_covered(module: str, entries: list[Entry]) -> bool:
    """An entry-point move or removal names it, or a module entry names it or its package."""
    return any((e.FAMILY == "entry-point" and e.old == module)  # type: ignore[attr-defined]
               or (e.FAMILY == "module" and e.unit.family.covers(e.old, module))  # type: ignore[attr-defined]
               for e in entries)


def audit(repo, base: str, head: str, entries: list[Entry], pr: int | None = None) -> AuditResult:
    base_sha, head_sha = history.resolve(repo, base), history.resolve(repo, head)
    fork = history.merge_base(repo, base_sha, head_sha)
    derivation: Derivation = derive(repo, fork, head_sha)
    scripts = sorted(derivation.removed_scripts)
    keys = sorted(derivation.removed_keys | set(derivation.removed_from_some))
    uncovered_scripts = [p for p in scripts if not is_covered(p, "path", entries)]
    uncovered_keys = [k for k in keys if not is_covered(k, "key", entries)]
    modules = sorted(derivation.removed_modules)
    symbols = sorted(derivation.removed_symbols)
    uncovered_modules = [m for m in modules if not is_covered(m, "module", entries)]
    uncovered_symbols = [s for s in symbols if not symbol_covered(s, entries)
                         and s.partition(":")[0] not in uncovered_modules]
    missing = set(uncovered_scripts) | set(uncovered_keys) | set(uncovered_modules) | set(uncovered_symbols)
    suggestions = []
    for draft in derivation.sorted_drafts():
        if not missing.intersection(draft.covers):
            continue
        row = draft.as_yaml_dict()
        row["pr"] = pr or draft.pr or PR_PLACEHOLDER
        if pr:
            row["evidence"] = row["evidence"].split("; PR guessed")[0] + "; PR from --pr"
        suggestions.append(row)
    for key in uncovered_keys:
        if key in derivation.removed_from_some:
            suggestions.append({"kind": "key-removal", "old": key, "action": "warn",
                                "hint": "removed from this config; check the PR for a replacement",
                                "scope": [config_name(f) for f in derivation.removed_from_some[key]],
                                "pr": pr or PR_PLACEHOLDER, "confidence": "medium",
                                "evidence": "the other generated configs still have it", "review": True})
    removed_entry_points = sorted(hydra_entry_points(repo, fork) - hydra_entry_points(repo, head_sha))
    uncovered_entry_points = [m for m in removed_entry_points if not entry_point_covered(m, entries)]
    return AuditResult(base, head, scripts, keys, uncovered_scripts, uncovered_keys, suggestions, modules, symbols,
                       uncovered_modules, uncovered_symbols, removed_entry_points, uncovered_entry_points,
                       derivation.removed_from_some)


def config_name(path: str) -> str:
    """`verl/trainer/config/_generated_ppo_megatron_trainer.yaml` -> `ppo_megatron_trainer` (a scope)."""
    name = path.rsplit("/", 1)[-1].removesuffix(".yaml")
    return name.removeprefix(verl_layout().generated_config_prefix)


def _only_from(key: str, removed_from_some: dict[str, tuple[str, ...]]) -> str:
    files = removed_from_some.get(key)
    return f" (from {', '.join(f.rsplit('/', 1)[-1] for f in files)} only)" if files else ""


def format_report(result: AuditResult) -> str:
    span = f"{result.base}..{result.head}"
    if result.ok:
        return (f"audit: {span} deletes or moves {len(result.scripts)} script(s), removes "
                f"{len(result.keys)} config key(s) and removes or moves {len(result.modules)} Python module(s) and "
                f"{len(result.symbols)} public name(s); every one is covered by a mapping table\n")
    lines = [f"audit: {span} breaks users' scripts without a mapping table entry:"]
    lines += [f"  script deleted or moved: {p}" for p in result.uncovered_scripts]
    lines += [f"  config key removed: {k}{_only_from(k, result.removed_from_some)}" for k in result.uncovered_keys]
    lines += [f"  Python module removed or moved: {m}" for m in result.uncovered_modules]
    lines += [f"  public name removed or moved: {s}" for s in result.uncovered_symbols]
    lines += [f"  entry point removed: {m} (add an entry-point-move or entry-point-removal entry)"
              for m in result.uncovered_entry_points]
    lines.append("")
    lines.append("Add entries like these to mappings/verl/main.yaml in verl-migrate (or pass them with --table),")
    lines.append("after checking each one (see docs/table-format.md):")
    lines.append("")
    lines.append(yaml.safe_dump({"entries": result.suggestions}, sort_keys=False, width=10_000).rstrip())
    if any(s["pr"] == PR_PLACEHOLDER for s in result.suggestions):
        lines.append(f"# replace {PR_PLACEHOLDER} with this pull request's number (or run audit with --pr N)")
    return "\n".join(lines) + "\n"
