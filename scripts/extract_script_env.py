"""Write mappings/verl/facts/script-env.tsv: the environment variables each path-move target script reads.

    python scripts/extract_script_env.py --repo VERL_GIT_DIR

For every `path-move` with `env:` presets in mappings/verl/<release>.yaml, the new script at that
release and the environment variables a preset can set: those read with a default (`${X:-...}`,
`${X:=...}`) and those read but never assigned; tests/tables/test_path_presets.py checks that every preset
names one of them. Maintainer tool; rerun after adding presets.
"""

from __future__ import annotations

import argparse
import re
import subprocess
from pathlib import Path

import yaml
from facts_header import VERL_TABLES as VERL
from facts_header import all_releases, commit_of, header, revision

READ = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)")
DEFAULT_READ = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*):?[-=]")
ASSIGN = re.compile(r"(?:^|[\s;&|(])(?:export\s+|local\s+|readonly\s+)?([A-Za-z_][A-Za-z0-9_]*)=", re.M)


def settable(text: str) -> list[str]:
    """Variables an environment preset reaches: read with a default, or read and never assigned."""
    read = {m.group(1) for m in READ.finditer(text)}
    assigned = {m.group(1) for m in ASSIGN.finditer(text)}
    return sorted({m.group(1) for m in DEFAULT_READ.finditer(text)} | (read - assigned))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", required=True)
    parser.add_argument("--out", default=str(VERL / "facts" / "script-env.tsv"))
    args = parser.parse_args()
    releases = yaml.safe_load((VERL / "releases.yaml").read_text())["releases"]
    rows = {"# release\tscript\tvariables it reads (';'-separated)"}
    for rel in releases[1:]:
        for entry in yaml.safe_load((VERL / f"{rel}.yaml").read_text())["entries"]:
            if entry["kind"] != "path-move" or not entry.get("env"):
                continue
            rev = revision(rel)
            text = subprocess.run(["git", f"--git-dir={args.repo}", "show", f"{rev}:{entry['new']}"],
                                  capture_output=True, text=True).stdout
            names = settable(text)
            rows.add(f"{rel}\t{entry['new']}\t{';'.join(names)}")
    columns = sorted(r for r in rows if r.startswith("#"))
    Path(args.out).write_text(header(__file__, all_releases(), commit_of(args.repo, "main"))
                              + "\n".join(columns + sorted(r for r in rows if not r.startswith("#"))) + "\n")
    print(f"{len(rows) - 1} scripts written to {args.out}")


if __name__ == "__main__":
    main()
