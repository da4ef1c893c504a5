"""`verl-migrate shims`: generate, install and check deprecation shims (see docs/shims.md)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from migrator.cli.common import EXIT_FAILED, EXIT_OK, EXIT_USAGE, EXIT_WORK_FOUND, docs_epilog


def shim_options(f):
    f = click.option("--keys-module", metavar="REL",
                     help="Also write the key-alias module at REL inside the tree (e.g. verl/utils/deprecated_keys.py).")(f)
    f = click.option("--table", "tables", multiple=True, type=click.Path(dir_okay=False),
                     help="An extra mapping table (repeatable); see table-format.md in Docs.")(f)
    f = click.option("--from", "from_release", metavar="REV",
                     help="Oldest release whose changes get no shim (default: by the deprecation policy, "
                          "two releases before --to).")(f)
    f = click.option("--to", "to_release", metavar="REV", required=True, help="The verl release the shims are for.")(f)
    return f


def compose_for_shims(to_release, from_release, tables):
    """(MappingSet, release order); --from defaults to the deprecation policy's window."""
    from migrator.config import known_releases
    from migrator.mapping import TableError
    from migrator.shims import policy_from_release
    from migrator.tablecache import composed

    try:
        releases = tuple(known_releases())  # the built-in tables' releases, without parsing the tables
        if to_release in releases and from_release is None:
            from_release = policy_from_release(releases, to_release)
        return composed(from_release, to_release, tuple(tables))[0], releases  # cached between runs
    except TableError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_USAGE)


def build_plan(to_release, from_release, tables, keys_module, tree_paths=None):
    from migrator.shims import plan_shims

    if keys_module is not None:
        _check_relpath(keys_module, "--keys-module")
    mappings, releases = compose_for_shims(to_release, from_release, tables)
    facts = getattr(mappings.history, "facts", None)
    if tree_paths is None and facts is not None:
        tree_paths = facts.paths(mappings.to_release)  # the shipped tree of the target release
    try:
        return plan_shims(mappings, releases, tree_paths, keys_module)
    except ValueError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_USAGE)


def _check_relpath(relpath: str, option: str) -> None:
    parts = relpath.split("/")
    if relpath.startswith("/") or any(p in ("", ".", "..") for p in parts) or not relpath.endswith(".py"):
        click.echo(f"error: {option} must be a relative path to a .py file inside the tree, got {relpath!r}", err=True)
        sys.exit(EXIT_USAGE)


def _root(path: str, option: str) -> Path:
    root = Path(path)
    if not root.is_dir():
        click.echo(f"error: {option} {path}: not a directory", err=True)
        sys.exit(EXIT_USAGE)
    return root


def _report_install(outcomes, notes, verb: str) -> None:
    from collections import Counter

    for note in notes:
        click.echo(f"note: {note}", err=True)
    for outcome in outcomes:
        if outcome.status != "unchanged":
            click.echo(outcome.line(), err=outcome.is_problem)
    counts = Counter(o.status for o in outcomes)
    summary = ", ".join(f"{n} {status}" for status, n in sorted(counts.items())) or "nothing to do"
    click.echo(f"{verb}: {summary}", err=True)
    sys.exit(EXIT_FAILED if counts.get("refused") else EXIT_OK)


@click.group("shims")
def shims():
    """Deprecation shims: stubs at old script paths and modules that warn and forward."""


@shims.command("generate", epilog=docs_epilog())
@shim_options
@click.option("--out", "out", required=True, type=click.Path(file_okay=False), help="Directory to write the stubs into.")
def generate(to_release, from_release, tables, keys_module, out):
    """Write one stub per moved or removed script (and module) at its old path under --out."""
    from migrator.shims.tree import install as install_tree

    plan = build_plan(to_release, from_release, tables, keys_module)
    root = Path(out)
    root.mkdir(parents=True, exist_ok=True)
    outcomes, _ = install_tree(plan, root, require_targets=False)
    _report_install(outcomes, plan.notes, "generate")


@shims.command("install", epilog=docs_epilog())
@shim_options
@click.option("--verl-root", required=True, type=click.Path(file_okay=False), help="A verl checkout.")
def install(to_release, from_release, tables, keys_module, verl_root):
    """Write the stubs into a verl checkout: create, update our own, never touch real files."""
    from migrator.shims.tree import CheckoutPaths
    from migrator.shims.tree import install as install_tree

    root = _root(verl_root, "--verl-root")
    plan = build_plan(to_release, from_release, tables, keys_module, CheckoutPaths(root))
    outcomes, notes = install_tree(plan, root, require_targets=True)
    _report_install(outcomes, plan.notes + notes, "install")


@shims.command("check", epilog=docs_epilog())
@shim_options
@click.option("--verl-root", type=click.Path(file_okay=False), help="A verl checkout with installed stubs.")
@click.option("--out", type=click.Path(file_okay=False), help="A directory written by `shims generate`.")
def check(to_release, from_release, tables, keys_module, verl_root, out):
    """Exit 1 when a stub is missing, stale, hand-edited or left over; list each one."""
    from migrator.shims.tree import CheckoutPaths
    from migrator.shims.tree import check as check_tree

    if (verl_root is None) == (out is None):
        click.echo("error: give exactly one of --verl-root and --out", err=True)
        sys.exit(EXIT_USAGE)
    root = _root(verl_root or out, "--verl-root" if verl_root else "--out")
    plan = build_plan(to_release, from_release, tables, keys_module, CheckoutPaths(root) if verl_root else None)
    outcomes, notes = check_tree(plan, root, require_targets=verl_root is not None)
    problems = [o for o in outcomes if o.is_problem]
    for o in problems:
        click.echo(o.line())
    ok = len(outcomes) - len(problems)
    if problems:
        click.echo(f"check: {len(problems)} shim problem(s), {ok} ok; fix with: verl-migrate shims "
                   f"{'install --verl-root' if verl_root else 'generate --out'} {root} --to {to_release}", err=True)
        sys.exit(EXIT_WORK_FOUND)
    click.echo(f"check: {ok} shim file(s) up to date", err=True)
    sys.exit(EXIT_OK)


@shims.command("keys", epilog=docs_epilog())
@click.option("--to", "to_release", metavar="REV", required=True, help="The verl release the aliases are for.")
@click.option("--from", "from_release", metavar="REV",
              help="Oldest release whose changes get no alias (default: two releases before --to).")
@click.option("--table", "tables", multiple=True, type=click.Path(dir_okay=False),
              help="An extra mapping table (repeatable); see table-format.md in Docs.")
@click.option("--out", "out", required=True, type=click.Path(dir_okay=False), help="The .py file to write.")
def keys(to_release, from_release, tables, out):
    """Write a standalone module with `translate(argv)` that accepts deprecated Hydra keys."""
    from migrator.shims.keys import source
    from migrator.shims.model import read_seal
    from migrator.shims.tree import write_new

    mappings, releases = compose_for_shims(to_release, from_release, tables)
    path = Path(out)
    if path.is_symlink() or (path.exists() and read_seal(path.read_bytes()) is None):
        click.echo(f"error: {out}: refusing to overwrite a file verl-migrate did not generate", err=True)
        sys.exit(EXIT_FAILED)
    write_new(path, source(mappings, releases), 0o644)
    click.echo(f"keys: wrote {out}", err=True)
