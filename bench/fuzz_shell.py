"""Fuzz the rewriters through `fileprocess.process_file` for a fixed time budget (not part of CI).

    python bench/fuzz_shell.py --seconds 60                 # grammar-ish random mutations (no deps)
    python bench/fuzz_shell.py --seconds 60 --atheris       # coverage-guided (pip install atheris)

Inputs start from verl-style seeds of every kind (launch scripts, Python, YAML configs, notebooks,
Markdown; bench/fuzz_seeds.py) carrying old keys, modules, paths and env exports from the built-in
tables, and are mutated (byte flips, shell, Python, YAML and JSON tokens, splices, line-ending swaps,
truncation, and now and then a whole hostile shape: 50,000 unary minuses, a 3,500-term sum, brackets
2,000 deep, a 5,001-digit number, a lone surrogate escape, a `!!set`, a root flow mapping, a 32,000-letter
run). Each input runs through every registered rewriter kind (by its first extension). Invariants:

1. no exception escapes `process_file` (an "internal error" result counts as one), and the process
   survives (a crash ends the run);
2. a changed file passes `bash -n`, and running again on it changes nothing (idempotence).

An input that passes `bash -n` but whose edits would break it is refused by the engine's validate
gate and left untouched; that is safe, so it is counted and saved under --crashes/refused/ (the
locating could be smarter) but is not a failure. Failing inputs are written to --crashes (default
bench/fuzz-crashes/) and the run exits 1.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from fuzz_seeds import HOSTILE, SEEDS, TOKENS  # noqa: E402 - beside this script


def mutate(rng: random.Random, data: bytes) -> bytes:
    for _ in range(rng.randint(1, 6)):
        op = rng.randrange(8)
        at = rng.randint(0, len(data))
        if op == 7:
            if rng.random() < 0.1:  # one in ~80 mutations: a hostile shape, whole
                data = data[:at] + rng.choice(HOSTILE) + data[at:]
        elif op == 0 and data:
            i = rng.randrange(len(data))
            data = data[:i] + bytes([rng.randrange(256)]) + data[i + 1:]
        elif op in (1, 2):
            data = data[:at] + rng.choice(TOKENS) + data[at:]
        elif op == 3 and data:
            end = min(len(data), at + rng.randint(1, 40))
            data = data[:at] + data[end:]
        elif op == 4:
            other = rng.choice(SEEDS)
            i = rng.randint(0, len(other))
            data = data[:at] + other[i:i + rng.randint(1, 120)] + data[at:]
        elif op == 5:
            data = data.replace(b"\n", b"\r\n") if rng.random() < 0.5 else data.replace(b"\r\n", b"\n")
        else:
            lines = data.split(b"\n")
            if lines:
                i = rng.randrange(len(lines))
                lines.insert(i, lines[rng.randrange(len(lines))])
            data = b"\n".join(lines)
    return data


class Checker:
    def __init__(self, crashes: Path):
        from migrator.cli.common import load_mappings
        from migrator.rewrite import REWRITERS

        self.mappings = load_mappings(None, "v0.8.0", ())
        self.names = [f"fuzz{spec.extensions[0]}" for spec in REWRITERS]
        self.bash = shutil.which("bash")
        self.crashes = crashes
        self.failures = 0
        self.stats = {"changed": 0, "unchanged": 0, "skipped": 0, "failed": 0, "refused": 0}
        self.kinds = {"internal error": 0, "broken output": 0, "not idempotent": 0}

    def bash_ok(self, data: bytes) -> bool:
        if self.bash is None:
            return True
        proc = subprocess.run([self.bash, "-n"], input=data.replace(b"\r\n", b"\n"), capture_output=True, timeout=30)
        return proc.returncode == 0

    def check(self, data: bytes) -> None:
        from migrator.fileprocess import process_file

        for name in self.names:
            result = process_file(name, name, self.mappings, data=data)
            self.stats[result.status] += 1
            problem = None
            if result.status == "failed" and (result.reason or "").startswith("internal error"):
                problem = result.reason
                self.kinds["internal error"] += 1
            elif result.status == "failed" and result.reason.startswith("left untouched"):
                self.stats["refused"] += 1
                self.record(name, data, f"refused by the validate gate: {result.reason}", "refused")
            elif result.status == "changed":
                # A script bash already rejected may be edited by provably harmless edits (its verdict
                # stays); what must never happen is a script that passed `bash -n` and no longer does.
                if name.endswith(".sh") and not self.bash_ok(result.after) and self.bash_ok(data):
                    problem = "changed output fails bash -n, the input passed"
                    self.kinds["broken output"] += 1
                again = process_file(name, name, self.mappings, data=result.after)
                if again.status != "unchanged":
                    problem = problem or f"not idempotent: second run is {again.status} ({again.reason})"
                    self.kinds["not idempotent"] += 1
            if problem:
                self.record(name, data, problem)

    def record(self, name: str, data: bytes, problem: str, kind: str = "") -> None:
        if not kind:
            self.failures += 1
        directory = self.crashes / kind
        directory.mkdir(parents=True, exist_ok=True)
        digest = hashlib.sha1(data).hexdigest()[:12]
        (directory / f"{digest}-{name}").write_bytes(data)
        print(f"{kind.upper() or 'FAIL'} {digest}-{name}: {problem}", file=sys.stderr)


def run_random(checker: Checker, seconds: float, seed: int) -> int:
    rng = random.Random(seed)
    deadline = time.monotonic() + seconds
    runs = 0
    while time.monotonic() < deadline:
        checker.check(mutate(rng, rng.choice(SEEDS)))
        runs += 1
    return runs


def run_atheris(checker: Checker, seconds: float) -> None:
    import atheris

    with atheris.instrument_imports():
        import migrator.fileprocess  # noqa: F401
        import migrator.rewrite.scan  # noqa: F401
        import migrator.rewrite.shell  # noqa: F401
    corpus = Path(checker.crashes).parent / "fuzz-corpus"
    corpus.mkdir(parents=True, exist_ok=True)
    for i, seed in enumerate(SEEDS):
        (corpus / f"seed{i}").write_bytes(seed)
    atheris.Setup([sys.argv[0], f"-max_total_time={int(seconds)}", "-rss_limit_mb=4096", str(corpus)],
                  checker.check)
    atheris.Fuzz()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--atheris", action="store_true", help="coverage-guided fuzzing with atheris")
    parser.add_argument("--crashes", type=Path, default=ROOT / "bench" / "fuzz-crashes")
    args = parser.parse_args()
    checker = Checker(args.crashes)
    started = time.monotonic()
    if args.atheris:
        run_atheris(checker, args.seconds)  # exits the process when done
    runs = run_random(checker, args.seconds, args.seed)
    elapsed = time.monotonic() - started
    print(f"{runs} inputs x {len(checker.names)} rewriter(s) in {elapsed:.0f} s ({runs / elapsed:.0f}/s): "
          + ", ".join(f"{k} {v}" for k, v in checker.stats.items()) + f"; failures {checker.failures} ("
          + ", ".join(f"{k} {v}" for k, v in checker.kinds.items()) + ")")
    return 1 if checker.failures else 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
