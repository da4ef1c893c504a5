"""Shell stubs at old script paths: warn once on stderr, then `exec` the moved script (or, when the
stub is sourced from bash, source the moved script and return).

A move the facts do not prove the same (mappings/verl/facts/script-moves.yaml: the new script trains
something else, or nobody proved it does not) gets a stub that refuses: it says what moved, what differs
(what VM103 says) and the PR, and exits 2, unless VERL_MIGRATE_RUN_MOVED=1 asks it to run the new script
anyway, with that warning. A stub that forwarded silently would train something else under the old name.

The stub finds the verl root from its own real location (following symlinks to the stub with plain
`readlink`, which GNU, BSD/macOS and busybox all have), so it runs from any cwd. Every piece of
table text reaches the script only inside single quotes ('\\'' for a quote) and is printed with
`printf '%s\\n'`, so `$()`, backticks, `%s` and backslashes stay inert.
"""

from __future__ import annotations

import posixpath

from migrator.mapping.kinds.path import not_proven_same, what_the_new_script_trains
from migrator.shims.model import GeneratedFile, header_lines, pr_links, removal_release, run_hint, seal

# {header}: comment block; {message}: quoted warning; {depth}: directories between root and stub.
# Inside a function (`local` variables): a stub that is sourced leaves the caller's variables alone.
RESOLVE = r"""  # Find the verl root from the stub's own location: follow symlinks to the stub, then climb.
  self=${BASH_SOURCE[0]}
  while [ -L "$self" ]; do
    link=$(readlink -- "$self") || break
    case $link in
      /*) self=$link ;;
      *) self=$(dirname -- "$self")/$link ;;
    esac
  done
  here=$(CDPATH='' cd -- "$(dirname -- "$self")" && pwd) || return 127
"""

MOVED = r"""#!/usr/bin/env bash
{header}
# Re-run under bash when started as `sh stub.sh` (BASH_SOURCE is bash-only). Sourced from sh or dash
# a stub cannot tell that it was sourced: source it from bash (docs/shims.md).
if [ -z "${{BASH_VERSION:-}}" ]; then exec bash "$0" "$@"; fi
# Warns, then sets verl_migrate_target to the new script (or returns 2 or 127).
verl_migrate_stub() {{
  local message self link here root target
  # shellcheck disable=SC2016  # table text is printed literally, never expanded
  message={message}
{refuse}  case ${{VERL_MIGRATE_SHIM:-}} in
    error) printf 'error: %s\n' "$message" >&2; return 2 ;;
    quiet) ;;
    *) printf '%s\n' "$message" >&2 ;;
  esac
{warn}{resolve}  root=$here
  {climb}target=$root/{new}
  if [ ! -f "$target" ]; then
    # The logical path may run through a symlinked directory: try the physical one.
    root=$(CDPATH='' cd -P -- "$here" && pwd -P) || return 127
    {climb}  target=$root/{new}
  fi
  if [ ! -f "$target" ]; then
    printf 'error: verl-migrate stub: %s is missing\n' "$target" >&2
    return 127
  fi
  verl_migrate_target=$target
}}
if [[ "${{BASH_SOURCE[0]}}" != "$0" ]]; then
  # Sourced (`. old.sh`, `source old.sh`): source the new script and return to the caller, as
  # sourcing the old one did (an `exec` would end the caller's shell).
  verl_migrate_stub || return
  unset -f verl_migrate_stub
  {exports_sourced}# shellcheck disable=SC1090  # the new script's path is known only at run time
  . "$verl_migrate_target"{args} "$@"
  return
fi
verl_migrate_stub || exit
{exports}exec "${{BASH:-bash}}" "$verl_migrate_target"{args} "$@"
"""

# A move not proven the same: {refusal} and {warning} quoted; the caller asks with RUN_MOVED=1.
RUN_MOVED = "VERL_MIGRATE_RUN_MOVED"
REFUSE = r"""  # The new script trains something else (or is not proven not to): run it only when asked.
  if [ "${{{run_moved}:-}}" != 1 ]; then
    # shellcheck disable=SC2016  # table text is printed literally, never expanded
    printf 'error: %s\n' {refusal} >&2
    return 2
  fi
"""
WARN = r"""  # shellcheck disable=SC2016  # table text is printed literally, never expanded
  printf 'warning: %s\n' {warning} >&2
"""

REMOVED = r"""#!/usr/bin/env bash
{header}
# shellcheck disable=SC2016  # table text is printed literally, never expanded
printf 'error: %s\n' {message} >&2
# Sourced from bash: return, so the caller's shell goes on (dash sourcing or running it: exit 2).
(return 0 2>/dev/null) && return 2
exit 2
"""


def shell_quote(text: str) -> str:
    """One single-quoted shell word whose value is exactly `text`."""
    return "'" + text.replace("'", "'\\''") + "'"


def stub(change, to_release: str, releases: tuple[str, ...], unreleased: tuple[str, ...] = ()) -> GeneratedFile:
    """The stub for one composed PathChange (moved: forward; removed: print the hint, exit 2)."""
    entries = change.entries
    first = entries[0].origin.release or to_release
    links = pr_links(entries)
    removal = removal_release(releases, first, unreleased)
    if change.new is None:
        message = (f"verl-migrate: {change.old} was removed in verl {first} ({links}): {change.hint}; "
                   f"{run_hint(to_release)}")
        header = header_lines(f"Deprecation stub: {change.old} was removed (prints the hint, exits 2).",
                              entries, to_release, releases, unreleased=unreleased)
        text = REMOVED.format(header=_comment(header), message=shell_quote(message))
        return GeneratedFile(change.old, seal(text), 0o755, "removed-stub", change.old)
    preset = "".join(f" {k}={v}" for k, v in change.env)
    with_env = f" (run with{preset})" if preset else ""
    message = (f"verl-migrate: {change.old} is deprecated: it moved to {change.new}{with_env} in verl {first} "
               f"({links}) and this stub goes away in {removal}; {run_hint(to_release)}")
    refuse = warn = ""
    what = f"Deprecation stub: {change.old} -> {change.new}"
    if not_proven_same(change):
        trains = what_the_new_script_trains(change)
        what += f" (not proven to train the same: runs the new script only with {RUN_MOVED}=1)"
        refusal = (f"verl-migrate: {change.old} moved to {change.new}{with_env} in verl {first} ({links}), and the "
                   f"new script {trains}; not run: set {RUN_MOVED}=1 to run the new script anyway, or keep a copy "
                   f"of the old script to train what it trained; {run_hint(to_release)}")
        warning = f"verl-migrate: {RUN_MOVED}=1: running {change.new}, which {trains}"
        refuse = REFUSE.format(run_moved=RUN_MOVED, refusal=shell_quote(refusal))
        warn = WARN.format(warning=shell_quote(warning))
    header = header_lines(what, entries, to_release, releases, unreleased=unreleased)
    depth = len(posixpath.dirname(change.old).split("/")) if "/" in change.old else 0
    text = MOVED.format(
        header=_comment(header),
        message=shell_quote(message),
        refuse=refuse,
        warn=warn,
        resolve=RESOLVE,
        climb=f"for _ in {' '.join(['x'] * depth)}; do root=${{root%/*}}; done\n  " if depth else "",
        new=shell_quote(change.new),
        exports="".join(f"export {k}={shell_quote(v)}\n" for k, v in change.env),
        exports_sourced="".join(f"export {k}={shell_quote(v)}\n  " for k, v in change.env),
        args="".join(f" {shell_quote(a)}" for a in change.args),
    )
    return GeneratedFile(change.old, seal(text), 0o755, "path-stub", change.old, change.new, requires=(change.new,))


def _comment(lines: list[str]) -> str:
    return "\n".join(f"# {line}" for line in lines)
