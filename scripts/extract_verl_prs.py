"""Write mappings/verl/facts/prs.tsv: where each pull request named by a verl table shipped (maintainer tool).

    python scripts/extract_verl_prs.py --repo /path/to/verl/.git [--out mappings/verl/facts/prs.tsv]

For every `pr:` in mappings/verl/*.yaml and mappings/verl/drafts/*.yaml the row holds the squash commit
(subject ending in `(#N)`, or a `Merge pull request #N` commit), the first release whose tag contains
it (`main` when only the main tip at releases.yaml's commit does) and the files it touched that
tests/tables/test_prs.py needs: config files under verl/ and recipe/, whatever the entries naming
the PR point at (their paths, directories and module files), and the key names of its key entries
(last component, or the parent of `_target_`) that occur on a line the PR added or deleted.
Releases come from releases.yaml.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import yaml
from facts_header import ROOT, all_releases, commit_of, git, header, pr_of, revision

VERL = ROOT / "mappings" / "verl"
CONFIG_FILE = re.compile(r"^(verl|recipe)/(.*/)?config/.*\.(yaml|py)$|^verl/trainer/config/.*$")


def table_entries() -> list[dict]:
    entries = []
    for path in sorted(VERL.glob("*.yaml")) + sorted((VERL / "drafts").glob("*.yaml")):
        data = yaml.safe_load(path.read_text())
        if isinstance(data, dict) and "entries" in data:
            entries += [e for e in data["entries"] if isinstance(e, dict) and "pr" in e]
        elif isinstance(data, dict) and "releases" in data and isinstance(data["releases"], dict):
            for group in data["releases"].values():  # drafts/values.yaml groups entries by release
                entries += [e for e in group if isinstance(e, dict) and "pr" in e]
    return entries


def module_targets(module: str) -> list[str]:
    stem = module.replace(".", "/")
    return [stem + ".py", stem + "/"]


PACKAGE_MOVES: dict[str, str] = {}  # module-move old -> new, filled by main(): a later PR may touch the moved files


def targets(entry: dict) -> list[str]:
    """Files or directories (ending in /) an entry names, which its PR is expected to touch."""
    kind = entry.get("kind", "")
    names = [entry[f] for f in ("old", "new") if isinstance(entry.get(f), str)]
    if kind.startswith("module-"):
        names += [new + n[len(old):] for n in list(names) for old, new in PACKAGE_MOVES.items()
                  if n.startswith(old + ".")]
    if "file" in entry:  # value entries name the verl file that reads or checks the value
        return [entry["file"]]
    if kind.startswith("path-"):
        return names
    if kind.startswith("module-") or kind == "target-move":
        out = []
        for name in names:
            out += module_targets(name)
            if kind == "target-move":  # a class path: its module is everything before the last dot
                out += module_targets(name.rpartition(".")[0])
        return out
    return []


def key_names(entry: dict) -> set[str]:
    """Names the PR of a key, value or target entry must add or delete: each key's last real component
    (the parent of `_target_`; for value maps, of the old and new key), for a key rename the components
    old and new do not share (`ray_init` -> `ray_kwargs`), and the literal old and new values of value
    and target entries (class names for class paths; patterns are not searched)."""
    kind = entry.get("kind", "")
    if not kind.startswith(("key-", "value-", "target-")):
        return set()
    keyed = [entry.get(f) for f in ("old", "new")] if kind.startswith("key-") else [entry.get("old-key"), entry.get("new-key")]
    parts = [[p for p in k.split(".") if p not in ("*", "_target_")] for k in keyed
             if isinstance(k, str) and not k.startswith("-")]
    out = {p[-1] for p in parts if p}
    if len(parts) == 2 and kind.startswith("key-"):
        out |= set(parts[0]) ^ set(parts[1])
    if not kind.startswith("key-"):
        for field in ("old", "new"):
            value = entry.get(field)
            if isinstance(value, str) and value.replace(".", "").replace("_", "").isalnum():
                out.add(value.rpartition(".")[2])
    return out


def changed_names(repo: str, sha: str, names: set[str]) -> list[str]:
    """Which of `names` occur (as words) on lines the commit added or deleted."""
    if not names:
        return []
    diff = git(repo, "show", "-m", "--first-parent", "--no-renames", "-U0", "--format=", sha)
    lines = [ln for ln in diff.splitlines() if ln[:1] in "+-" and not ln.startswith(("+++", "---"))]
    text = "\n".join(lines)
    return sorted(n for n in names if re.search(r"(?<![A-Za-z0-9_])" + re.escape(n) + r"(?![A-Za-z0-9_])", text))


def relevant(files: list[str], wanted: list[str]) -> list[str]:
    """Config files, plus each wanted path (a directory once) that `files` touched."""
    out = sorted({f for f in files if CONFIG_FILE.match(f)})
    for target in wanted:
        if target.endswith("/"):
            if any(f.startswith(target) for f in files):
                out.append(target)
        elif target in files:
            out.append(target)
    return sorted(set(out))


def pr_commits(repo: str) -> dict[int, list[str]]:
    """PR number -> commits (oldest first) whose subject names it as the squashed or merged PR."""
    found: dict[int, list[str]] = {}
    for line in git(repo, "log", "--all", "--reverse", "--format=%H %s").splitlines():
        sha, _, subject = line.partition(" ")
        pr = pr_of(subject)
        if pr is not None:
            found.setdefault(pr, []).append(sha)
    return found


def release_sets(repo: str) -> list[tuple[str, set[str]]]:
    releases = yaml.safe_load((VERL / "releases.yaml").read_text())["releases"]
    out = []
    for rel in releases:
        out.append((rel, set(git(repo, "rev-list", revision(rel)).split())))
    return out


def touched(repo: str, sha: str) -> list[str]:
    # -m --first-parent: a merge commit's changes against the branch it was merged into
    text = git(repo, "show", "-m", "--first-parent", "--no-renames", "--format=", "--name-only", sha)
    return [f for f in text.splitlines() if f]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", required=True, help="verl git directory")
    parser.add_argument("--out", default=str(VERL / "facts" / "prs.tsv"))
    args = parser.parse_args()

    wanted: dict[int, list[str]] = {}
    names: dict[int, set[str]] = {}
    PACKAGE_MOVES.update({e["old"]: e["new"] for e in table_entries() if e.get("kind") == "module-move"})
    for entry in table_entries():
        wanted.setdefault(int(entry["pr"]), []).extend(targets(entry))
        names.setdefault(int(entry["pr"]), set()).update(key_names(entry))
    commits = pr_commits(args.repo)
    releases = release_sets(args.repo)
    rows = ["# pr\tcommit\trelease\ttouched (config files and the paths/modules its entries name; ';'-separated)"
            "\tkey names its entries name that it added or deleted (';'-separated)"]
    for pr in sorted(wanted):
        shas = commits.get(pr, [])
        if not shas:
            rows.append(f"{pr}\t-\t-\t\t")
            continue
        first = next((rel for rel, reach in releases if any(s in reach for s in shas)), "unreleased")
        # the commit on the main line when there is one (release branches hold cherry-picks)
        main_line = [s for s in shas if s in releases[-1][1]] or shas
        files = sorted({f for s in shas for f in touched(args.repo, s)})
        found = sorted({n for s in shas for n in changed_names(args.repo, s, names[pr])})
        rows.append(f"{pr}\t{main_line[0][:9]}\t{first}\t{';'.join(relevant(files, wanted[pr]))}\t{';'.join(found)}")
    Path(args.out).write_text(header(__file__, all_releases(), commit_of(args.repo, "main")) + "\n".join(rows) + "\n")
    print(f"{len(rows) - 1} PRs written to {args.out}")


if __name__ == "__main__":
    main()
