"""`verl-migrate [migrate] PATH...`: rewrite files to a newer verl release (the default command).

Imported with the group, so it imports only click and `common` at module level; the engine and
the rewriters load when the command runs.
"""

from __future__ import annotations

import sys

import click

from migrator.cli.common import (EXIT_FAILED, EXIT_OK, EXIT_USAGE, EXIT_WORK_FOUND, load_composed, project_config,
                                 release_options, require_paths,
                                 with_config)


@click.command("migrate")
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@release_options
@click.option("--check", is_flag=True, help="Write nothing; exit 1 if any file would change.")
@click.option("--diff", "show_diff", is_flag=True, help="Print a unified diff on stdout; write nothing.")
@click.option("--output-format", type=click.Choice(["text", "json"]), default=None,
              help="text (default) or json on stdout.")
@click.option("-q", "--quiet", is_flag=True, help="Print only findings that need a person, and errors.")
@click.option("-v", "--verbose", is_flag=True, help="Print every edit and every skipped file.")
@click.option("--allow-dirty", is_flag=True, default=None, help="Write files that have uncommitted git changes.")
@click.option("--allow-staged", is_flag=True,
              help="Write files whose uncommitted changes are all staged (the pre-commit hook; see README).")
@click.option("--exclude", multiple=True, metavar="GLOB", help="Skip paths matching GLOB (repeatable).")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=None, help="Parallel workers.")
def migrate(paths, to_release, from_release, tables, check, show_diff, output_format, quiet, verbose,
            allow_dirty, allow_staged, exclude, jobs):
    """Rewrite files and directories from old verl paths and keys to new ones (the default command)."""
    from migrator.discover import discover
    from migrator.engine import DirtyFilesError, RunOptions, run
    from migrator.gitguard import GitGuardError
    from migrator.lock import LockHeld
    from migrator.parallel import default_jobs
    from migrator.progress import Progress
    from migrator.progress import wanted as progress_wanted
    from migrator.report import RunSummary, json_report, unified_diff

    require_paths(paths)
    config = project_config(paths)
    to_release, from_release, tables, exclude = with_config(config, to_release, from_release, tables, exclude)
    output_format = output_format or config.get("output-format", "text")
    allow_dirty = allow_dirty if allow_dirty is not None else config.get("allow-dirty", False)
    mappings, prefilter = load_composed(from_release, to_release, tables)
    dry = check or show_diff
    as_json = output_format == "json"
    finding_stream_err = show_diff  # stdout carries the diff

    progress = Progress(sys.stderr, progress_wanted(sys.stderr, quiet, as_json), "would change" if dry else "changed")
    progress.count_in_background(lambda: discover(list(paths), exclude))

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
                         allow_staged=allow_staged, jobs=jobs or config.get("jobs") or default_jobs())
    try:
        try:
            results = run(options, mappings, on_result=on_result, prefilter=prefilter,
                          on_note=lambda note: echo(note, err=True))
        finally:
            progress.clear()
    except DirtyFilesError as exc:
        unstaged = "unstaged or untracked " if allow_staged else "uncommitted "
        click.echo(f"error: refusing to overwrite files with {unstaged}changes "
                   "(commit, stage or stash them, or pass --allow-dirty):", err=True)
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
        click.echo(summary.line(dry, releases, mappings.to_release), err=True)
    if summary.failed:
        sys.exit(EXIT_FAILED)
    if check and summary.changed:
        sys.exit(EXIT_WORK_FOUND)
    sys.exit(EXIT_OK)
