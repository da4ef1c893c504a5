"""Time the scans that were quadratic against the code that replaced them, on doubling inputs (not CI).

    python bench/regex_scaling.py               # each case at 4k, 8k, 16k, 32k bytes, best of 3
    python bench/regex_scaling.py --cli         # also a whole run on a script with one long heredoc line

The tests show linearity by structure (tests/unit/test_regex_linearity.py); this shows what it was
worth: a quadratic case takes ~4x per doubling, a linear one ~2x. Results: docs/robustness.md.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from migrator.lint.script import script_entry_point  # noqa: E402
from migrator.rewrite.shell.launches import _assignments  # noqa: E402
from migrator.rewrite.shell.locator import _overrides_at_word_starts  # noqa: E402

OLD_KEY = b"actor_rollout_ref.rollout.update_weights_bucket_megabytes"
OLD_OVERRIDE_SCAN = re.compile(rb"(?P<prefix>~|\+\+|\+)?(?P<key>[A-Za-z_][A-Za-z0-9_-]*(?:\.[A-Za-z0-9_][A-Za-z0-9_-]*)+)"
                               rb"(?:(?P<eq>=)|(?=[\s\"'\\]|\Z))")
OLD_ASSIGNMENT = re.compile(rb"(?m)^[ \t]*(?:(?:export|local|readonly|declare(?:[ \t]+-\w+)*)[ \t]+)?"
                            rb"(?P<name>[A-Za-z_][A-Za-z0-9_]*)=(?P<value>\([^)]*\)|[^\n]*)")
OLD_PY_SCRIPT = re.compile(r"(?:^|/)((?:verl|recipe|examples)/[\w/.-]+\.py)$")
OLD_GITMODULES_PATH = re.compile(r"^\s*path\s*=\s*(.+?)\s*$", re.M)
NEW_GITMODULES_PATH = re.compile(r"^[^\S\n]*path[^\S\n]*=[^\S\n]*(.+)$", re.M)
OLD_IMPORT_TAIL = re.compile(rb"import[ \t]+\w+[ \t]*,?[ \t]*(?:#[^\n]*)?\r?$", re.M)
NEW_IMPORT_TAIL = re.compile(rb"import[ \t]+\w+[ \t]*(?:,[ \t]*)?(?:#[^\n]*)?\r?$", re.M)

CASES = {  # name -> (input of about n bytes, old scan, new scan)
    "override in a heredoc line (shell)": (
        lambda n: b"a" * n,
        lambda s: list(OLD_OVERRIDE_SCAN.finditer(s)), lambda s: list(_overrides_at_word_starts(s, 0, len(s)))),
    "unclosed `X=(` lines (shell)": (
        lambda n: b"x=(\n" * (n // 4),
        lambda s: list(OLD_ASSIGNMENT.finditer(s)), lambda s: list(_assignments(s))),
    "`verl/` repeated in one word (lint)": (
        lambda n: "verl/" * (n // 5) + "x.p",
        lambda s: OLD_PY_SCRIPT.search(s), script_entry_point),
    "blank lines in .gitmodules (shims)": (
        lambda n: "\n" * n,
        lambda s: list(OLD_GITMODULES_PATH.finditer(s)), lambda s: list(NEW_GITMODULES_PATH.finditer(s))),
    "blanks after an import (python)": (
        lambda n: b"import a" + b" " * n + b"x\n",
        lambda s: list(OLD_IMPORT_TAIL.finditer(s)), lambda s: list(NEW_IMPORT_TAIL.finditer(s))),
}


def best_of(function, argument, runs: int = 3) -> float:
    best = float("inf")
    for _ in range(runs):
        started = time.perf_counter()
        function(argument)
        best = min(best, time.perf_counter() - started)
    return best


def cli_seconds(letters: int) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "run.sh"
        script.write_bytes(b"#!/bin/bash\ncat <<EOF\n" + b"a" * letters + b"\nEOF\n"
                           b"python3 -m verl.trainer.main_ppo " + OLD_KEY + b"=512\n")
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "migrator", "--to", "main", "--check", "-q", str(script)],
                       capture_output=True, cwd=ROOT, env={**os.environ, "VERL_MIGRATE_NO_CACHE": "1"})
        return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="4000,8000,16000,32000")
    parser.add_argument("--cli", action="store_true")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT).stdout
    print(f"{time.strftime('%Y-%m-%d')}, commit {commit.strip()}, Python {sys.version.split()[0]}, best of 3 (s)")
    print("| case | " + " | ".join(f"old {n}" for n in sizes) + " | " + " | ".join(f"new {n}" for n in sizes) + " |")
    print("|---|" + "---|" * (2 * len(sizes)))
    for name, (make, old, new) in CASES.items():
        olds = [best_of(old, make(n)) for n in sizes]
        news = [best_of(new, make(n)) for n in sizes]
        print(f"| {name} | " + " | ".join(f"{t:.4f}" for t in olds + news) + " |", flush=True)
    if args.cli:
        print("\n| heredoc letters | " + " | ".join(str(n) for n in sizes) + " |")
        print("|---|" + "---|" * len(sizes))
        print("| `verl-migrate --check` (s) | " + " | ".join(f"{cli_seconds(n):.2f}" for n in sizes) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
