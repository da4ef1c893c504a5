"""Which keys verl removed from its non-main_ppo entry configs, and whether a table entry covers each
(maintainer tool, not shipped).

    python scripts/check_entry_coverage.py [--verbose]

From the shipped facts (`mappings/verl/facts/entry-config-keys/`) it lists, per config and pair of
consecutive releases, every key of the older release the newer one no longer has, and the entry that
tells users what to do about it:
- an `entry-point-move` of the draft (`mappings/verl/drafts/entry-points.yaml`) whose old config is
  this one, through its `keys:` map (the config itself went away);
- a scoped key entry of the draft whose `scope:` names this config;
- a key entry of the built-in table of the newer release (`mappings/verl/<release>.yaml`): for the PPO
  family (the draft's `families.ppo`) unless the draft's `existing-entries` excludes the config
  (`not-in:`), for any other config only where `existing-entries` extends the entry to it (`applies-to:`).
Exit status 1 when a removed key has no entry.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
TABLES = ROOT / "mappings" / "verl"
FACTS = TABLES / "facts"
DRAFT = TABLES / "drafts" / "entry-points.yaml"
KEY_KINDS = ("key-rename", "key-removal", "key-no-action")


@dataclass(frozen=True)
class Removal:
    config: str
    before: str
    after: str
    key: str


def releases() -> list[str]:
    return yaml.safe_load((TABLES / "releases.yaml").read_text(encoding="utf-8"))["releases"]


@lru_cache(maxsize=None)
def entry_config_keys(release: str, config: str) -> dict[str, str] | None:
    path = FACTS / "entry-config-keys" / f"{release}.{config}.keys"
    if not path.is_file():
        return None
    return dict(line.split("\t", 1) for line in path.read_text(encoding="utf-8").splitlines() if line)


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
    return yaml.safe_load(DRAFT.read_text(encoding="utf-8"))


@lru_cache(maxsize=None)
def table_key_entries(release: str) -> list[dict]:
    path = TABLES / f"{release}.yaml"
    if not path.is_file():
        return []
    entries = yaml.safe_load(path.read_text(encoding="utf-8")).get("entries") or []
    return [e for e in entries if e.get("kind") in KEY_KINDS]


def scope_extension(release: str, old: str) -> dict:
    for ext in draft().get("existing-entries") or []:
        if ext["release"] == release and ext["old"] == old:
            return ext
    return {}


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
                    return f"draft {entry['kind']} {entry['old']} ({item['old']})"
        if entry["kind"] in KEY_KINDS and removal.config in entry["scope"] and matches(entry["old"], removal.key):
            return f"draft {entry['kind']} {entry['old']}"
    for entry in table_key_entries(removal.after):
        if not matches(entry["old"], removal.key):
            continue
        ext = scope_extension(removal.after, entry["old"])
        if removal.config in ppo_family and removal.config not in ext.get("not-in", ()):
            return f"table {removal.after} {entry['kind']} {entry['old']}"
        if removal.config in ext.get("applies-to", ()):
            return f"table {removal.after} {entry['kind']} {entry['old']} (scope extended)"
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--verbose", "-v", action="store_true", help="also list covered keys and their entries")
    args = parser.parse_args()
    groups: dict[tuple[str, str, str], list[tuple[Removal, str | None]]] = {}
    for removal in removals():
        groups.setdefault((removal.config, removal.before, removal.after), []).append((removal, covering_entry(removal)))
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
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
