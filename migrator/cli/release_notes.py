"""`verl-migrate release-notes --to REV`: the migration guide for one verl release (docs in release_notes)."""

from __future__ import annotations

import sys

import click

from migrator import history
from migrator.cli.common import EXIT_USAGE, load_mappings, write_output
from migrator.mapping import TableError, load_builtin
from migrator.mapping.compose import unknown_release_message
from migrator.release_notes import build_guide, previous_release, pull_request_index, render


@click.command("release-notes")
@click.option("--to", "to_release", metavar="REV", required=True, help="The release the guide is for.")
@click.option("--from", "from_release", metavar="REV", help="Start release (default: the release before --to).")
@click.option("--table", "tables", multiple=True, type=click.Path(dir_okay=False),
              help="An extra mapping table (repeatable).")
@click.option("--format", "fmt", type=click.Choice(["md", "rst", "json"]), default="md", show_default=True)
@click.option("--repo", type=click.Path(file_okay=False), help="A verl git repository: add PR titles and dates.")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write to FILE instead of stdout.")
def command(to_release, from_release, tables, fmt, repo, output):
    """Write the migration guide for a verl release from the mapping tables."""
    if from_release is None:
        try:
            releases = load_builtin().releases
        except TableError as exc:
            raise click.ClickException(str(exc)) from None
        if to_release not in releases:
            click.echo(f"error: --to: {unknown_release_message(to_release, releases)}", err=True)
            sys.exit(EXIT_USAGE)
        from_release = previous_release(releases, to_release)
        if from_release is None:
            click.echo(f"error: {to_release!r} has no earlier release (known: {', '.join(releases)})", err=True)
            sys.exit(EXIT_USAGE)
    guide = build_guide(load_mappings(from_release, to_release, tables))
    if repo is not None:
        try:
            git_repo = history.open_repo(repo)
            rev = history.release_tag(git_repo, to_release) or history.resolve(git_repo, "HEAD")
            guide.pull_requests.update(pull_request_index(git_repo, rev, set(guide.pull_requests)))
        except history.HistoryError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(EXIT_USAGE)
    text = render(guide, fmt)
    write_output(text, output)
