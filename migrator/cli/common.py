"""What several commands share: exit codes, the release options, table and config loading, output.

Below every command module and imports none of them. Heavy modules load inside the functions, so a
command module that imports this one still starts fast.
"""

from __future__ import annotations

import os
import sys

import click

EXIT_OK, EXIT_WORK_FOUND, EXIT_USAGE, EXIT_FAILED = 0, 1, 2, 3

# The rewrite's exit status, as `--help` prints it (docs/usage.md has the table for every command).
EXIT_CODES_HELP = """\b
Exit status:
  0    done: files written, or nothing left to do
  1    --check: a file would change, a manual action remains, or a file
       could not be migrated (skipped: it fails bash -n, binary, unreadable)
  2    usage, table or config error; the git guard refused dirty files
  3    some files failed (the others were still processed)
  130  stopped by Ctrl-C (143: SIGTERM)"""


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
        for problem in getattr(exc, "problems", [exc]):  # a table's problems come all at once
            click.echo(f"error: {problem}", err=True)
        sys.exit(EXIT_USAGE)


def require_paths(paths) -> None:
    """Every PATH must exist (a typo must not pass CI as "1 skipped"); each bad one is named, then exit 2."""
    from migrator.codes import SkipReason
    from migrator.discover import path_problem

    problems = [(path, problem) for path in paths for problem in [path_problem(path)]
                if problem and problem.why is not SkipReason.CANNOT_STAT]  # unreadable: reported per file later
    for path, problem in problems:
        click.echo(f"error: {path}: {problem.text}", err=True)
    if problems:
        sys.exit(EXIT_USAGE)


def project_config(paths) -> dict:
    """`[tool.verl-migrate]` of the pyproject.toml above `paths`; a broken one exits 2."""
    from migrator.config import ConfigError, find_pyproject, load_config

    try:
        return load_config(find_pyproject(list(paths)))
    except ConfigError as exc:
        for problem in exc.problems:
            click.echo(f"error: {problem}", err=True)
        sys.exit(EXIT_USAGE)


def with_config(config: dict, to_release, from_release, tables, exclude=()):
    """Flags first, then `[tool.verl-migrate]`, then the defaults (`--to`: the newest release tag): (to, from,
    tables, exclude); list options add up.
    `--exclude` patterns also match relative to the current directory (pyproject's: to its directory);
    a glob that cannot be read exits 2."""
    from migrator.config import exclude_problems
    from migrator.discover import anchor_patterns

    problems = exclude_problems(exclude)
    for problem in problems:
        click.echo(f"error: --exclude {problem}", err=True)
    if problems:
        sys.exit(EXIT_USAGE)
    from migrator.config import default_target

    return (to_release or config.get("to") or default_target(), from_release or config.get("from"),
            tuple(tables) + tuple(config.get("table", ())),
            anchor_patterns(exclude, os.getcwd()) + tuple(config.get("exclude", ())))


def docs_dir() -> str:
    """Where the pages of docs/ are installed, for `--help` to name: the wheel ships them as migrator/_docs
    (pyproject's force-include), a checkout has them beside the package."""
    from pathlib import Path

    here = Path(__file__).resolve().parent.parent  # migrator/
    for directory in (here / "_docs", here.parent / "docs"):
        if (directory / "usage.md").is_file():
            return str(directory)
    return "docs"


def docs_epilog() -> str:
    """The help's last line: the folder of the pages the options name (kept on one line: a path must not wrap)."""
    return f"\b\nDocs: {docs_dir()}"


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


# The default is read from the tables (releases.yaml: the newest release that is not `unreleased`).
TO_DEFAULT_HELP = "default: the newest release tag; the unreleased tip by name: main"
MIGRATE_TO_HELP = f"The verl release to migrate to ({TO_DEFAULT_HELP})."


FROM_HELP = ("The verl release the files were written for (default: the oldest, v0.1); auto reads it off the keys "
             "and paths the files use.")


def release_options(f=None, *, to_help: str = MIGRATE_TO_HELP, from_help: str = FROM_HELP):
    """`--to`, `--from`, `--table`; `@release_options` or `@release_options(to_help=..., from_help=...)`."""
    if f is None:
        return lambda command: release_options(command, to_help=to_help, from_help=from_help)
    f = click.option("--table", "tables", multiple=True, type=click.Path(dir_okay=False),
                     help="An extra mapping table (repeatable); see table-format.md in Docs.")(f)
    f = click.option("--from", "from_release", metavar="REV", help=from_help)(f)
    f = click.option("--to", "to_release", metavar="REV", help=to_help)(f)
    return f
