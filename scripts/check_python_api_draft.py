"""Check the Python API entries of the release tables against the shipped module facts (maintainer tool).

    python scripts/check_python_api_draft.py [DRAFT.yaml] [--facts verl.modules] [-v]

From `mappings/verl/facts/modules/verl.modules` alone it verifies every module, symbol and keyword
entry of the release tables (`mappings/verl/<release>.yaml`), or of a draft file grouped by release
when one is named: the old module or symbol exists at the release before the
entry's `release`, it is gone at `release` (a symbol: no longer bound by the old module), and the new
module or symbol exists at `release`. It then reports coverage: of the modules that disappeared
between consecutive releases, how many an entry names (itself or a package above it). Exit 1 when an
entry is inconsistent with the facts.
"""

import argparse
import re
import sys
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from migrator.mapping.modulefacts import ModuleNames, expand_runs, read_module_facts  # noqa: E402,F401

ROOT = Path(__file__).resolve().parent.parent
FACTS = ROOT / "mappings" / "verl" / "facts" / "modules" / "verl.modules"
RELEASES_YAML = ROOT / "mappings" / "verl" / "releases.yaml"
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml: the pure-Python parser took ~0.5 s

MODULE_KINDS = {"module-move", "module-removal", "module-no-action"}
SYMBOL_KINDS = {"symbol-move", "symbol-rename", "symbol-removal", "keyword-rename"}
FIELDS = {
    "module-move": ({"old", "new"}, set()),
    "module-removal": ({"old", "hint"}, set()),
    "module-no-action": ({"old", "why"}, set()),
    "symbol-move": ({"old", "new"}, {"hint"}),
    "symbol-rename": ({"old", "new"}, {"hint"}),
    "symbol-removal": ({"old", "hint"}, set()),
    "keyword-rename": ({"old", "keyword", "new"}, set()),
}
COMMON_FIELDS = {"kind", "release", "pr", "commit", "note"}
DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*\Z")
IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def release_order():
    return yaml.safe_load(RELEASES_YAML.read_text())["releases"]


def load_module_facts(path=FACTS, releases=None):
    """{release: {module: ModuleNames}} from the shipped facts file."""
    return read_module_facts(Path(path), releases or release_order())


def split_symbol(ref):
    module, _, name = ref.partition(":")
    return module, name


def named_by(module, olds):
    """Whether an entry for one of `olds` (a module or a package above it) covers `module`."""
    return any(module == o or module.startswith(o + ".") for o in olds)


def has_module_under(prefix, modules):
    return any(m == prefix or m.startswith(prefix + ".") for m in modules)


def check_entry(entry, facts, releases):
    """Problems (strings) of one draft entry against the facts."""
    kind, release = entry.get("kind"), entry.get("release")
    if kind not in FIELDS:
        return [f"unknown kind {kind!r}"]
    required, optional = FIELDS[kind]
    problems = [f"missing field {f!r}" for f in sorted(required | {"release", "pr"}) if f not in entry]
    problems += [f"unexpected field {f!r}" for f in sorted(set(entry) - required - optional - COMMON_FIELDS)]
    if release not in releases[1:]:
        return problems + [f"release {release!r} is not a release after the baseline"]
    if not isinstance(entry.get("pr"), int) or entry["pr"] <= 0:
        problems.append("pr must be a positive integer")
    if problems:
        return problems
    before, after = facts[releases[releases.index(release) - 1]], facts[release]
    old = entry["old"]
    if kind in MODULE_KINDS:
        if not DOTTED.match(old):
            return [f"old {old!r} is not a dotted module name"]
        if not has_module_under(old, before):
            problems.append(f"{old} (or a submodule) does not exist before {release}")
        if old in after:
            problems.append(f"{old} still exists at {release}")
        if kind == "module-move":
            new = entry["new"]
            if not has_module_under(new, after):
                problems.append(f"{new} does not exist at {release}")
        return problems
    old_module, old_name = split_symbol(old)
    if not (DOTTED.match(old_module) and IDENT.match(old_name or "")):
        return [f"old {old!r} is not module:name"]
    if old_module not in before or not before[old_module].binds(old_name):
        return [f"{old} is not bound before {release}"]
    if kind == "keyword-rename":
        return problems + check_keyword(entry, before, after)
    if kind == "symbol-removal":
        if old_module in after and after[old_module].binds(old_name):
            problems.append(f"{old} is still bound at {release}")
        return problems
    new_module, new_name = split_symbol(entry["new"])
    if kind == "symbol-rename" and not new_name:
        new_module, new_name = old_module, entry["new"]
    if old_module in after and after[old_module].binds(old_name):
        problems.append(f"{old} is still bound at {release}")
    if new_module not in after or new_name not in after[new_module].defined:
        problems.append(f"{new_module}:{new_name} is not defined at {release}")
    return problems


def check_keyword(entry, before, after):
    module, name = split_symbol(entry["old"])
    old_params = before[module].defined.get(name)
    new_params = after.get(module, ModuleNames()).defined.get(name)
    problems = []
    if old_params is None or entry["keyword"] not in old_params:
        problems.append(f"{entry['old']} had no parameter {entry['keyword']!r} before {entry['release']}")
    if new_params is None:
        problems.append(f"{entry['old']} is not defined at {entry['release']}")
    elif entry["new"] not in new_params or entry["keyword"] in new_params:
        problems.append(f"{entry['old']} does not take {entry['new']!r} instead of {entry['keyword']!r}"
                        f" at {entry['release']}")
    return problems


def check_submodules(entry, entries, facts, releases):
    """A module move carries its submodules: each one that disappeared must exist under the new name,
    unless a longer entry of the same release names it."""
    if entry.get("kind") != "module-move" or entry.get("release") not in releases[1:]:
        return []
    release, old, new = entry["release"], entry["old"], entry["new"]
    before, after = facts[releases[releases.index(release) - 1]], facts[release]
    longer = [e["old"] for e in entries if e.get("release") == release and e.get("kind") in MODULE_KINDS
              and e.get("old", "").startswith(old + ".")]
    missing = [m for m in before if m.startswith(old + ".") and m not in after and not named_by(m, longer)
               and new + m[len(old):] not in after]
    return [f"submodule {m} has no {new + m[len(old):]} at {release}" for m in sorted(missing)]


def weak_moves(entries, facts, releases, share=0.5):
    """Module moves whose new module binds less than `share` of the old module's public names (not counting
    names a symbol entry of the same release sends elsewhere): worth a look."""
    result = []
    sent = {(e["release"], e["old"]) for e in entries if e.get("kind") in SYMBOL_KINDS - {"keyword-rename", "symbol-removal"}}
    for e in entries:
        if e.get("kind") != "module-move" or e.get("release") not in releases[1:]:
            continue
        old = facts[releases[releases.index(e["release"]) - 1]].get(e["old"])
        new = facts[e["release"]].get(e["new"])
        names = set(old.defined) | old.reexported if old else set()
        if names and new:
            kept = len([n for n in names if new.binds(n) or (e["release"], f"{e['old']}:{n}") in sent]) / len(names)
            if kept < share:
                result.append((e, kept))
    return result


def load_tables(directory=RELEASES_YAML.parent):
    """The Python API entries of the release tables, in the draft's form (keyword-rename: `old` is the
    function and `keyword` the old keyword), each with its release."""
    entries = []
    for release in release_order()[1:]:
        data = yaml.load((Path(directory) / f"{release}.yaml").read_text(), Loader=_LOADER) or {}
        for entry in data.get("entries") or []:
            kind = entry.get("kind")
            if kind == "keyword-rename":
                entry = {**entry, "old": entry["function"], "keyword": entry["old"]}
                del entry["function"]
            elif kind not in MODULE_KINDS | SYMBOL_KINDS:
                continue
            entries.append({"release": release, **entry})
    return entries


def load_draft(path):
    """The draft's entries, each with its release (the file groups entries by release)."""
    data = yaml.safe_load(Path(path).read_text())
    entries = []
    for group in data["releases"]:
        for entry in group["entries"]:
            entries.append({"release": group["release"], **entry})
    return entries


def disappeared_modules(facts, releases):
    """{release: [modules present at the release before and absent at this one]}."""
    return {b: sorted(set(facts[a]) - set(facts[b])) for a, b in zip(releases, releases[1:])}


def coverage(entries, facts, releases):
    """{release: (covered modules, all disappeared modules)}."""
    olds = {}
    for entry in entries:
        if entry.get("kind") in MODULE_KINDS:
            olds.setdefault(entry["release"], set()).add(entry["old"])
    result = {}
    for release, gone in disappeared_modules(facts, releases).items():
        hit = [m for m in gone if named_by(m, olds.get(release, ()))]
        result[release] = (hit, gone)
    return result


def validate(entries, facts, releases):
    """[(entry, problems)] for every entry with a problem, plus duplicate `old`s per release."""
    failures = [(e, p) for e in entries if (p := check_entry(e, facts, releases))]
    failures += [(e, p) for e in entries if (p := check_submodules(e, entries, facts, releases))]
    seen = set()
    for e in entries:
        key = (e.get("release"), e.get("kind") in MODULE_KINDS, e.get("old"), e.get("keyword"))
        if key in seen:
            failures.append((e, ["another entry of this release has the same old"]))
        seen.add(key)
    return failures


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("draft", nargs="?", help="a draft grouped by release (default: the release tables)")
    parser.add_argument("--facts", default=str(FACTS))
    parser.add_argument("-v", "--verbose", action="store_true", help="list the modules without an entry")
    args = parser.parse_args(argv)
    releases = release_order()
    facts = load_module_facts(args.facts, releases)
    entries = load_draft(args.draft) if args.draft else load_tables()
    failures = validate(entries, facts, releases)
    for entry, problems in failures:
        print(f"{entry.get('release')} {entry.get('kind')} {entry.get('old')}: {'; '.join(problems)}")
    total_hit = total = 0
    for release, (hit, gone) in coverage(entries, facts, releases).items():
        kinds = {}
        for e in entries:
            if e["release"] == release:
                kinds[e["kind"]] = kinds.get(e["kind"], 0) + 1
        pct = 100.0 * len(hit) / len(gone) if gone else 100.0
        by_kind = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items()))
        print(f"{release:14} {len(hit):4}/{len(gone):<4} modules covered ({pct:5.1f}%)  entries: {by_kind or '-'}")
        if args.verbose:
            for m in sorted(set(gone) - set(hit)):
                print(f"    no entry: {m}")
        total_hit, total = total_hit + len(hit), total + len(gone)
    for e, kept in weak_moves(entries, facts, releases):
        print(f"note: {e['release']} module-move {e['old']} -> {e['new']}: the new module binds {kept:.0%} of the old names")
    print(f"overall        {total_hit:4}/{total:<4} modules covered ({100.0 * total_hit / max(total, 1):5.1f}%),"
          f" {len(entries)} entries, {len(failures)} inconsistent")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
