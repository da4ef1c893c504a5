"""`verl-migrate audit`: fail verl's CI when a change breaks users' scripts without a table entry.

A change is breaking for verl-migrate when it deletes or moves a script under examples/ or recipe/,
or removes a key from the generated trainer configs. Each one must be covered by an entry (in any
release's table, or a `--table` extra) whose `old` matches it: exactly, as a key subtree, or as a
directory. Uncovered ones are listed with a suggested entry drafted by `derive`'s pairing.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from migrator import history
from migrator.derive import Derivation, derive
from migrator.mapping.entries import Entry
from migrator.mapping.load import _family_match, load_builtin, load_table

# Where a change matters to the audit (uncommitted edits there make an audit of HEAD misleading).
AUDITED_PREFIXES = ("examples/", "recipe/", "verl/trainer/config/")
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

    @property
    def ok(self) -> bool:
        return not self.uncovered_scripts and not self.uncovered_keys


def audited_head(repo) -> str:
    """HEAD, when nothing under AUDITED_PREFIXES has uncommitted changes (an audit reads commits)."""
    dirty = history.dirty_paths(repo, AUDITED_PREFIXES)
    if dirty:
        shown = ", ".join(dirty[:5]) + (" ..." if len(dirty) > 5 else "")
        raise history.HistoryError(
            f"uncommitted changes under {', '.join(AUDITED_PREFIXES)} ({shown}); audit reads commits: "
            f"commit or stash them, or name the revision with --head")
    return "HEAD"


def table_entries(extra_tables: list[str]) -> list[Entry]:
    tables = load_builtin()
    entries = [e for t in tables.tables.values() for e in t.entries]
    for path in extra_tables:
        entries.extend(load_table(Path(path)).entries)
    return entries


def is_covered(name: str, family: str, entries: list[Entry]) -> bool:
    return any(e.FAMILY == family and _family_match(getattr(e, "old"), name, family) for e in entries)


def audit(repo, base: str, head: str, entries: list[Entry], pr: int | None = None) -> AuditResult:
    base_sha, head_sha = history.resolve(repo, base), history.resolve(repo, head)
    fork = history.merge_base(repo, base_sha, head_sha)
    derivation: Derivation = derive(repo, fork, head_sha)
    scripts = sorted(derivation.removed_scripts)
    keys = sorted(derivation.removed_keys)
    uncovered_scripts = [p for p in scripts if not is_covered(p, "path", entries)]
    uncovered_keys = [k for k in keys if not is_covered(k, "key", entries)]
    missing = set(uncovered_scripts) | set(uncovered_keys)
    suggestions = []
    for draft in derivation.sorted_drafts():
        if draft.kind == "module-move" or not missing.intersection(draft.covers):
            continue
        row = draft.as_yaml_dict()
        row["pr"] = pr or draft.pr or PR_PLACEHOLDER
        if pr:
            row["evidence"] = row["evidence"].split("; PR guessed")[0] + "; PR from --pr"
        suggestions.append(row)
    return AuditResult(base, head, scripts, keys, uncovered_scripts, uncovered_keys, suggestions)


def format_report(result: AuditResult) -> str:
    span = f"{result.base}..{result.head}"
    if result.ok:
        return (f"audit: {span} deletes or moves {len(result.scripts)} script(s) and removes "
                f"{len(result.keys)} config key(s); every one is covered by a mapping table\n")
    lines = [f"audit: {span} breaks users' scripts without a mapping table entry:"]
    lines += [f"  script deleted or moved: {p}" for p in result.uncovered_scripts]
    lines += [f"  config key removed: {k}" for k in result.uncovered_keys]
    lines.append("")
    lines.append("Add entries like these to mappings/verl/main.yaml in verl-migrate (or pass them with --table),")
    lines.append("after checking each one (see docs/table-format.md):")
    lines.append("")
    lines.append(yaml.safe_dump({"entries": result.suggestions}, sort_keys=False, width=10_000).rstrip())
    if any(s["pr"] == PR_PLACEHOLDER for s in result.suggestions):
        lines.append(f"# replace {PR_PLACEHOLDER} with this pull request's number (or run audit with --pr N)")
    return "\n".join(lines) + "\n"
