"""Write mappings/verl/facts/between-releases.yaml: the scripts the tables name that verl added and removed
between two releases, so that neither release's tree has them (maintainer tool).

    python scripts/extract_between_releases.py --repo /path/to/verl/.git [--out mappings/verl/facts/between-releases.yaml]

For each release's table (mappings/verl/<release>.yaml), in entry order: every `old` of a path-move or
path-removal that neither that release's tree nor the previous release's has, with the verl commits that
added it (the oldest) and removed it (the newest) in between. `--from auto` counts such a script as
written against that release (migrator/written_for.py).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from facts_header import FACTS, VERL_TABLES, all_releases, commit_of, header, releases, writer_arguments  # noqa: E402

DESCRIPTION = ("# Scripts that existed only between two releases (added after one, gone before the next).\n"
               "# Tables may name them as `old`; `added`/`removed` are the verl commits that created and removed them.\n")
PATH_KINDS = ("path-move", "path-removal")


def git(repo: str, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", repo, *args], check=True, capture_output=True, text=True).stdout


def between(repo: str) -> list[dict]:
    rows = []
    names = releases()
    for before, release in zip(names, names[1:]):
        start, end = commit_of(repo, before), commit_of(repo, release)
        trees = {c: set(git(repo, "ls-tree", "-r", "-z", "--name-only", c).split("\0")) for c in (start, end)}
        table = yaml.safe_load((VERL_TABLES / f"{release}.yaml").read_text(encoding="utf-8"))
        seen = set()
        for entry in table.get("entries") or ():
            old = entry.get("old")
            if entry.get("kind") not in PATH_KINDS or not isinstance(old, str) or old.endswith("/") or old in seen:
                continue
            seen.add(old)
            if old in trees[start] or old in trees[end]:
                continue
            log = [("--diff-filter=" + change, f"{start}..{end}") for change in "AD"]
            added, removed = (git(repo, "log", "--format=%h", "--abbrev=9", change, span, "--", old).split()
                              for change, span in log)
            if added and removed:
                rows.append({"path": old, "release": release, "added": added[-1], "removed": removed[0]})
    return rows


def main(argv=None) -> int:
    args = writer_arguments(__doc__, FACTS / "between-releases.yaml", argv)
    rows = between(args.repo)
    text = header(__file__, all_releases(), commit_of(args.repo, releases()[-1])) + DESCRIPTION + \
        yaml.safe_dump({"paths": rows}, sort_keys=False, width=120)
    args.out.write_text(text, encoding="utf-8")
    print(f"{len(rows)} scripts written to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
