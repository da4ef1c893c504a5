"""Which keys verl removed from its non-main_ppo entry configs, and whether a table entry covers each
(maintainer tool, not shipped).

    python scripts/check_entry_coverage.py [--verbose] [--repo GITDIR [--recipe-repo GITDIR]]

From the shipped facts (`mappings/verl/facts/entry-config-keys/`) it lists, per config and pair of
consecutive releases, every key of the older release the newer one no longer has, and the entry that
tells users what to do about it:
- an `entry-point-move` of the newer release's table (`mappings/verl/<release>.yaml`) whose old config
  is this one, through its `keys:` map (the config itself went away);
- a key entry of that table whose `scope:` names this config;
- an unscoped key entry of that table: for the PPO family (`families.ppo` of `mappings/verl/scopes.yaml`)
  unless a `key-scope` entry excludes the config (`not-in:`), for any other config only where a
  `key-scope` entry extends the entry to it (`applies-to:`).
Exit status 1 when a removed key has no entry.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))  # facts_header, also when the tests load this file
from facts_header import data_lines, revision  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
TABLES = ROOT / "mappings" / "verl"
FACTS = TABLES / "facts"
SCOPES = TABLES / "scopes.yaml"
ENTRY_KINDS = ("entry-point-move", "entry-point-removal", "config-name-move", "config-dir-move", "config-dir-removal")
KEY_KINDS = ("key-rename", "key-removal", "key-no-action")


@dataclass(frozen=True)
class Removal:
    config: str
    before: str
    after: str
    key: str


@lru_cache(maxsize=None)
def releases() -> tuple[str, ...]:
    return tuple(yaml.safe_load((TABLES / "releases.yaml").read_text(encoding="utf-8"))["releases"])


@lru_cache(maxsize=None)
def entry_config_keys(release: str, config: str) -> dict[str, str] | None:
    path = FACTS / "entry-config-keys" / f"{release}.{config}.keys"
    if not path.is_file():
        return None
    return dict(line.split("\t", 1) for line in data_lines(path))


def entry_configs() -> list[str]:
    names = set()
    for path in (FACTS / "entry-config-keys").glob("*.keys"):
        names.add(path.name[: -len(".keys")].rsplit(".", 1)[1])
    return sorted(names)


def removals() -> list[Removal]:
    out = []
    order = releases()
    for config in entry_configs():
        for before, after in zip(order, order[1:]):
            old = entry_config_keys(before, config)
            if old is None:
                continue
            new = entry_config_keys(after, config) or {}
            out.extend(Removal(config, before, after, key) for key in sorted(set(old) - set(new)))
    return out


def matches(pattern: str, key: str) -> bool:
    """`a.b.*` names the subtree under `a.b` (and the node `a.b` itself); anything else one key."""
    if pattern.endswith(".*"):
        stem = pattern[:-2]
        return key == stem or key.startswith(stem + ".")
    return key == pattern


@lru_cache(maxsize=None)
def draft() -> dict:
    """The entry-point entries of the release tables, in the shape the draft had (one list for all
    releases, each entry naming its `release:`; `key-scope` entries as `existing-entries`)."""
    doc = {"families": yaml.safe_load(SCOPES.read_text(encoding="utf-8"))["families"],
           "existing-entries": [], "entries": []}
    for release in releases()[1:]:
        path = TABLES / f"{release}.yaml"
        for entry in yaml.safe_load(path.read_text(encoding="utf-8")).get("entries") or []:
            if entry["kind"] == "key-scope":
                doc["existing-entries"].append({"release": release, **entry})
            elif entry["kind"] in ENTRY_KINDS or (entry["kind"] in KEY_KINDS and "scope" in entry):
                doc["entries"].append({"release": release, **entry})
    return doc


@lru_cache(maxsize=None)
def table_key_entries(release: str) -> list[dict]:
    path = TABLES / f"{release}.yaml"
    if not path.is_file():
        return []
    entries = yaml.safe_load(path.read_text(encoding="utf-8")).get("entries") or []
    return [e for e in entries if e.get("kind") in KEY_KINDS and "scope" not in e]


def scope_extension(release: str, old: str) -> dict:
    for ext in draft().get("existing-entries") or []:
        if ext["release"] == release and ext["old"] == old:
            return ext
    return {}


def scope_configs(entry: dict) -> set[str]:
    """The config names a `scope:` names: configs, families (`families:` of the draft) or entry modules
    (the config their @hydra.main composes, at the release before the entry and at its release)."""
    order = releases()
    releases_seen = (order[order.index(entry["release"]) - 1], entry["release"])
    out = set()
    for name in entry.get("scope") or ():
        if name in draft()["families"]:
            out.update(draft()["families"][name])
        elif "." in name:
            out.update(entry_modules(r)[name]["config_name"] for r in releases_seen if name in entry_modules(r))
        else:
            out.add(name)
    return out


def covering_entry(removal: Removal) -> str | None:
    """A one-line description of the entry that covers `removal`, or None."""
    doc = draft()
    ppo_family = set(doc["families"]["ppo"])
    for entry in doc["entries"]:
        if entry["release"] != removal.after:
            continue
        if entry["kind"] == "entry-point-move" and entry.get("old-config") == removal.config:
            for item in entry.get("keys") or []:
                if matches(item["old"], removal.key):
                    return f"table {entry['kind']} {entry['old']} ({item['old']})"
        if entry["kind"] in KEY_KINDS and removal.config in scope_configs(entry) and matches(entry["old"], removal.key):
            return f"table {entry['kind']} {entry['old']}"
    for entry in table_key_entries(removal.after):
        if not matches(entry["old"], removal.key):
            continue
        ext = scope_extension(removal.after, entry["old"])
        if removal.config in ppo_family and removal.config not in ext.get("not-in", ()):
            return f"table {removal.after} {entry['kind']} {entry['old']}"
        if removal.config in ext.get("applies-to", ()):
            return f"table {removal.after} {entry['kind']} {entry['old']} (scope extended)"
    return None


def config_keys(release: str, config: str) -> dict[str, str]:
    """Keys of any config at `release`: entry facts first, then main_ppo's (config-keys/)."""
    keys = entry_config_keys(release, config)
    if keys is not None:
        return keys
    path = FACTS / "config-keys" / f"{release}.{config}.keys"
    if not path.is_file():
        return {}
    return dict(line.split("\t", 1) for line in data_lines(path))


def names_key(keys: dict[str, str], pattern: str) -> bool:
    return any(matches(pattern, key) for key in keys)


def target_problems() -> list[str]:
    """Draft entries whose old key is not in the old config or whose new key is not in the new one."""
    order = releases()
    problems = []
    for entry in draft()["entries"]:
        release = entry["release"]
        before = order[order.index(release) - 1]
        if entry["kind"] == "entry-point-move":
            old_keys = config_keys(before, entry["old-config"])
            new_keys = config_keys(release, entry["new-config"])
            for item in entry.get("keys") or []:
                if not names_key(old_keys, item["old"]):
                    problems.append(f"{release} {entry['old']}: {item['old']} not in {entry['old-config']} at {before}")
                new = item.get("new")
                if new and bool(item.get("add")) == names_key(new_keys, new):
                    state = "already in" if item.get("add") else "not in"
                    problems.append(f"{release} {entry['old']}: {new} {state} {entry['new-config']} at {release}")
            for pin in entry.get("defaults") or []:
                if pin.get("new") != "absent" and not names_key(new_keys, pin["key"]):
                    problems.append(f"{release} {entry['old']}: default {pin['key']} not in {entry['new-config']}")
        elif entry["kind"] in KEY_KINDS:
            for config in sorted(scope_configs(entry)):
                if not names_key(config_keys(before, config), entry["old"]):
                    problems.append(f"{release} {entry['old']} not in {config} at {before}")
                new = entry.get("new")
                if new and not names_key(config_keys(release, config), new):
                    problems.append(f"{release} {entry['old']}: {new} not in {config} at {release}")
    return problems


@lru_cache(maxsize=None)
def entry_modules(release: str) -> dict[str, dict]:
    points = yaml.safe_load((FACTS / "entry-points.yaml").read_text(encoding="utf-8"))["releases"]
    return {point["module"]: point for point in points.get(release) or []}


@lru_cache(maxsize=None)
def tree(release: str) -> frozenset[str]:
    path = FACTS / "trees" / f"{release}.paths"
    return frozenset(data_lines(path)) if path.is_file() else frozenset()


def has_module_or_dir(release: str, name: str) -> bool:
    """Whether an @hydra.main module, a package of one, a config dir of one, or a shipped path is `name`."""
    points = entry_modules(release)
    dotted = name.replace("/", ".")
    return (
        any(module == dotted or module.startswith(dotted + ".") for module in points)
        or any(point["config_dir"] == name for point in points.values())
        or any(path.startswith(name.rstrip("/") + "/") for path in tree(release))
    )


def move_problems() -> list[str]:
    """Entry-point, module and config-dir entries whose old name was not shipped before or whose new name is
    not shipped at their release (entry-points.yaml and trees/ facts)."""
    order = releases()
    problems = []
    for entry in draft()["entries"]:
        release, kind = entry["release"], entry["kind"]
        before = order[order.index(release) - 1]
        if kind in KEY_KINDS or kind == "config-name-move":
            continue
        if not has_module_or_dir(before, entry["old"]):
            problems.append(f"{release} {kind} {entry['old']}: not shipped at {before}")
        if has_module_or_dir(release, entry["old"]):
            problems.append(f"{release} {kind} {entry['old']}: still shipped at {release}")
        if "new" in entry and not has_module_or_dir(release, entry["new"]):
            problems.append(f"{release} {kind} {entry['new']}: not shipped at {release}")
    return problems


def module_entries(release: str) -> list[dict]:
    path = TABLES / f"{release}.yaml"
    entries = yaml.safe_load(path.read_text(encoding="utf-8")).get("entries") or [] if path.is_file() else []
    return [e for e in entries if e.get("kind") in ("module-move", "module-removal")]


def removed_entry_modules() -> list[tuple[str, str, str, str | None]]:
    """(before, after, module, covering entry or None) for every @hydra.main module a release dropped."""
    order = releases()
    out = []
    for before, after in zip(order, order[1:]):
        for module in sorted(set(entry_modules(before)) - set(entry_modules(after))):
            how = None
            for entry in draft()["entries"]:
                if entry["release"] == after and entry["kind"].startswith("entry-point") and entry["old"] == module:
                    how = f"table {entry['kind']}"
            for entry in module_entries(after):
                if how is None and (module == entry["old"] or module.startswith(entry["old"] + ".")):
                    how = f"table {after} {entry['kind']} {entry['old']}"
            out.append((before, after, module, how))
    return out


def commit_problems(repo: str, recipe_repo: str | None = None) -> list[str]:
    """Entries whose commit is not the PR's or did not land between the previous release and theirs.
    Entries with `repo: verl-recipe` are checked in that repository against the commits verl pins."""

    def git(gitdir: str, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run(["git", "--git-dir", gitdir, *args], capture_output=True, text=True)

    def pinned(rev: str) -> str | None:
        line = git(repo, "ls-tree", rev, "recipe").stdout.split()
        return line[2] if line and line[0] == "160000" else None

    order = releases()
    problems = []
    for entry in draft()["entries"] + draft()["existing-entries"]:
        if "commit" not in entry:
            continue
        release, commit, pr = entry["release"], entry["commit"], entry["pr"]
        rev = revision(release)
        before = order[order.index(release) - 1]
        gitdir = repo
        if entry.get("repo") == "verl-recipe":
            if recipe_repo is None:
                continue
            gitdir, rev, before = recipe_repo, pinned(rev), pinned(before)
        subject = git(gitdir, "log", "-1", "--format=%s", commit).stdout.strip()
        if f"(#{pr})" not in subject:
            problems.append(f"{release} {entry['old']}: commit {commit} is '{subject}', not PR #{pr}")
        if rev is None or git(gitdir, "merge-base", "--is-ancestor", commit, rev).returncode != 0:
            problems.append(f"{release} {entry['old']}: commit {commit} is not in {release}")
        if before and git(gitdir, "merge-base", "--is-ancestor", commit, before).returncode == 0:
            problems.append(f"{release} {entry['old']}: commit {commit} is already in {before}")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--verbose", "-v", action="store_true", help="also list covered keys and their entries")
    parser.add_argument("--repo", help="verl git directory: also check every entry's pr/commit pair")
    parser.add_argument("--recipe-repo", help="verl-recipe git directory: check its entries' pr/commit too")
    args = parser.parse_args()
    groups: dict[tuple[str, str, str], list[tuple[Removal, str | None]]] = {}
    for removal in removals():
        group = groups.setdefault((removal.config, removal.before, removal.after), [])
        group.append((removal, covering_entry(removal)))
    total = missing = 0
    for (config, before, after), rows in groups.items():
        uncovered = [r.key for r, how in rows if how is None]
        total += len(rows)
        missing += len(uncovered)
        print(f"{config:36} {before:>12} -> {after:<8} removed {len(rows):3}  covered {len(rows) - len(uncovered):3}")
        for key in uncovered:
            print(f"    NO ENTRY  {key}")
        if args.verbose:
            for r, how in rows:
                if how:
                    print(f"    {r.key}  <- {how}")
    share = 100.0 * (total - missing) / total if total else 100.0
    print(f"total: {total} removed keys, {total - missing} covered ({share:.1f}%)")
    for before, after, module, how in removed_entry_modules():
        print(f"entry module {before:>12} -> {after:<8} {module}: {how or 'NO ENTRY'}")
    gone = [m for _, _, m, how in removed_entry_modules() if how is None]
    problems = [f"entry module {m} has no entry" for m in gone] + target_problems() + move_problems()
    if args.repo:
        problems += commit_problems(args.repo, args.recipe_repo)
    for problem in problems:
        print(f"TABLE: {problem}")
    return 1 if missing or problems else 0


if __name__ == "__main__":
    sys.exit(main())
