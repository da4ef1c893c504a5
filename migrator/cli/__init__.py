"""Command line: `verl-migrate [OPTIONS] PATH...` and its subcommands (black/ruff conventions).

Exit codes: 0 done; 1 `--check` found work (or `lint`/`audit` found problems); 2 usage, table,
config or git-guard error, or a worker process that cannot start; 3 some files failed (`common.py`);
130 and 143 stopped by Ctrl-C (SIGINT) or SIGTERM. One module per command; heavy
modules load only when a command runs.
"""

from __future__ import annotations

import difflib
import importlib
import os
import re
import signal
import sys

import click

from migrator import __version__
from migrator.cli.common import EXIT_CODES_HELP, docs_epilog
from migrator.cli.migrate import migrate

# name -> "module:attribute"; imported only when the command runs (fast --help and --version).
LAZY_COMMANDS: dict[str, str] = {
    "mappings": "migrator.cli.mappings:mappings",
    "release-notes": "migrator.cli.release_notes:command",
    "derive": "migrator.cli.derive:command",
    "audit": "migrator.cli.audit:command",
    "lint": "migrator.cli.lint:lint",
    "shims": "migrator.cli.shims:shims",
    "rule": "migrator.cli.rule:command",
}


class MigrateGroup(click.Group):
    """A group whose default command is `migrate`: `verl-migrate ./scripts` = `verl-migrate migrate ./scripts`."""

    def list_commands(self, ctx):
        return sorted({*super().list_commands(ctx), *LAZY_COMMANDS})

    def get_command(self, ctx, name):
        if name in LAZY_COMMANDS:
            module, attr = LAZY_COMMANDS[name].split(":")
            return getattr(importlib.import_module(module), attr)
        return super().get_command(ctx, name)

    def format_commands(self, ctx, formatter):
        """List the commands without importing the lazy ones: their help is read from their source."""
        rows = []
        for name in self.list_commands(ctx):
            if name in LAZY_COMMANDS:
                rows.append((name, _lazy_short_help(LAZY_COMMANDS[name], formatter.width)))
            else:
                command = super().get_command(ctx, name)
                if command is not None and not command.hidden:
                    rows.append((name, command.get_short_help_str(formatter.width - 6 - len(name))))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def format_options(self, ctx, formatter):
        """The group's options, then the default command's (they are what most runs use), then the commands."""
        click.Command.format_options(self, ctx, formatter)
        rows = [record for param in migrate.get_params(ctx) if isinstance(param, click.Option)
                for record in [param.get_help_record(ctx)] if record and "--help" not in record[0]]
        with formatter.section("Migrate options (verl-migrate [migrate] [OPTIONS] PATH...; "
                               "see verl-migrate migrate --help)"):
            formatter.write_dl(rows)
        self.format_commands(ctx, formatter)

    def parse_args(self, ctx, args):
        if args and args[0] not in self.list_commands(ctx) and args[0] not in ("--help", "-h", "--version"):
            refuse_unknown_command(ctx, args[0], self.list_commands(ctx))
            args = ["migrate", *args]
        return super().parse_args(ctx, args)


# What a subcommand name looks like: a mistyped one is refused, not migrated as a missing path (ruff's rule).
COMMAND_LIKE = re.compile(r"[a-z]+(-[a-z]+)*")


def refuse_unknown_command(ctx, first: str, commands: list[str]) -> None:
    """Exit 2 when `first` is no existing path and is close to a command name or looks like one."""
    if first.startswith("-") or os.path.lexists(first):
        return
    close = difflib.get_close_matches(first, commands, n=1, cutoff=0.6)
    if close:
        raise click.UsageError(f"No such command {first!r}. Did you mean {close[0]!r}?", ctx)
    if COMMAND_LIKE.fullmatch(first):
        raise click.UsageError(f"No such command {first!r}, and no file or directory of that name.", ctx)


def _lazy_short_help(target: str, width: int) -> str:
    """The first sentence of a lazy command's docstring, found by parsing (not importing) its module."""
    import ast
    import importlib.util

    from click.utils import make_default_short_help

    module, attr = target.split(":")
    try:
        spec = importlib.util.find_spec(module)
        with open(spec.origin, encoding="utf-8") as fh:  # type: ignore[union-attr,arg-type]
            tree = ast.parse(fh.read())
    except (ImportError, OSError, SyntaxError, AttributeError, TypeError, ValueError):
        return ""
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == attr:
            return make_default_short_help(ast.get_docstring(node) or "", max(width - 20, 30))
    return ""


@click.group(cls=MigrateGroup, context_settings={"help_option_names": ["-h", "--help"]},
             invoke_without_command=False, no_args_is_help=True,
             subcommand_metavar="PATH... | COMMAND [ARGS]...", epilog=EXIT_CODES_HELP + "\n\n" + docs_epilog())
@click.version_option(__version__, prog_name="verl-migrate")
def cli():
    """Migrate verl launch scripts, configs and docs to a newer verl release.

    \b
    verl-migrate ./my_scripts              rewrite in place to the newest release
    verl-migrate --check --to v0.8.0 .     exit 1 if anything would change
    verl-migrate --diff ./run.sh           show the edits, write nothing
    verl-migrate mappings show --to v0.8.0 print the composed mapping table

    A directory named like a subcommand needs `verl-migrate migrate DIR`;
    a first argument that is no existing path and looks like a command name is
    refused as an unknown command (exit 2).
    """
    from migrator.cache import root_problem

    problem = root_problem()  # said once a run, here: workers ignore such a cache in silence
    if problem:
        click.echo(f"warning: {problem}", err=True)


cli.add_command(migrate)


class Interrupted(BaseException):
    """Ctrl-C (SIGINT) or SIGTERM, raised in the main thread so that every `finally` of the run runs (its
    workers killed, its lock removed). Not a KeyboardInterrupt, which click turns into exit 1: the code
    `--check` gives for "files would change"."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def _interrupt(signum, frame) -> None:
    for stop in (signal.SIGINT, signal.SIGTERM):  # a second signal must not cut the clean-up short
        signal.signal(stop, signal.SIG_IGN)
    raise Interrupted(signum)


def main() -> None:
    """The command line. A run stopped by SIGINT or SIGTERM exits 128 + the signal (130, 143)."""
    for stop in (signal.SIGINT, signal.SIGTERM):
        signal.signal(stop, _interrupt)
    try:
        cli(prog_name="verl-migrate")
    except Interrupted as interrupted:
        click.echo(f"interrupted ({signal.Signals(interrupted.signum).name})", err=True)
        sys.exit(128 + interrupted.signum)


if __name__ == "__main__":  # pragma: no cover
    main()
