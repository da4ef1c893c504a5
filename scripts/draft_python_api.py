"""Candidate Python API entries between consecutive verl releases, for a person to curate (maintainer tool).

    python scripts/draft_python_api.py --repo GITDIR [--release v0.8.0] > candidates.yaml

For every module that disappeared between two releases (from the shipped module facts) it proposes:
a `module-move` when git's rename detection pairs the .py file with a module of the next release that
binds at least half of the old module's names (an empty package `__init__.py` follows its submodules,
since git pairs tiny files at random); otherwise a `module-removal` with an empty hint; and, for every
public function or class a module stops binding while another module starts defining it (or, for a
removed module, already defines it), a `symbol-move`. Each candidate carries the PR and short commit that deleted or renamed the file
(`git log --diff-filter=DR A..B -- path`) and one line of evidence. Packages whose disappeared
submodules all follow one prefix move (or all go) are folded into one package entry.
"""

import argparse
import re
import subprocess
import sys
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from check_python_api_draft import load_module_facts, release_order  # noqa: E402
from extract_verl_modules import module_name  # noqa: E402
from facts_header import revision  # noqa: E402

PR_SUFFIX = re.compile(r"\(#(\d+)\)\s*$")
MOVE_SHARE = 0.5


def git(repo, *args):
    return subprocess.run(["git", "--git-dir", repo, *args], capture_output=True, text=True, check=True).stdout


def rev(release):
    return revision(release)


def module_path(repo, release, module):
    """The tracked file of `module` at `release` (package `__init__.py` or plain module)."""
    base = module.replace(".", "/")
    for candidate in (base + ".py", base + "/__init__.py"):
        if git(repo, "ls-tree", "--name-only", rev(release), "--", candidate).strip():
            return candidate
    return base + ".py"


def renames(repo, a, b):
    """{old module: new module} from git's rename detection between two releases."""
    out = git(repo, "diff", "--name-status", "-M", rev(a), rev(b), "--", "verl", "recipe")
    pairs = {}
    for line in out.splitlines():
        parts = line.split("\t")
        if parts[0].startswith("R") and parts[1].endswith(".py") and parts[2].endswith(".py"):
            old, new = module_name(parts[1]), module_name(parts[2])
            if old and new:
                pairs[old] = new
    return pairs


def removing_commit(repo, a, b, path):
    """(short sha, subject, pr) of the newest commit in A..B that deleted or renamed `path`."""
    for spec in (f"{rev(a)}..{rev(b)}", rev(b)):
        out = git(repo, "log", "--format=%h %s", "--diff-filter=DR", spec, "--", path).splitlines()
        if out:
            sha, subject = out[0].split(" ", 1)
            match = PR_SUFFIX.search(subject)
            return sha, subject, int(match.group(1)) if match else None
    return None, None, None


def names_of(module_names):
    return set(module_names.defined) | module_names.reexported


def is_api_name(name, params):
    """Functions and CamelCase classes: the names worth a symbol entry."""
    return not name.startswith("_") and (params is not None or (name[:1].isupper() and not name.isupper()))


def candidates_for(repo, a, b, facts):
    before, after = facts[a], facts[b]
    gone = sorted(set(before) - set(after))
    pairs = renames(repo, a, b)
    entries = []
    moves = {}
    for module in gone:
        old_names, new = names_of(before[module]), pairs.get(module)
        if new in after and old_names:
            share = len(old_names & names_of(after[new])) / len(old_names)
            if share >= MOVE_SHARE:
                moves[module] = (new, f"git rename; new binds {share:.0%} of old names")
            else:
                moves[module] = (None, f"git rename to {new}, shares {share:.0%} of names")
        elif new in after and new.rsplit(".", 1)[-1] == module.rsplit(".", 1)[-1]:
            moves[module] = (new, "git rename, same file name; no names")
    for module in gone:
        if module not in moves and not names_of(before[module]):
            # an empty package __init__ follows its submodules (git pairs tiny files at random)
            targets = {moves[m][0][:-len(m) + len(module)] for m in gone
                       if m.startswith(module + ".") and moves.get(m, (None,))[0]
                       and moves[m][0].endswith(m[len(module):])}
            if len(targets) == 1 and (target := targets.pop()) in after:
                moves[module] = (target, "package whose submodules moved")
    for module in gone:
        sha, subject, pr = removing_commit(repo, a, b, module_path(repo, a, module))
        new, evidence = moves.get(module, (None, "deleted"))
        if new:
            entry = {"kind": "module-move", "old": module, "new": new}
        else:
            entry = {"kind": "module-removal", "old": module, "hint": ""}
        entries.append({**entry, "pr": pr, "commit": sha, "note": f"{evidence}; {subject}"})
    entries = fold_packages(entries, before)
    removed = {e["old"] for e in entries if e["kind"] == "module-removal"}
    entries += symbol_moves(before, after, removed)
    return entries


def fold_packages(entries, before):
    """Replace the entries of a package's submodules by one package entry when they all agree."""
    by_old = {e["old"]: e for e in entries}
    packages = sorted({m.rsplit(".", 1)[0] for m in by_old if "." in m} | set(by_old), key=lambda p: p.count("."))
    folded = set()
    result = []
    for package in packages:
        if any(package.startswith(f + ".") or package == f for f in folded):
            continue
        members = [m for m in before if m == package or m.startswith(package + ".")]
        if len(members) < 2 or not all(m in by_old for m in members):
            continue
        kinds = {by_old[m]["kind"] for m in members}
        if kinds == {"module-removal"}:
            head = by_old.get(package) or by_old[members[0]]
            result.append({**head, "old": package, "note": f"{len(members)} modules; " + head["note"]})
            folded.add(package)
        elif kinds == {"module-move"} and package in by_old:
            new_package = by_old[package]["new"]
            if all(by_old[m]["new"] == new_package + m[len(package):] for m in members):
                result.append({**by_old[package], "note": f"{len(members)} modules; " + by_old[package]["note"]})
                folded.add(package)
    for e in entries:
        if not any(e["old"] == f or e["old"].startswith(f + ".") for f in folded):
            result.append(e)
    return sorted(result, key=lambda e: e["old"])


def symbol_moves(before, after, removed):
    """Public functions and classes one module stops binding while another starts defining them.

    For a module that was removed (not moved), a definition the next release already had counts too:
    its users' imports have somewhere to go (`verl.workers.engine_workers:ActorRolloutRefWorker`)."""
    gained, defined_after = {}, {}
    for module, names in after.items():
        for name, params in names.defined.items():
            had = before.get(module)
            if is_api_name(name, params):
                defined_after.setdefault(name, []).append(module)
                if not (had and name in had.defined):
                    gained.setdefault(name, []).append(module)
    entries = []
    for module, names in before.items():
        in_removed = any(module == r or module.startswith(r + ".") for r in removed)
        for name, params in names.defined.items():
            targets = gained.get(name) or (defined_after.get(name) if in_removed else None)
            if not is_api_name(name, params) or not targets:
                continue
            still = after.get(module)
            if still is not None and still.binds(name):
                continue
            entries.append({"kind": "symbol-move", "old": f"{module}:{name}", "new": f"{targets[0]}:{name}",
                            "note": "also defined in " + ", ".join(targets[1:]) if len(targets) > 1 else ""})
    return entries


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", required=True)
    parser.add_argument("--release", help="only this release (default: every release after the baseline)")
    args = parser.parse_args(argv)
    releases = release_order()
    facts = load_module_facts(releases=releases)
    groups = []
    for a, b in zip(releases, releases[1:]):
        if args.release in (None, b):
            groups.append({"release": b, "entries": candidates_for(args.repo, a, b, facts)})
    yaml.safe_dump({"releases": groups}, sys.stdout, sort_keys=False, width=200)


if __name__ == "__main__":
    main()
