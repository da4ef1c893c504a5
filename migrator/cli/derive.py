"""`verl-migrate derive --repo PATH --from REV --to REV`: a draft table from git history (docs in derive)."""

from __future__ import annotations

import sys
from collections import Counter

import click

from migrator import history
from migrator.cli.common import EXIT_USAGE, write_output
from migrator.derive import derive, dump_table


@click.command("derive")
@click.option("--repo", required=True, type=click.Path(), help="A verl git repository (bare is fine).")
@click.option("--from", "from_rev", required=True, metavar="REV", help="The older revision.")
@click.option("--to", "to_rev", required=True, metavar="REV", help="The newer revision.")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write the draft to FILE, not stdout.")
def command(repo, from_rev, to_rev, output):
    """Draft a mapping table for FROM..TO from git history (every entry marked for review)."""
    try:
        derivation = derive(history.open_repo(repo), from_rev, to_rev)
    except history.HistoryError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    text = dump_table(derivation)
    write_output(text, output)
    counts = Counter(d.confidence for d in derivation.drafts if d.pr is not None)
    click.echo(f"derived {sum(counts.values())} entries for {from_rev}..{to_rev} (high {counts['high']}, "
               f"medium {counts['medium']}, low {counts['low']}); review each before use", err=True)
