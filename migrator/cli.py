"""Command line: `verl-migrate [OPTIONS] PATH...` and its subcommands (black/ruff conventions).

Exit codes: 0 done; 1 `--check` found work (or `lint`/`audit` found problems); 2 usage, table,
config or git-guard error; 3 some files failed. Heavy modules load only when a command needs them.
"""

from __future__ import annotations

import importlib
import sys

import click

from migrator import __version__

EXIT_OK, EXIT_WORK_FOUND, EXIT_USAGE, EXIT_FAILED = 0, 1, 2, 3

# name -> "module:attribute"; imported only when the command runs (fast --help and --version).
LAZY_COMMANDS: dict[str, str] = {
    "mappings": "migrator.cli_mappings:mappings",
    "release-notes": "migrator.release_notes:command",
    "derive": "migrator.derive:command",
    "audit": "migrator.audit:command",
    "lint": "migrator.lint.cli:lint",
    "shims": "migrator.cli_shims:shims",
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

    def parse_args(self, ctx, args):
        if args and args[0] not in self.list_commands(ctx) and args[0] not in ("--help", "-h", "--version"):
            args = ["migrate", *args]
        return super().parse_args(ctx, args)


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
             invoke_without_command=False, no_args_is_help=True)
@click.version_option(__version__, prog_name="verl-migrate")
def cli():
    """Migrate verl launch scripts, configs and docs to a newer verl release.

    \b
    verl-migrate ./my_scripts              rewrite in place to the newest release
    verl-migrate --check --to v0.8.0 .     exit 1 if anything would change
    verl-migrate --diff ./run.sh           show the edits, write nothing
    verl-migrate mappings show --to v0.8.0 print the composed mapping table

    A directory named like a subcommand needs `verl-migrate migrate DIR`.
    """


def load_mappings(from_release: str | None, to_release: str | None, tables: tuple[str, ...]):
    """Compose the built-in tables (plus user tables); table errors exit 2 with file:line."""
    return load_composed(from_release, to_release, tables)[0]


def load_composed(from_release: str | None, to_release: str | None, tables: tuple[str, ...]):
    """(MappingSet, Prefilter), from the cache while the tables are unchanged; table errors exit 2."""
    from migrator.mapping import TableError
    from migrator.tablecache import composed

    try:
        return composed(from_release, to_release, tuple(tables))
    except TableError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_USAGE)


def project_config(paths) -> dict:
    """`[tool.verl-migrate]` of the pyproject.toml above `paths`; a broken one exits 2."""
    from migrator.config import ConfigError, find_pyproject, load_config

    try:
        return load_config(find_pyproject(list(paths)))
    except ConfigError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_USAGE)


def with_config(config: dict, to_release, from_release, tables, exclude=()):
    """Flags first, then `[tool.verl-migrate]`: (to, from, tables, exclude); list options add up."""
    return (to_release or config.get("to"), from_release or config.get("from"),
            tuple(tables) + tuple(config.get("table", ())), tuple(exclude) + tuple(config.get("exclude", ())))


def write_output(text: str, output: str | None) -> None:
    """Write a command's document to `-o FILE`, or to stdout; an unwritable file exits 2."""
    if not output:
        click.echo(text, nl=False)
        return
    try:
        with open(output, "w", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as exc:
        click.echo(f"error: cannot write {output}: {exc.strerror}", err=True)
        sys.exit(EXIT_USAGE)


def release_options(f):
    f = click.option("--table", "tables", multiple=True, type=click.Path(dir_okay=False),
                     help="An extra mapping table (repeatable); see docs/table-format.md.")(f)
    f = click.option("--from", "from_release", metavar="REV",
                     help="The verl release the files were written for (default: the oldest, v0.1).")(f)
    f = click.option("--to", "to_release", metavar="REV", help="The verl release to migrate to (default: main).")(f)
    return f


@cli.command("migrate")
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@release_options
@click.option("--check", is_flag=True, help="Write nothing; exit 1 if any file would change.")
@click.option("--diff", "show_diff", is_flag=True, help="Print a unified diff on stdout; write nothing.")
@click.option("--output-format", type=click.Choice(["text", "json"]), default=None,
              help="text (default) or json on stdout.")
@click.option("-q", "--quiet", is_flag=True, help="Print only findings that need a person, and errors.")
@click.option("-v", "--verbose", is_flag=True, help="Print every edit and every skipped file.")
@click.option("--allow-dirty", is_flag=True, default=None, help="Write files that have uncommitted git changes.")
@click.option("--exclude", multiple=True, metavar="GLOB", help="Skip paths matching GLOB (repeatable).")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=None, help="Parallel workers.")
def migrate(paths, to_release, from_release, tables, check, show_diff, output_format, quiet, verbose,
            allow_dirty, exclude, jobs):
    """Rewrite files and directories from old verl paths and keys to new ones (the default command)."""
    from migrator.engine import DirtyFilesError, RunOptions, run
    from migrator.gitguard import GitGuardError
    from migrator.lock import LockHeld
    from migrator.parallel import default_jobs
    from migrator.progress import Progress
    from migrator.progress import wanted as progress_wanted
    from migrator.report import RunSummary, json_report, unified_diff

    config = project_config(paths)
    to_release, from_release, tables, exclude = with_config(config, to_release, from_release, tables, exclude)
    output_format = output_format or config.get("output-format", "text")
    allow_dirty = allow_dirty if allow_dirty is not None else config.get("allow-dirty", False)
    mappings, prefilter = load_composed(from_release, to_release, tables)
    dry = check or show_diff
    as_json = output_format == "json"
    finding_stream_err = show_diff  # stdout carries the diff

    progress = Progress(sys.stderr, progress_wanted(sys.stderr, quiet, as_json), "would change" if dry else "changed")

    def echo(message, err=False):
        progress.clear()
        click.echo(message, err=err)

    def on_result(result):
        report(result)
        progress.update(result)

    def report(result):
        if as_json:
            return
        if show_diff and result.status == "changed":
            progress.clear()
            sys.stdout.buffer.write(unified_diff(result))
            sys.stdout.flush()
        for finding in result.findings:
            if finding.severity == "info" and not verbose:
                continue
            if quiet and finding.severity == "info":
                continue
            echo(finding.format(), err=finding_stream_err)
        if result.status == "failed":
            echo(f"error: {result.path}: {result.reason}", err=True)
        elif result.status == "skipped" and (verbose or (result.kind is not None and not quiet)):
            echo(f"skipped {result.path}: {result.reason}", err=True)
        elif verbose and result.status == "changed":
            verb = "would change" if dry else "changed"
            echo(f"{verb} {result.path}", err=True)
            for edit in result.edits:
                where = " (comment)" if edit.in_comment else ""
                prs = "".join(f" [verl#{pr}]" for pr in edit.prs)
                echo(f"  {result.path}:{edit.line}: {edit.kind}{where}: {edit.message}{prs}", err=True)

    options = RunOptions(list(paths), exclude=exclude, write=not dry, allow_dirty=bool(allow_dirty),
                         jobs=jobs or config.get("jobs") or default_jobs())
    try:
        try:
            results = run(options, mappings, on_result=on_result, prefilter=prefilter,
                          on_note=lambda note: echo(note, err=True))
        finally:
            progress.clear()
    except DirtyFilesError as exc:
        click.echo("error: refusing to overwrite files with uncommitted changes "
                   "(commit or stash them, or pass --allow-dirty):", err=True)
        for name in exc.files:
            click.echo(f"  {name}", err=True)
        sys.exit(EXIT_USAGE)
    except (GitGuardError, LockHeld) as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    summary = RunSummary.of(results)
    releases = f"{mappings.from_release} -> {mappings.to_release}"
    if as_json:
        mode = "check" if check else "diff" if show_diff else "write"
        click.echo(json_report(results, summary, mappings.from_release, mappings.to_release, mode, show_diff))
    elif not quiet:
        click.echo(summary.line(dry, releases), err=True)
    if summary.failed:
        sys.exit(EXIT_FAILED)
    if check and summary.changed:
        sys.exit(EXIT_WORK_FOUND)
    sys.exit(EXIT_OK)


def main() -> None:
    cli(prog_name="verl-migrate")


if __name__ == "__main__":  # pragma: no cover
    main()
