"""`verl-migrate audit --base REV`: verl's CI check that breaking changes have table entries (docs in audit)."""

from __future__ import annotations

import sys

import click

from migrator import history
from migrator.audit import audit, audited_head, format_report, table_entries
from migrator.cli.common import EXIT_OK, EXIT_USAGE, EXIT_WORK_FOUND
from migrator.mapping.load import TableError


@click.command("audit")
@click.option("--repo", default=".", show_default=True, type=click.Path(), help="The verl git repository.")
@click.option("--base", required=True, metavar="REV", help="The branch the change goes into (e.g. origin/main).")
@click.option("--head", metavar="REV", help="The change (default: HEAD; needs a clean tree).")
@click.option("--table", "tables", multiple=True, type=click.Path(dir_okay=False),
              help="An extra mapping table that counts as coverage (repeatable).")
@click.option("--pr", type=click.IntRange(min=1), help="The pull request number, for the suggested entries.")
def command(repo, base, head, tables, pr):
    """Exit 1 if BASE..HEAD deletes or moves a script or removes a config key that no table covers."""
    try:
        git_repo = history.open_repo(repo)
        if head is None:
            head = audited_head(git_repo)
        entries = table_entries(list(tables))
        result = audit(git_repo, base, head, entries, pr)
    except (history.HistoryError, TableError) as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    click.echo(format_report(result), nl=False)
    sys.exit(EXIT_OK if result.ok else EXIT_WORK_FOUND)
