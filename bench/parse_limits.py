"""Where the parsers verl-migrate calls give up on deeply nested input, measured (not part of CI).

    python bench/parse_limits.py                     # every shape against every parser, a markdown table
    python bench/parse_limits.py --shapes unary,paren --parsers libcst

For each shape (`x = ----a`, `x = a+a+a`, `((((a))))`, a notebook nested in JSON arrays, ...) and each
parser (`ast.parse`, `compile`, `libcst.parse_module`, `json.loads`, PyYAML's loaders, and verl-migrate's
own rewriter of that kind through `fileprocess.process_file`, for Python and YAML also with its first
nesting bound lifted: "unguarded"), it searches the smallest nesting N at which
the parser fails: doubling N, then bisecting to 2% (--precision). Every probe runs in a fresh interpreter, so a
segmentation fault (libcst's native parser) costs only the probe; a probe that takes longer than
--timeout seconds counts as failing ("timeout"). The table gives N, how it failed (the exception, or the
signal), and, for Python, the nesting the guard of `migrator/rewrite/python/nesting.py` estimates at N,
next to the bound it skips files above. Results: docs/robustness.md.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# An old import in front of every Python shape, so verl-migrate's rewriter does not stop at its prefilter.
PYTHON_HEAD = "import verl.utils.reward_score.math\n"
OLD_KEY = "actor_rollout_ref.rollout.update_weights_bucket_megabytes"

PYTHON_SHAPES = {
    "unary": lambda n: "x = " + "-" * n + "a\n",
    "not": lambda n: "x = " + "not " * n + "a\n",
    "binary": lambda n: "x = a" + "+a" * n + "\n",
    "power": lambda n: "x = a" + "**a" * n + "\n",
    "boolop": lambda n: "x = a" + " and a" * n + "\n",
    "compare": lambda n: "x = a" + "<a" * n + "\n",
    "paren": lambda n: "x = " + "(" * n + "a" + ")" * n + "\n",
    "list": lambda n: "x = " + "[" * n + "]" * n + "\n",
    "tuple": lambda n: "x = " + "(a, " * n + "a" + ")" * n + "\n",
    "dict": lambda n: "x = " + "{1: " * n + "1" + "}" * n + "\n",
    "nested call": lambda n: "x = " + "f(k=" * n + "1" + ")" * n + "\n",
    "nested subscript": lambda n: "x = " + "a[" * n + "0" + "]" * n + "\n",
    "comprehension": lambda n: "x = " + "[a for a in " * n + "b" + "]" * n + "\n",
    "attribute": lambda n: "x = a" + ".b" * n + "\n",
    "call": lambda n: "x = f" + "()" * n + "\n",
    "subscript": lambda n: "x = a" + "[0]" * n + "\n",
    "ternary": lambda n: "x = " + "a if b else " * n + "c\n",
    "lambda": lambda n: "x = " + "lambda: " * n + "a\n",
    "fstring": lambda n: 'x = f"{a' + "+a" * n + '}"\n',
    "indent": lambda n: "".join(" " * i + "if a:\n" for i in range(n)) + " " * n + "pass\n",
    "elif": lambda n: "if a:\n    pass\n" + "elif a:\n    pass\n" * n,
    "statements": lambda n: "a = 1\n" * n,
}
JSON_SHAPES = {
    "json-arrays": lambda n: '{"cells": [], "metadata": {"x": ' + "[" * n + "]" * n + "}}",
}
YAML_SHAPES = {
    "yaml-flow": lambda n: "a: " + "[" * n + "]" * n + "\n",
    "yaml-block": lambda n: "".join(" " * i + "k:\n" for i in range(n)) + " " * n + "k: 1\n",
}
PARSERS = {  # parser -> the shapes it reads
    "ast.parse": PYTHON_SHAPES, "compile": PYTHON_SHAPES, "libcst": PYTHON_SHAPES, "libcst front-end": PYTHON_SHAPES,
    "python rewriter (unguarded)": PYTHON_SHAPES, "python rewriter": PYTHON_SHAPES,
    "json.loads": JSON_SHAPES, "notebook rewriter": JSON_SHAPES,
    "yaml CSafeLoader": YAML_SHAPES, "yaml SafeLoader": YAML_SHAPES, "yaml rewriter (unguarded)": YAML_SHAPES,
    "yaml rewriter": YAML_SHAPES,
}


def source_of(shape: str, n: int) -> str:
    if shape in PYTHON_SHAPES:
        return PYTHON_HEAD + PYTHON_SHAPES[shape](n)
    if shape in JSON_SHAPES:
        return JSON_SHAPES[shape](n)
    return f"{OLD_KEY}: 1\n" + YAML_SHAPES[shape](n)


def probe(parser: str, shape: str, n: int) -> str:
    """Run in a child: 'ok' or how it failed. A rewriter that skips the file with a reason is 'ok'."""
    text = source_of(shape, n)
    try:
        if parser == "ast.parse":
            import ast

            ast.parse(text)
        elif parser == "compile":
            compile(text, "<probe>", "exec", dont_inherit=True)
        elif parser == "libcst":
            import libcst

            libcst.parse_module(text)
        elif parser == "libcst front-end":  # parse, position metadata, visit: what the rewriter runs
            from migrator.edits import SourceNotParsed
            from migrator.rewrite.python import cst_front
            from migrator.tablecache import composed

            try:
                cst_front.locate_module(text.encode(), composed(None, "main", ())[0])
            except SourceNotParsed:
                pass
        elif parser == "json.loads":
            json.loads(text)
        elif parser in ("yaml CSafeLoader", "yaml SafeLoader"):
            import yaml

            yaml.load(text, Loader=getattr(yaml, parser.split()[1]))
        else:
            import migrator.rewrite.python as python_rewriter
            from migrator.fileprocess import process_file
            from migrator.tablecache import composed

            if parser.endswith("(unguarded)"):  # where the rewriter's own passes give up: the first bound lifted
                import migrator.rewrite.yaml.planner as yaml_planner

                python_rewriter.MAX_NESTING = yaml_planner.MAX_NESTING = sys.maxsize
            mappings, _ = composed(None, "main", ())
            name = "probe.py" if parser.startswith("python") else \
                "probe.ipynb" if parser.startswith("notebook") else "probe.yaml"
            result = process_file(name, name, mappings, None, data=text.encode())
            if result.status == "failed":
                return f"failed: {result.reason}"[:90]
    except Exception as exc:  # noqa: BLE001 - a probe reports whatever ended it
        return f"{type(exc).__name__}: {str(exc)[:60]}".rstrip(": ")
    return "ok"


def outcome(parser: str, shape: str, n: int, timeout: float) -> tuple[bool, str, float]:
    """(failed, how, seconds) of one probe in a fresh interpreter."""
    started = time.monotonic()
    try:
        proc = subprocess.run([sys.executable, __file__, "--probe", parser, shape, str(n)], capture_output=True,
                              text=True, timeout=timeout, cwd=ROOT)
    except subprocess.TimeoutExpired:
        return True, f"timeout ({timeout:.0f} s)", timeout
    seconds = time.monotonic() - started
    if proc.returncode < 0:
        return True, f"killed by signal {-proc.returncode}", seconds
    how = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else f"exit {proc.returncode}"
    return how != "ok", how, seconds


def smallest_failing(parser: str, shape: str, timeout: float, ceiling: int,
                     precision: int = 50) -> tuple[int | None, str, float]:
    """(N, how it failed, seconds of the largest passing probe); N is None when nothing up to `ceiling` fails."""
    good, n, passed = 0, 16, 0.0
    while True:
        failed, how, seconds = outcome(parser, shape, n, timeout)
        if failed:
            break
        good, passed = n, seconds
        if n >= ceiling:
            return None, "", passed
        n = min(n * 2, ceiling)
    bad, bad_how = n, how
    while bad - good > max(1, good // precision):
        middle = (good + bad) // 2
        failed, how, seconds = outcome(parser, shape, middle, timeout)
        if failed:
            bad, bad_how = middle, how
        else:
            good, passed = middle, seconds
    return bad, bad_how, passed


def main() -> int:
    if len(sys.argv) == 5 and sys.argv[1] == "--probe":
        sys.setrecursionlimit(sys.getrecursionlimit())  # the default, as verl-migrate runs
        print(probe(sys.argv[2], sys.argv[3], int(sys.argv[4])), flush=True)
        return 0
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--parsers", default=",".join(PARSERS))
    parser.add_argument("--shapes", default="")
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--ceiling", type=int, default=200_000)
    parser.add_argument("--precision", type=int, default=50, help="bisect until within 1/PRECISION of N")
    args = parser.parse_args()
    from migrator.rewrite.python.nesting import MAX_NESTING, MAX_NESTING_FOR_LIBCST, nesting_depth

    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT).stdout
    print(f"{time.strftime('%Y-%m-%d')}, commit {commit.strip()}, Python {sys.version.split()[0]}, "
          f"guard bounds {MAX_NESTING} (any parse) and {MAX_NESTING_FOR_LIBCST} (libcst)")
    print("| parser | shape | fails at N | how | estimate at N | largest passing probe (s) |")
    print("|---|---|---|---|---|---|")
    wanted = set(filter(None, args.shapes.split(",")))
    for name in filter(None, args.parsers.split(",")):
        for shape in PARSERS[name]:
            if wanted and shape not in wanted:
                continue
            n, how, passed = smallest_failing(name, shape, args.timeout, args.ceiling, args.precision)
            estimate = nesting_depth(source_of(shape, n).encode()) if n and shape in PYTHON_SHAPES else None
            print(f"| {name} | {shape} | {n if n else f'none up to {args.ceiling}'} | {how} | "
                  f"{estimate if estimate is not None else ''} | {passed:.2f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
