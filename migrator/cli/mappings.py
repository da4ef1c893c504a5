"""`verl-migrate mappings show`: print the composed mapping table for a release range."""

from __future__ import annotations

import json
import sys

import click

from migrator.cli.common import EXIT_USAGE, docs_epilog, load_mappings, release_options
from migrator.pulls import pr_json, pr_label


@click.group("mappings")
def mappings():
    """Inspect the mapping tables."""


def composed_rows(mapping_set) -> list[dict]:
    """Every entry of the range, in rows: each `mappings show` group of the entry kinds in turn (composed
    rows, or one row per entry in table order), then a row of its own for every entry no group row
    stands for (value entries, key scopes, no-action entries, and renames that compose to no change)."""
    return [row.fields for row in shown_rows(mapping_set)]


def shown_rows(mapping_set) -> list:
    from migrator.mapping.kinds import groups
    from migrator.mapping.presentation import entry_row

    rows, entries = [], mapping_set.entries()
    for group in groups():
        if group.rows is not None:
            rows.extend(group.rows(mapping_set))
            continue
        for entry in entries:
            if entry.unit.shown_in(entry) is group:
                row = entry.unit.row(entry, mapping_set)
                rows.extend([row] if row is not None else [])
    shown = {id(e) for row in rows for e in row.entries}
    for entry in entries:
        if id(entry) not in shown:
            row = entry.unit.row(entry, mapping_set)
            if row is None or entry not in row.entries:  # an earlier entry of the range decides the name
                row = entry_row(entry, getattr(entry, "new", None), "superseded", SUPERSEDED,
                                old=getattr(entry, "old", None) or entry.describe())
            rows.append(row)
            shown.update(id(e) for e in row.entries)
    return rows


SUPERSEDED = "an earlier entry of the range already decides what becomes of this name"


@mappings.command("show", epilog=docs_epilog())
@release_options(from_help="The release the composed table starts from (default: the oldest, v0.1); a release "
                 "by name: there are no files to read one off.")
@click.option("--output-format", type=click.Choice(["text", "json"]), default="text")
def show(to_release, from_release, tables, output_format):
    """Print the composed table: every entry of the range (keys, paths, modules, entry points, Python
    names, env and shell variables, values), and what it becomes."""
    if from_release == "auto":  # what the rewrite reads off the files; this command reads none
        click.echo("error: --from auto reads the release off the files a run migrates; mappings show reads no "
                   "files: name a release (--from v0.6.0)", err=True)
        sys.exit(EXIT_USAGE)
    mapping_set = load_mappings(from_release, to_release, tables)
    rows = composed_rows(mapping_set)
    if output_format == "json":
        rows = [{**row, "prs": [pr_json(pr) for pr in row["prs"]]} for row in rows]
        click.echo(json.dumps({"from": mapping_set.from_release, "to": mapping_set.to_release, "entries": rows},
                              indent=2))
        return
    entries = len(mapping_set.entries())
    shape = "" if len(rows) == entries else f" in {len(rows)} rows (chains across releases composed)"
    click.echo(f"# verl {mapping_set.from_release} -> {mapping_set.to_release}: {entries} entries{shape}")
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
        if row.get("verdict_text"):
            extra += f" [{row['verdict_text']}]"
        if row.get("pins"):
            extra += " pins " + " ".join(row["pins"])
        if row.get("map"):
            extra += " map " + ", ".join(row["map"])
        for field, label in (("scope", "scope"), ("applies_to", "applies to"), ("not_in", "not in")):
            if row.get(field):
                extra += f" [{label}: {', '.join(row[field])}]"
        if row.get("hint"):
            extra += f"  -- {row['hint']}"
        prs = " ".join(pr_label(pr) for pr in row["prs"])
        click.echo(f"{row['family']:<6} {row['old']} -> {target}{extra}  [{prs}]")
