"""Lint time with Hydra's verdict (VM007) vs the key-list check it replaces, on a directory of scripts.

    git --git-dir=VERL.git archive v0.9.0 examples | tar -x -C /tmp/v090
    python bench/lint_verdict.py /tmp/v090/examples --to v0.9.0 [--baseline-rev REV] [--runs 5]

The baseline is this repository's `migrator/` and `mappings/` at `--baseline-rev` (before the verdict;
default: the parent of the first commit that added `migrator/verdict/`),
extracted to a temp dir and run from there; the candidate is the working tree. Both run `lint --to REV DIR`
in a fresh process. First one cold run each with an empty cache directory (the verdict then materializes
the configs, composes each base and parses every override once), then alternating warm runs (A B A B ...):
medians and the median of the per-pair ratios. Not a test: pytest does not collect this directory.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def extract(rev: str, into: Path) -> Path:
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "migrator", "mappings"],
                             check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def timed(source: Path, rev: str, directory: str, cache: Path) -> tuple[float, float]:
    """(wall, CPU) seconds of one lint run; CPU (user + system) varies less on a shared machine."""
    env = {**os.environ, "PYTHONPATH": str(source), "XDG_CACHE_HOME": str(cache)}
    cache.mkdir(parents=True, exist_ok=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    # From the cache directory: `python -m` puts the working directory first on sys.path, and a run from a
    # checkout would import that checkout's `migrator` instead of `source`'s.
    proc = subprocess.run([sys.executable, "-m", "migrator", "lint", "--to", rev, os.path.abspath(directory)],
                          env=env, cwd=cache, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"lint failed ({source}): {proc.stderr[-2000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory")
    parser.add_argument("--to", default="v0.9.0")
    parser.add_argument("--baseline-rev", help="git revision of this repo without the verdict "
                                               "(default: the commit before migrator/verdict/ appeared)")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    if args.baseline_rev is None:  # a merge base with main has the verdict too: take its first commit's parent
        first = subprocess.run(["git", "-C", str(ROOT), "log", "--format=%H", "--reverse", "--", "migrator/verdict"],
                               check=True, capture_output=True, text=True).stdout.split()[0]
        args.baseline_rev = f"{first}^"
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        (tmp / "baseline").mkdir()
        baseline = extract(args.baseline_rev, tmp / "baseline")
        caches = {name: tmp / f"cache-{name}" for name in ("baseline", "verdict")}
        sources = {"baseline": baseline, "verdict": ROOT}
        for source in sources.values():  # as `pip install` leaves it: byte-compiling is not lint's time
            subprocess.run([sys.executable, "-m", "compileall", "-q", str(source / "migrator")], check=True)
        cold = {name: timed(sources[name], args.to, args.directory, caches[name]) for name in sources}
        warm: dict[str, list[tuple[float, float]]] = {name: [] for name in sources}
        for _ in range(args.runs):
            for name in sources:
                warm[name].append(timed(sources[name], args.to, args.directory, caches[name]))
    print(f"lint --to {args.to} {args.directory}")
    for n, measure in enumerate(("wall", "CPU")):
        b, v = cold["baseline"][n], cold["verdict"][n]
        print(f"  cold {measure} (empty cache): baseline {b:.2f} s, verdict {v:.2f} s, ratio {v / b:.2f}")
        ratios = [v[n] / b[n] for v, b in zip(warm["verdict"], warm["baseline"])]
        print(f"  warm {measure}, median of {args.runs}: baseline {statistics.median(r[n] for r in warm['baseline']):.2f} s, "
              f"verdict {statistics.median(r[n] for r in warm['verdict']):.2f} s, ratio {statistics.median(ratios):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
