"""`verl-migrate mappings show`: print the composed mapping table for a release range."""

from __future__ import annotations

import json

import click

from migrator.cli.common import load_mappings, release_options
from migrator.pulls import pr_json, pr_label


@click.group("mappings")
def mappings():
    """Inspect the mapping tables."""


def composed_rows(mapping_set) -> list[dict]:
    """One row per old name: what it becomes from --from to --to, and through which PRs."""
    rows = []
    for old in sorted(mapping_set.old_keys()):
        is_subtree = mapping_set.is_subtree(old)
        probe = old + ".*" if is_subtree else old
        change = mapping_set.key(old + ".__subtree__") if is_subtree else mapping_set.key(old)
        if change is None:
            continue
        new = change.new
        if is_subtree and new is not None:
            new = new.removesuffix(".__subtree__") + ".*"
        rows.append({"family": "key", "old": probe, "new": new, "action": change.action, "hint": change.hint,
                     "prs": list(change.prs), "releases": [e.origin.release for e in change.entries]})
    for old in sorted(mapping_set.old_paths()):
        change = mapping_set.path(old)
        if change is None:
            continue
        rows.append({"family": "path", "old": old, "new": change.new,
                     "action": "move" if change.new else "removed", "hint": change.hint,
                     "env": dict(change.env), "args": list(change.args), "prs": list(change.prs),
                     "releases": [e.origin.release for e in change.entries]})
    for old in sorted(mapping_set.old_modules()):
        change = mapping_set.module(old)
        if change is None:
            continue
        rows.append({"family": "module", "old": old, "new": change.new, "action": "move" if change.new else "removed",
                     "hint": change.hint, "prs": [e.pr for e in change.entries],
                     "releases": [e.origin.release for e in change.entries]})
    rows.extend(entry_point_rows(mapping_set))
    rows.extend(python_api_rows(mapping_set))
    for family, rules in (("env", mapping_set.env_rules), ("var", mapping_set.var_rules)):
        for rule in rules:
            row = {"family": family, "old": rule.old, "new": rule.new,
                   "action": "rename" if rule.new else "remove", "prs": [rule.entry.pr],
                   "releases": [rule.entry.origin.release]}
            if rule.value is not None:
                row["value"] = rule.value
            if rule.when is not None:
                row["when"] = list(rule.when.patterns)
            rows.append(row)
    return rows


def python_api_rows(mapping_set) -> list[dict]:
    """Symbols moved, renamed or removed, keyword arguments renamed (composed), and signature changes."""
    from migrator.release_notes_api import keyword_changes, signature_entries, symbol_changes

    rows = []
    for old, change in symbol_changes(mapping_set):
        rows.append({"family": "symbol", "old": old, "new": change.new, "action": "move" if change.new else "removed",
                     "hint": change.hint, "prs": list(change.prs),
                     "releases": [e.origin.release for e in change.entries]})
    for function, old, change in keyword_changes(mapping_set):
        rows.append({"family": "keyword", "function": function, "old": f"{function}({old}=)",
                     "new": f"{change.new}=", "action": "rename", "hint": None, "prs": list(change.prs),
                     "releases": [e.origin.release for e in change.entries]})
    for e in signature_entries(mapping_set):
        rows.append({"family": "signature", "function": e.function, "old": f"{e.function}({e.param})", "new": None,
                     "action": "manual", "hint": e.hint, "prs": [e.pr], "releases": [e.origin.release]})
    return rows


def entry_point_rows(mapping_set) -> list[dict]:
    """Entry-point moves and removals, config names and dirs, and key entries with a `scope:`."""
    from migrator.mapping.compose import EntryContext

    rows = []
    for entry in mapping_set.entries():
        release = [entry.origin.release]
        if entry.KIND in ("entry-point-move", "entry-point-removal"):
            change = mapping_set.entry_point(entry.old)
            if change is None or change.entries[0] is not entry:
                continue  # a later step of a chain: shown with its first entry
            rows.append({"family": "entry-point", "old": entry.old, "new": change.new,
                         "action": "move" if change.new else "removed", "hint": change.hint,
                         "args": list(change.args), "pins": [f"{p.key}={p.old}" for p in change.pins if p.pin],
                         "config": f"{entry.old_config} -> {entry.new_config}" if change.new else None,
                         "prs": list(change.prs), "releases": [e.origin.release for e in change.entries]})
        elif entry.KIND in ("config-name-move", "config-dir-move", "config-dir-removal"):
            new = getattr(entry, "new", None)
            rows.append({"family": entry.FAMILY, "old": entry.old, "new": new, "action": "move" if new else "removed",
                         "hint": getattr(entry, "hint", None), "args": list(getattr(entry, "args", ())),
                         "scope": list(getattr(entry, "scope", ())), "prs": [entry.pr], "releases": release})
        elif getattr(entry, "scope", ()) and entry.KIND != "key-no-action":
            names = entry.scope
            context = EntryContext(names[0], None) if "." in names[0] else \
                EntryContext(None, mapping_set.families.get(names[0], (names[0],))[0])
            probe = entry.old.replace(".*", ".__subtree__")
            change = mapping_set.key(probe, context)
            new = change.new.replace(".__subtree__", ".*") if change and change.new else None
            rows.append({"family": "key", "old": entry.old, "new": new,
                         "action": change.action if change else "none", "hint": change.hint if change else None,
                         "scope": list(names), "prs": list(change.prs) if change else [entry.pr],
                         "releases": [e.origin.release for e in change.entries] if change else release})
    return rows


@mappings.command("show")
@release_options
@click.option("--output-format", type=click.Choice(["text", "json"]), default="text")
def show(to_release, from_release, tables, output_format):
    """Print the composed table: every old key, path, module, Python name, keyword argument, signature
    change, env and variable, and what it becomes."""
    mapping_set = load_mappings(from_release, to_release, tables)
    rows = composed_rows(mapping_set)
    if output_format == "json":
        rows = [{**row, "prs": [pr_json(pr) for pr in row["prs"]]} for row in rows]
        click.echo(json.dumps({"from": mapping_set.from_release, "to": mapping_set.to_release, "entries": rows},
                              indent=2))
        return
    click.echo(f"# verl {mapping_set.from_release} -> {mapping_set.to_release}: {len(rows)} entries")
    for row in rows:
        target = row["new"] if row["new"] else f"({row['action']})"
        extra = ""
        if row.get("env"):
            extra += " with " + " ".join(f"{k}={v}" for k, v in row["env"].items())
        if row.get("value") is not None:
            extra += f" when ={row['value']}"
        if row.get("config"):
            extra += f" (config {row['config']})"
        if row.get("args") and row["family"] != "path":
            extra += " + " + " ".join(row["args"])
        if row.get("pins"):
            extra += " pins " + " ".join(row["pins"])
        if row.get("scope"):
            extra += f" [scope: {', '.join(row['scope'])}]"
        if row.get("hint"):
            extra += f"  -- {row['hint']}"
        prs = " ".join(pr_label(pr) for pr in row["prs"])
        click.echo(f"{row['family']:<6} {row['old']} -> {target}{extra}  [{prs}]")
