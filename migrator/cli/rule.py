"""`verl-migrate rule CODE` prints a code's documentation (ruff's `rule`); `rule --all` lists every code."""

from __future__ import annotations

import sys

import click

from migrator.cli.common import EXIT_OK, EXIT_USAGE


@click.command("rule")
@click.argument("code", required=False)
@click.option("--all", "every", is_flag=True, help="List every code, its severity and what it is.")
def command(code, every):
    """Explain a rule code of the rewrite or the lint: what it is, an example and the fix."""
    from migrator.codedocs import UnknownCode, rule_text, rules_table

    if every == bool(code):
        click.echo("error: give one CODE (`verl-migrate rule VM101`) or --all", err=True)
        sys.exit(EXIT_USAGE)
    if every:
        for line in rules_table():
            click.echo(line)
        sys.exit(EXIT_OK)
    try:
        click.echo(rule_text(code))
    except UnknownCode as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_USAGE)
