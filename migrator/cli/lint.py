"""`verl-migrate lint [--to REV] [--output-format text|concise|json|github] PATH...`

Exit codes: 0 no findings, 1 findings, 2 usage or table/facts errors (or a worker process that cannot
start), 3 a file could not be checked (an internal error, its worker process died).
"""

from __future__ import annotations

import json
import sys

import click

from migrator.cli.common import (
    EXIT_FAILED,
    EXIT_OK,
    EXIT_USAGE,
    EXIT_WORK_FOUND,
    TO_DEFAULT_HELP,
    docs_epilog,
    load_composed,
    project_config,
    release_options,
    require_paths,
    with_config,
)


@click.command("lint", epilog="Every check, with examples: lint.md in Docs.\n\n" + docs_epilog())
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@release_options(to_help=f"The verl release to check against ({TO_DEFAULT_HELP}).",
                 from_help="The verl release the scripts were written for (default, and auto: the oldest, v0.1: "
                 "every table's changes are known).")
@click.option("--output-format", type=click.Choice(["text", "concise", "json", "github"]), default="text",
              help="text (grouped by code, on stderr, as the rewrite's), concise (one `path:line:col: CODE message` "
                   "a line, on stdout), json (a list of findings) or github (annotations).")
@click.option("--select", multiple=True, metavar="CODES",
              help="Only codes starting with these, comma-separated (e.g. VM001,VM00); see codes.md in Docs.")
@click.option("--ignore", multiple=True, metavar="CODES", help="Not the codes starting with these.")
@click.option("--exclude", multiple=True, metavar="GLOB", help="Skip paths matching GLOB (repeatable).")
@click.option("--color", "color", type=click.Choice(["auto", "always", "never"]), default=None,
              help="Colour the text report: auto (on a terminal, unless NO_COLOR is set), always, never.")
@click.option("-v", "--verbose", is_flag=True, help="Also say which files were skipped and which checks stayed silent, and why.")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=None, help="Parallel workers (default: CPUs).")
@click.option("--facts", "facts_dir", type=click.Path(file_okay=False), hidden=True,
              help="A facts directory (config-keys/, trees/) instead of the shipped one (for tests).")
def lint(paths, to_release, from_release, tables, output_format, select, ignore, exclude, color, verbose, jobs,
         facts_dir):
    """Check verl launch scripts for bugs that otherwise surface on the cluster."""
    from migrator.discover import discover
    from migrator.lint import load_checks
    from migrator.lint.facts import FactsError, load_facts
    from migrator.lint.runner import lint_paths
    from migrator.parallel import WorkerStartError, default_jobs
    from migrator.progress import Progress
    from migrator.progress import wanted as progress_wanted

    require_paths(paths)
    # The same [tool.verl-migrate] table as the rewrite: to, from, table, exclude, select, ignore.
    config = project_config(paths)
    to_release, from_release, tables, exclude = with_config(config, to_release, from_release, tables, exclude)
    select, ignore = tuple(select) + tuple(config.get("select", ())), tuple(ignore) + tuple(config.get("ignore", ()))
    color = color or config.get("color", "auto")
    if from_release == "auto":  # a shared `from = "auto"`: the lint knows every change, as from the oldest
        from_release = None
    mappings, prefilter = load_composed(from_release, to_release, tables)
    try:
        facts = load_facts(facts_dir)
    except FactsError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    codes = None
    if select or ignore:  # one code space with the rewrite's codes (migrator/codes.py), ruff's prefix rule
        from migrator.codes import CodeFilter, CodeSelectionError, parse_codes

        try:
            shown = CodeFilter(parse_codes(select), parse_codes(ignore), lint=True)
        except CodeSelectionError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(EXIT_USAGE)
        from migrator.lint.python_imports import CODES as PYTHON_CODES

        codes = frozenset(code for check in load_checks().values() for code in check.codes if shown(code)) | \
            frozenset(code for code in PYTHON_CODES if shown(code))
    rev = mappings.to_release
    from migrator.rewrite.python.resolution import unknown_release_note

    unknown = unknown_release_note(mappings)
    if unknown:
        click.echo(unknown, err=True)
    # The rewrite's progress line, on stderr at a terminal; erased before anything else is printed.
    progress = Progress(sys.stderr, progress_wanted(sys.stderr, False, output_format in ("json", "github")), "with findings")
    progress.count_in_background(lambda: discover(list(paths), tuple(exclude)))

    def echo(message: str, err: bool = False) -> None:
        progress.clear()
        click.echo(message, err=err)

    findings, files, failed, kinds = [], 0, 0, set()
    try:
        for report in lint_paths(list(paths), facts, mappings, rev, tuple(exclude), codes, jobs or default_jobs(),
                                 note=lambda message: echo(message, err=True), progress=progress,
                                 prefilter=prefilter):
            progress.update(bool(report.findings))
            if report.failed:
                failed += 1
                echo(f"error: {report.path}: {report.failed}", err=True)
                continue
            if report.skipped:
                if verbose:
                    echo(f"skipped {report.path}: {report.skipped}", err=True)
                continue
            files += 1
            kinds.add(report.kind)
            if verbose:
                for note in report.notes:
                    echo(f"{report.path}: {note}", err=True)
            findings.extend(report.findings)
            if output_format == "concise":
                for f in report.findings:
                    echo(f.text())
            elif output_format == "github":
                for f in report.findings:
                    echo(f.github())
    except WorkerStartError as exc:
        echo(f"error: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    finally:
        progress.clear()
    if output_format == "json":
        click.echo(json.dumps([f.as_dict() for f in findings], indent=2))
    if output_format == "text":  # after the run, like the rewrite's: people's text on stderr
        from migrator.lint.report import findings_text
        from migrator.textreport import Style

        style = Style.for_stream(color, sys.stderr)
        for line in findings_text(findings, style):
            click.echo(line, err=True, color=style.colour)
    if output_format in ("text", "concise"):
        plural = "s" if len(findings) != 1 else ""
        noun = "script" if kinds <= {"shell"} else "file"  # launch scripts alone, or Python and YAML too
        click.echo(f"{len(findings)} finding{plural} in {files} {noun}{'s' if files != 1 else ''} "
                   f"(verl {rev})", err=True)
    if failed:
        sys.exit(EXIT_FAILED)
    sys.exit(EXIT_WORK_FOUND if findings else EXIT_OK)
