"""`verl-migrate mappings show`: print the composed mapping table for a release range."""

from __future__ import annotations

import json

import click

from migrator.cli.common import load_mappings, release_options


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


@mappings.command("show")
@release_options
@click.option("--output-format", type=click.Choice(["text", "json"]), default="text")
def show(to_release, from_release, tables, output_format):
    """Print the composed table: every old key, path, module, env and variable, and what it becomes."""
    mapping_set = load_mappings(from_release, to_release, tables)
    rows = composed_rows(mapping_set)
    if output_format == "json":
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
        if row.get("hint"):
            extra += f"  -- {row['hint']}"
        prs = " ".join(f"#{pr}" for pr in row["prs"])
        click.echo(f"{row['family']:<6} {row['old']} -> {target}{extra}  [{prs}]")
