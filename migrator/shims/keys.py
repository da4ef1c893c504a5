"""The runtime key-alias module: a standalone `translate(argv)` that accepts deprecated Hydra keys.

OmegaConf's `${oc.deprecated:...}` forwards reads of an old key but not a command-line override of
it; this module rewrites the override before Hydra parses it. It embeds the per-release key steps
(not a flattened map) and applies them in order at runtime, exactly like `MappingSet.key`, so
chains through subtree moves (a.* -> b.*, then b.x -> c.x) resolve the same way.
"""

from __future__ import annotations

from migrator.mapping.kind import Role
from migrator.mapping.kinds.key import KEY
from migrator.shims.model import GeneratedFile, header_lines, removal_release, run_hint, seal, unreleased_of

TEMPLATE = r'''{header}
"""Accept deprecated verl Hydra override keys for one more release: `sys.argv[1:] = translate(sys.argv[1:])`.

Standard library only; call it before Hydra parses the command line. Renamed keys (also inside moved
subtrees) are rewritten keeping their `+`/`++`/`~` prefix and their value; keys removed with
`action: remove` are dropped; keys whose removal is `action: warn` pass through unchanged. Each
deprecated key warns once per process with a FutureWarning (shown by default; `-W error::FutureWarning`
makes it fatal). VERL_MIGRATE_SHIM=quiet drops the warnings; VERL_MIGRATE_SHIM=error raises
DeprecatedOverrideError naming every deprecated key instead (for CI). Other arguments pass through.
"""

import os
import re
import warnings

TO_RELEASE = {to_release!r}
RUN_HINT = {run_hint!r}
# Applied in release order: (release, {{old key: (action, new, pr, hint)}}, {{old subtree: (...)}}).
# action: rename | remove | warn | none (a change that needs nothing from users).
STEPS = ({steps})
# Known keys whose answer differs from applying STEPS in order (verl brought the name back): key -> answer.
EXCEPTIONS = {exceptions}

_OVERRIDE_RE = re.compile(r"(~|\+\+|\+)?([A-Za-z_][A-Za-z0-9_-]*(?:\.[A-Za-z0-9_][A-Za-z0-9_-]*)*)(=|\Z)")
_WARNED = set()


class DeprecatedOverrideError(ValueError):
    """Raised by translate() under VERL_MIGRATE_SHIM=error when argv uses deprecated keys."""


def change(key):
    """(action, new key or None, hint, PR numbers) for a deprecated config key, or None."""
    if key in EXCEPTIONS:
        return EXCEPTIONS[key]
    current, prs = key, []
    for _release, exact, subtrees in STEPS:
        found = exact.get(current)
        after = found[1] if found is not None else None
        if found is None:
            parts = current.split(".")
            for n in range(len(parts), 0, -1):  # a subtree's root node belongs to the subtree
                prefix = ".".join(parts[:n])
                found = subtrees.get(prefix)
                if found is not None:
                    after = found[1] + current[len(prefix):] if found[0] == "rename" else current
                    break
        if found is None or found[0] == "none":
            continue
        prs.append(found[2])
        if found[0] in ("remove", "warn"):
            return found[0], None, found[3], prs
        current = after
    if prs and current != key:
        return "rename", current, None, prs
    return None


def _message(key, action, new, hint, prs):
    links = ", ".join(f"https://github.com/verl-project/verl/pull/{{pr}}" for pr in dict.fromkeys(prs))
    if action == "rename":
        what = f"is deprecated: use {{new!r}} ({{links}})"
    elif action == "remove":
        what = f"was removed ({{links}}): {{hint}}; the override is dropped"
    else:
        what = f"is deprecated ({{links}}): {{hint}}"
    return f"verl-migrate: config key {{key!r}} {{what}}; {{RUN_HINT}}"


def translate(argv):
    """Rewrite deprecated override keys in `argv` (a list of str); returns a new list."""
    mode = os.environ.get("VERL_MIGRATE_SHIM", "")
    out, problems = [], []
    for arg in argv:
        match = _OVERRIDE_RE.match(arg)
        if match is None or (not match.group(3) and match.group(1) != "~"):
            out.append(arg)
            continue
        prefix, key = match.group(1) or "", match.group(2)
        found = change(key)
        if found is None:
            out.append(arg)
            continue
        action, new, hint, prs = found
        message = _message(key, action, new, hint, prs)
        problems.append(message)
        if mode not in ("quiet", "error") and key not in _WARNED:
            _WARNED.add(key)
            warnings.warn(message, FutureWarning, stacklevel=2)
        if action == "rename":
            out.append(prefix + new + arg[match.end(2):])
        elif action == "warn":
            out.append(arg)
    if mode == "error" and problems:
        raise DeprecatedOverrideError("\n".join(problems))
    return out


if __name__ == "__main__":
    import shlex
    import sys

    print(" ".join(shlex.quote(arg) for arg in translate(sys.argv[1:])))
'''


def _row(entry) -> tuple[str, tuple]:
    """(old key or subtree prefix, (action, new, pr, hint)) for one key entry."""
    old = entry.old.removesuffix(".*")
    if entry.unit.role is Role.MOVE:
        return old, ("rename", entry.new.removesuffix(".*"), entry.pr, None)
    if entry.unit.role is Role.REMOVAL:
        return old, (entry.action, None, entry.pr, entry.hint)
    return old, ("none", None, entry.pr, None)


def _dict(rows: list[tuple[str, tuple]], indent: str) -> str:
    if not rows:
        return "{}"
    body = "".join(f"{indent}    {old!r}: {value!r},\n" for old, value in sorted(rows))
    return "{\n" + body + indent + "}"


def render_steps(mappings) -> str:
    steps = []
    for table in mappings.tables:
        exact, subtrees = [], []
        for entry in table.entries:
            if entry.unit.family is KEY and not entry.scope:
                (subtrees if entry.old.endswith(".*") else exact).append(_row(entry))
        if exact or subtrees:
            indent = "    "
            steps.append(f"\n{indent}({table.release!r},\n{indent} {_dict(exact, indent + ' ')},\n"
                         f"{indent} {_dict(subtrees, indent + ' ')}),")
    return "".join(steps) + ("\n" if steps else "")


def _answer(change) -> tuple | None:
    if change is None:
        return None
    return (change.action, change.new, change.hint, list(change.prs))


def render_exceptions(mappings) -> str:
    """Known keys (from the release facts) whose composed change differs from sequential steps."""
    history = getattr(mappings, "history", None)
    facts = getattr(history, "facts", None)
    if facts is None:
        return "{}"
    from migrator.mapping.compose import MappingSet

    plain = MappingSet(mappings.from_release, mappings.to_release, mappings.tables)
    exact = set(mappings.old_keys())
    prefixes = tuple(sorted({k for k in exact if mappings.is_subtree(k)}))
    upto = history.releases[: history.releases.index(mappings.to_release) + 1]
    candidates = set(exact)
    for release in upto:
        candidates.update(k for k in facts.keys(release)
                          if k in exact or any(k == p or k.startswith(p + ".") for p in prefixes))
    rows = []
    for key in sorted(candidates):
        composed = _answer(mappings.key(key))
        if composed != _answer(plain.key(key)):
            rows.append(f"    {key!r}: {composed!r},\n")
    return "{\n" + "".join(rows) + "}" if rows else "{}"


def source(mappings, releases: tuple[str, ...]) -> bytes:
    # main_ppo's keys only: scoped entries belong to other entry points' configs.
    entries = tuple(e for t in mappings.tables for e in t.entries
                    if e.unit.family is KEY and e.unit.role is not Role.NO_ACTION and not e.scope)
    what = (f"Runtime aliases for {len(entries)} deprecated Hydra key(s), verl "
            f"{mappings.from_release} -> {mappings.to_release}.")
    removals = "; ".join(f"aliases from {t.release} go away in {removal_release(releases, t.release, unreleased_of(mappings))}"
                         for t in mappings.tables if t.release and any(e in entries for e in t.entries))
    lines = header_lines(what, (), mappings.to_release, releases, removal=removals or "no aliases")
    header = "\n".join(f"# {line}" for line in lines)
    text = TEMPLATE.format(header=header, to_release=mappings.to_release, run_hint=run_hint(mappings.to_release),
                           steps=render_steps(mappings), exceptions=render_exceptions(mappings))
    return seal(text)


def module_file(mappings, releases: tuple[str, ...], relpath: str) -> GeneratedFile:
    return GeneratedFile(relpath, source(mappings, releases), 0o644, "keys", "(config keys)")
