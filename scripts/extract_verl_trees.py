"""Write mappings/verl/facts/trees/<release>.paths: the files of each verl release's tree (maintainer tool).

    python scripts/extract_verl_trees.py --repo /path/to/verl/.git [--out mappings/verl/facts/trees]

For every release in mappings/verl/releases.yaml: the paths under verl's roots (mappings/verl/layout.yaml),
every file of the roots whose every file the trees list (`trees_list_every_file`) and the `.py` and `.sh`
files of the others, in git's order, one a line. The lint (VM006), `--from auto` and the tables' tests
read them.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from facts_header import FACTS, commit_of, header, releases, writer_arguments  # noqa: E402

from migrator.layout import verl_layout  # noqa: E402


def tree_paths(repo: str, commit: str) -> list[str]:
    layout = verl_layout()
    listing = subprocess.run(["git", "--git-dir", repo, "ls-tree", "-r", "-z", "--name-only", commit, "--",
                              *layout.roots], check=True, capture_output=True).stdout.decode("utf-8")
    every_file = layout.directories(layout.trees_list_every_file)
    code = layout.directories(tuple(r for r in layout.roots if r not in layout.trees_list_every_file))
    return [path for path in listing.split("\0") if path and (
        path.startswith(every_file) or (path.startswith(code) and path.endswith((".py", ".sh"))))]


def main(argv=None) -> int:
    args = writer_arguments(__doc__, FACTS / "trees", argv)
    args.out.mkdir(parents=True, exist_ok=True)
    for release in releases():
        commit = commit_of(args.repo, release)
        paths = tree_paths(args.repo, commit)
        text = header(__file__, release, commit) + "".join(f"{p}\n" for p in paths)
        (args.out / f"{release}.paths").write_text(text, encoding="utf-8")
        print(f"{release}: {len(paths)} paths", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
