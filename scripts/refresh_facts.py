"""Refresh every fact file under mappings/verl/facts/ from verl's history (maintainer tool).

    python scripts/refresh_facts.py --repo /path/to/verl/.git --recipe-repo /path/to/verl-recipe/.git [--only NAME ...]

Runs each writer below over the releases of mappings/verl/releases.yaml, in this order (the shipped
compositions come last: they compose the config trees the first step writes, over the selections a lint
of verl's examples makes with the facts written before). Each file it writes opens with the line that
names its writer and the verl commit it read (scripts/facts_header.py); mappings/verl/README.md maps
files to writers. Then `git diff mappings/verl/facts` shows what verl changed. A bare clone is enough.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
FACTS = ROOT / "mappings" / "verl" / "facts"

# name -> (writer, its arguments besides --repo; "{recipe}" is the verl-recipe clone), in the order they run.
WRITERS = {
    "configs": ("extract_verl_configs.py", []),
    "entry-points": ("extract_entry_config_keys.py", ["--recipe-repo", "{recipe}", "--out", str(FACTS),
                                                      "--releases", str(ROOT / "mappings" / "verl" / "releases.yaml")]),
    "config-keys": ("extract_ppo_config_keys.py", []),
    "trees": ("extract_verl_trees.py", []),
    "between-releases": ("extract_between_releases.py", []),
    "modules": ("extract_verl_modules.py", []),
    "api-signatures": ("extract_api_signatures.py", []),  # reads the module facts just written
    "prs": ("extract_verl_prs.py", []),
    "script-env": ("extract_script_env.py", []),
    "compositions": ("precompose_verl_configs.py", []),
    "default-changes": ("extract_default_changes.py", []),
    "script-moves": ("prove_script_moves.py", []),
    "components": ("extract_verl_components.py", []),
    "config-dataclasses": ("extract_config_dataclasses.py", []),
    "startup-verdicts": ("prove_startup_checks.py", []),
    "table-proofs": ("prove_tables.py", ["--recipe-repo", "{recipe}"]),  # reads every fact above
}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", required=True, help="verl's git directory (bare or .git)")
    parser.add_argument("--recipe-repo", required=True,
                        help="verl-recipe's git directory: the entry points of the recipe/ submodule (from v0.7.1)")
    parser.add_argument("--only", action="append", choices=list(WRITERS), help="run only these writers")
    args = parser.parse_args(argv)
    for name, (script, extra) in WRITERS.items():
        if args.only and name not in args.only:
            continue
        command = [sys.executable, str(HERE / script), "--repo", args.repo,
                   *(a.replace("{recipe}", args.recipe_repo) for a in extra)]
        started = time.monotonic()
        print(f"refresh: {name} ({script})", file=sys.stderr, flush=True)
        done = subprocess.run(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if done.returncode != 0:
            print(done.stdout, file=sys.stderr)
            print(f"refresh: {script} failed (exit {done.returncode})", file=sys.stderr)
            return 1
        print(f"refresh: {name} done in {time.monotonic() - started:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
