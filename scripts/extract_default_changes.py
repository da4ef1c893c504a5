"""Write mappings/verl/facts/default-changes.yaml: every config default verl changed between two consecutive
releases, with the pull request that changed it (maintainer tool).

    python scripts/extract_default_changes.py --repo /path/to/verl/.git [--out mappings/verl/facts/default-changes.yaml]

For each pair of consecutive releases (releases.yaml) and each entry point's config present at both, the
two configs are composed with Hydra from the shipped config trees (mappings/verl/facts/configs/) with no
override, and compared leaf by leaf through the release's table (`migrator.verdict.effective.compare`:
interpolations resolved, renames and value changes applied). Each default that differs is attributed to the
commits between the two tags whose patch removes a line naming the key's last segment with the old value
and adds one with the new value, in a config file or a config dataclass (`git log -G`); PR numbers come
from their subjects (`(#N)`). A change no such patch shows keeps `prs: []`.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))  # facts_header
import facts_header  # noqa: E402

SUBJECT_PR = re.compile(r"\(#(\d+)\)\s*$")
MERGE_PR = re.compile(r"^Merge pull request #(\d+) ")
CONFIG_PATHS = ("verl/trainer/config", "verl/workers/config", "verl/trainer/ppo", "verl/workers/rollout",
                "recipe", "verl/experimental")


def git(repo: str, *args: str) -> str:
    return subprocess.run(["git", f"--git-dir={repo}", *args], check=True, capture_output=True, text=True,
                          errors="replace").stdout


def tag_of(repo: str, release: str) -> str:
    if release != "main":
        return release
    from migrator.mapping.load import builtin_mappings_dir

    text = (builtin_mappings_dir() / "verl" / "releases.yaml").read_text()
    return re.search(r"`main` is the unreleased tip \(verl commit ([0-9a-f]+)", text).group(1)


def attribute(repo: str, lo: str, hi: str, key: str, old_text: str, new_text: str) -> list[tuple[int | None, str]]:
    """(PR, commit) of every commit in lo..hi, oldest first, whose patch removes a line naming the key's last
    segment with the old value and adds one with the new value (a YAML default, a dataclass field's)."""
    leaf = key.rpartition(".")[2]
    log = git(repo, "log", "--reverse", "--format=%H%x09%s", f"{lo}..{hi}", "-G", rf"\b{re.escape(leaf)}\b", "--",
              *CONFIG_PATHS)
    named = re.compile(rf"\b{re.escape(leaf)}\b\s*(?::[^=#]*=|:|=)\s*(?P<value>[^#]*)")
    found = []
    for line in log.splitlines():
        sha, _, subject = line.partition("\t")
        patch = git(repo, "show", "-U0", "--format=", sha, "--", *CONFIG_PATHS)
        removed = {_plain(m.group("value")) for row in patch.splitlines() if row.startswith("-")
                   for m in [named.search(row)] if m}
        added = {_plain(m.group("value")) for row in patch.splitlines() if row.startswith("+")
                 for m in [named.search(row)] if m}
        if _plain(old_text) in removed and _plain(new_text) in added:
            found.append((_pr(subject), sha[:9]))
    return found


def _plain(value: str) -> str:
    """A written value as compared: quotes, trailing commas and case aside (`"sync"`, `True`, `0.0`)."""
    text = value.strip().rstrip(",").strip().strip("'\"").lower()
    if text in ("none", "~"):
        return "null"
    try:
        number = float(text)
        return repr(int(number)) if number == int(number) else repr(number)
    except (ValueError, OverflowError):
        return text


def _pr(subject: str) -> int | None:
    m = SUBJECT_PR.search(subject) or MERGE_PR.search(subject)
    return int(m.group(1)) if m else None


def changes(repo: str) -> list[dict]:
    from migrator.config import known_releases
    from migrator.tablecache import composed
    from migrator.verdict import StoreError, release_configs
    from migrator.verdict.effective import NOT_RENAMED, compare, effective_config, shown

    releases = list(known_releases())
    out = []
    for previous, release in zip(releases, releases[1:]):
        try:
            before_configs, after_configs = release_configs(previous), release_configs(release)
        except StoreError:
            continue
        mappings, _ = composed(previous, release, ())
        seen: set[tuple[str, ...]] = set()
        for script, entry in sorted(before_configs.entry_points.items()):
            target = after_configs.entry_points.get(script)
            if target is None:
                continue
            pair = (entry.config_path, entry.config_name, target.config_path, target.config_name)
            if pair in seen:
                continue
            seen.add(pair)
            before = effective_config(before_configs, entry.config_path, entry.config_name, ())
            after = effective_config(after_configs, target.config_path, target.config_name, ())
            if before.failure or after.failure:
                continue
            context = mappings.context(entry.module, entry.config_name)

            def rename(key, context=context, mappings=mappings):
                change = mappings.key(key, context)
                return NOT_RENAMED if change is None else change.new

            def revalue(key, value, mappings=mappings):
                if isinstance(value, (dict, tuple)):
                    return value
                change = mappings.value(key, shown(value))
                return value if change is None or change.new is None else change.new

            for difference in compare(before, after, rename, revalue).differences:
                found = attribute(repo, tag_of(repo, previous), tag_of(repo, release), difference.key,
                                  shown(difference.before), shown(difference.after))
                row = {"release": release, "config": f"{target.config_path}/{target.config_name}", "key": difference.key,
                       "old": shown(difference.before), "new": shown(difference.after)}
                if difference.source_key != difference.key:
                    row["old-key"] = difference.source_key
                prs = list(dict.fromkeys(pr for pr, _ in found if pr is not None))
                row["prs"] = prs
                row["commits"] = [commit for _, commit in found]
                out.append(row)
        print(f"{previous} -> {release}: {sum(r['release'] == release for r in out)} defaults", file=sys.stderr)
    return out


def render(rows: list[dict], head: str) -> str:
    import yaml

    body = yaml.safe_dump({"changes": rows}, sort_keys=False, allow_unicode=True, width=200)
    return head + body


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", required=True, help="a verl clone (its .git directory, or a bare clone)")
    parser.add_argument("--out", default=str(ROOT / "mappings" / "verl" / "facts" / "default-changes.yaml"))
    args = parser.parse_args()
    head = (facts_header.header(__file__, facts_header.all_releases(), facts_header.main_commit())
            + "# Defaults verl changed between consecutive releases (no override given), per entry config:\n"
            "# release = the first release with the new default; prs/commits = the changes that set it, oldest first\n"
            "# (each removes a line naming the key with the old value and adds one with the new; [] = none found).\n")
    Path(args.out).write_text(render(changes(args.repo), head), encoding="utf-8")


if __name__ == "__main__":
    main()
