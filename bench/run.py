"""Benchmark verl-migrate against grep, sed and libcst's codemod runner on a generated monorepo tree.

    python bench/run.py                      # 20,000 files, 5 alternating runs of each pair
    python bench/run.py --files 5000 --runs 7 --parts a,d
    python bench/run.py --scaling 5000,20000,80000
    python bench/run.py --parts f,g,h --verl-tree /tmp/verl-v0.7.1   # launchers, verl's own tree, file size

Every comparison alternates A B A B ... and reports medians and the median of the per-pair ratios A/B, so
a machine whose speed drifts during the run still gives a fair ratio. Rewrite runs each work on a fresh
copy of the tree (the copy is not timed). Peak RSS is the sum over the whole process tree (parent and
workers), sampled from /proc, and the largest single process from getrusage(RUSAGE_CHILDREN).
Not a test: pytest does not collect this directory.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from tree import generate, plan_from  # noqa: E402

# Runs one command in a fresh parent and reports its wall time, exit code, the largest single process
# (RUSAGE_CHILDREN covers every waited-for descendant) and, when asked, the sampled RSS sum of the tree.
WRAPPER = r"""
import json, os, resource, subprocess, sys, threading, time
sample = sys.argv[1] == "1"
cmd = sys.argv[2:]
peak = [0]
def tree_rss(root):
    children = {}
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/stat") as fh:
                    ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(pid))
    total, stack = 0, [root]
    while stack:
        pid = stack.pop()
        try:
            with open(f"/proc/{pid}/statm") as fh:
                total += int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, IndexError, ValueError):
            pass
        stack.extend(children.get(pid, ()))
    return total
start = time.perf_counter()
proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
if sample:
    def watch():
        while proc.poll() is None:
            peak[0] = max(peak[0], tree_rss(proc.pid))
            time.sleep(0.01)
    t = threading.Thread(target=watch, daemon=True)
    t.start()
rc = proc.wait()
wall = time.perf_counter() - start
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "rc": rc, "maxrss_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
                  "tree_mb": peak[0] / 2**20}))
"""


def measure(cmd: list[str], sample_rss: bool = False, cwd: str | None = None) -> dict:
    out = subprocess.run([sys.executable, "-c", WRAPPER, "1" if sample_rss else "0", *cmd],
                         capture_output=True, text=True, check=True, env=BENCH_ENV, cwd=cwd)
    return json.loads(out.stdout)


# The deep passes' baseline: read every file of the tree and parse each Python file once with `ast`.
PARSE_ALL = r"""
import ast, os, sys, warnings
warnings.simplefilter("ignore")
for top, dirs, files in os.walk(sys.argv[1]):
    for name in files:
        path = os.path.join(top, name)
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError:
            continue
        if name.endswith(".py"):
            try:
                ast.parse(data)
            except (SyntaxError, ValueError):
                pass
"""


# The tool's caches (composed tables, Hydra's verdicts) live under the work dir, filled by the warm-up run:
# other runs on the machine sharing ~/.cache would evict entries or grow the tables between the runs.
BENCH_ENV = dict(os.environ)


def verl_migrate() -> list[str]:
    exe = shutil.which("verl-migrate", path=str(Path(sys.executable).parent)) or shutil.which("verl-migrate")
    return [exe] if exe else [sys.executable, "-m", "migrator"]


def compose_tables(from_release: str):
    from migrator.mapping import compose, load_builtin

    return compose(load_builtin(), from_release, None)


def ensure_tree(work: Path, files: int, seed: int, mappings, shape: str = "monorepo") -> tuple[Path, dict]:
    root = work / (f"tree-{files}-{seed}" if shape == "monorepo" else f"tree-{shape}-{files}-{seed}")
    marker = root / ".bench-counts.json"
    if marker.is_file():
        return root, json.loads(marker.read_text())
    shutil.rmtree(root, ignore_errors=True)
    counts = generate(str(root), files, mappings, seed, shape)
    marker.write_text(json.dumps(counts))
    return root, counts


def sed_script(mappings) -> str:
    """The renames as a user would write them for sed: longest first, literal text, no word boundaries."""
    def esc(text: str) -> str:
        return text.replace("\\", "\\\\").replace(".", "\\.").replace("|", "\\|").replace("*", "\\*") \
            .replace("[", "\\[").replace("^", "\\^").replace("$", "\\$")

    lines = []
    for key in sorted(mappings.old_keys(), key=len, reverse=True):
        change = mappings.key(key)
        if change is None or change.action == "warn":
            continue
        lines.append(f"/{esc(key)}=/d" if change.new is None else f"s|{esc(key)}|{change.new}|g")
    for path in sorted(mappings.old_paths(), key=len, reverse=True):
        change = mappings.path(path)
        if change is not None and change.new:
            lines.append(f"s|{esc(path)}|{change.new}|g")
    for module in sorted(mappings.old_modules(), key=len, reverse=True):
        change = mappings.module(module)
        if change is not None and change.new:
            lines.append(f"s|{esc(module)}|{change.new}|g")
    for rule in (*mappings.env_rules, *mappings.var_rules):
        if rule.new:
            lines.append(f"s|{esc(rule.old)}|{rule.new}|g")
        else:
            value = f"={esc(rule.value)}" if rule.value else "="
            lines.append(f"/{esc(rule.old)}{value}/d")
    return "\n".join(lines) + "\n"


def codemod_renames(mappings) -> dict:
    plan = plan_from(mappings)
    strings = {k: mappings.key(k).new for k in plan.keys_renamed}
    strings.update({p: mappings.path(p).new for p in plan.paths_moved})
    return {"modules": {m: mappings.module(m).new for m in plan.modules_moved}, "strings": strings}


def alternate(runs: int, a, b) -> tuple[list[dict], list[dict]]:
    """Run a() and b() in turn `runs` times (after one warm-up of each); each returns a measurement."""
    a(), b()
    ra, rb = [], []
    for _ in range(runs):
        ra.append(a())
        rb.append(b())
    return ra, rb


def row(label: str, ra: list[dict], rb: list[dict], target: str, metric: str = "wall") -> dict:
    """`metric`: wall seconds, or cpu (user+sys of the command and its workers: other work on the machine
    moves it less)."""
    ratios = [x[metric] / y[metric] for x, y in zip(ra, rb)]
    return {"label": label, "metric": metric, "a": statistics.median(r[metric] for r in ra),
            "b": statistics.median(r[metric] for r in rb), "ratio": statistics.median(ratios),
            "ratio_min": min(ratios), "ratio_max": max(ratios), "target": target,
            "rc": sorted({r["rc"] for r in ra}), "rc_b": sorted({r["rc"] for r in rb})}


def fresh_copy(src: Path, work: Path, name: str, hardlinks: bool = True) -> Path:
    """A fresh copy of the tree. Hard links are enough for tools that replace files by renaming a new
    one over them (verl-migrate, sed -i); tools that write in place (libcst) need real copies."""
    dst = work / name
    shutil.rmtree(dst, ignore_errors=True)
    subprocess.run(["cp", "-al" if hardlinks else "-a", str(src), str(dst)], check=True)
    return dst


def count_sed_damage(tree: Path, ours: Path, sed: Path) -> dict:
    """Scripts (the kind verl-migrate rewrites here) where sed's result differs from verl-migrate's."""
    differ = broken = 0
    examples = []
    for path in sorted(tree.rglob("*.sh")):
        rel = path.relative_to(tree)
        a, b = (ours / rel).read_bytes(), (sed / rel).read_bytes()
        if a == b:
            continue
        differ += 1
        if subprocess.run(["bash", "-n", str(sed / rel)], capture_output=True).returncode != 0:
            broken += 1
        if len(examples) < 3:
            examples.append(str(rel))
    return {"differ": differ, "bash_n_fails": broken, "examples": examples}


def file_size_cost(mappings, runs: int) -> dict:
    """CPU seconds of one Python launcher's migration (`process_file`, in this process) at ~1,000 and
    ~5,000 lines, median of `runs` after a warm-up: the cost of a file should grow with it, no faster."""
    import gc
    import random
    import time

    from tree import _python_launcher

    from migrator.engine import RUN_GC_THRESHOLD
    from migrator.fileprocess import process_file

    plan = plan_from(mappings)

    def launcher(lines: int) -> bytes:
        rng, parts = random.Random(lines), []
        while sum(p.count(b"\n") for p in parts) < lines:
            parts.append(_python_launcher(rng, plan, old=len(parts) % 2 == 0))
        return b"\n\n".join(parts)

    def once(data: bytes) -> float:
        start = time.process_time()
        process_file("launch.py", "launch.py", mappings, data=data)
        return time.process_time() - start

    small, large = launcher(1000), launcher(5000)
    # As in a run (engine._run): the tables frozen, the young generation collected every RUN_GC_THRESHOLD
    # allocations; the two sizes alternate, and the ratio is the median of the pairs' ratios.
    thresholds = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(RUN_GC_THRESHOLD, *thresholds[1:])
    try:
        once(small), once(large)
        pairs = [(once(small), once(large)) for _ in range(max(runs, 5))]
    finally:
        gc.set_threshold(*thresholds)
        gc.unfreeze()
    a, b = statistics.median(p[0] for p in pairs), statistics.median(p[1] for p in pairs)
    return {"small_lines": small.count(b"\n"), "large_lines": large.count(b"\n"), "small": a, "large": b,
            "ratio": statistics.median(y / x for x, y in pairs)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=20000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--from", dest="from_release", default="v0.1",
                        help="the release the generated files are written for (default v0.1: every table)")
    parser.add_argument("--jobs", type=int, default=None, help="-j for verl-migrate and libcst (default: CPUs)")
    parser.add_argument("--parts", default="a,b,c,d,e",
                        help="a-e as above; f: --check vs grep on the launcher-heavy tree; g: --check and lint "
                             "--to main on --verl-tree vs parsing its Python files; h: a 1,000- vs a 5,000-line "
                             "launcher")
    parser.add_argument("--verl-tree", default=None,
                        help="verl's examples, recipe and verl of one release (part g), e.g. from "
                             "git archive v0.7.1 examples recipe verl")
    parser.add_argument("--scaling", default="", help="comma-separated file counts: --check wall time at each")
    parser.add_argument("--workdir", default=None, help="where trees are generated (default: a temp dir)")
    parser.add_argument("--json", dest="json_out", default=None, help="also write the results as JSON here")
    args = parser.parse_args()

    work = Path(args.workdir or tempfile.mkdtemp(prefix="verl-migrate-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    BENCH_ENV["XDG_CACHE_HOME"] = str(work / "cache")
    BENCH_ENV.pop("VERL_MIGRATE_CACHE_DIR", None)
    # Time the tool as `pip install` leaves it: byte-compiled. An editable install under
    # PYTHONDONTWRITEBYTECODE=1 would otherwise compile the package from source on every run (~20 ms).
    import compileall

    import migrator

    compileall.compile_dir(str(Path(migrator.__file__).parent), quiet=1)
    mappings = compose_tables(args.from_release)
    jobs = args.jobs or len(os.sched_getaffinity(0))
    vm = verl_migrate()
    common = ["--from", args.from_release, "-q", "-j", str(jobs)]
    # A user's plain `--check`: the same tables when --from is the default (the oldest release), but with the
    # files' release not named no launch is compared before and after (no value defaults, no run differences).
    from migrator.config import known_releases

    plain = ["-q", "-j", str(jobs)] if known_releases()[:1] == [args.from_release] else None
    tokens = work / "tokens.txt"
    tokens.write_text("\n".join(sorted(mappings.old_tokens())) + "\n")
    script = work / "renames.sed"
    script.write_text(sed_script(mappings))
    renames = work / "renames.json"
    renames.write_text(json.dumps(codemod_renames(mappings)))
    parts = set(args.parts.split(",")) if args.parts else set()
    rows, extra = [], {}

    tree, counts = ensure_tree(work, args.files, args.seed, mappings) if parts & set("abce") else (None, {})
    if tree is not None:
        print(f"tree: {tree} {counts}; {len(mappings.old_tokens())} old tokens; -j {jobs}", flush=True)

    if "a" in parts:
        ra, rb = alternate(args.runs, lambda: measure([*vm, "--check", *common, str(tree)]),
                           lambda: measure(["grep", "-rlF", "-f", str(tokens), str(tree)]))
        rows.append(row("(a) --check vs grep -rlF -f tokens", ra, rb, "<= 3x"))
        if plain is not None:
            ra, rb = alternate(args.runs, lambda: measure([*vm, "--check", *plain, str(tree)]),
                               lambda: measure(["grep", "-rlF", "-f", str(tokens), str(tree)]))
            rows.append(row("(a) --check, release not named, vs grep", ra, rb, ""))

    if "b" in parts:
        sed_cmd = f"grep -rlFZ -f {tokens} . | xargs -0 -r sed -i -f {script}"

        def ours():
            copy = fresh_copy(tree, work, "copy-ours")
            return measure([*vm, *common, "--allow-dirty", str(copy)])

        def sed():
            copy = fresh_copy(tree, work, "copy-sed")
            return measure(["sh", "-c", f"cd {copy} && {sed_cmd}"])

        ra, rb = alternate(args.runs, ours, sed)
        rows.append(row("(b) rewrite vs grep | xargs sed -i", ra, rb, "<= 2x"))
        extra["sed_damage"] = count_sed_damage(tree, work / "copy-ours", work / "copy-sed")

    if "c" in parts:
        env_cmd = ["env", f"BENCH_RENAMES={renames}", f"PYTHONPATH={HERE}"]

        def ours():
            copy = fresh_copy(tree, work, "copy-ours")
            return measure([*vm, *common, "--allow-dirty", str(copy)])

        def libcst():
            copy = fresh_copy(tree, work, "copy-libcst", hardlinks=False)
            # The command must come first: libcst.tool takes the first positional word as the codemod.
            return measure([*env_cmd, sys.executable, "-m", "libcst.tool", "codemod", "-x",
                            "libcst_rename.RenameCodemod", "-j", str(jobs), "--no-format", "--hide-progress",
                            str(copy)])

        ra, rb = alternate(args.runs, ours, libcst)
        rows.append(row("(c) rewrite vs libcst codemod runner", ra, rb, "<= 0.1x"))

    if "d" in parts:
        runs = max(args.runs, 10)
        ra, rb = alternate(runs, lambda: measure([*vm, "--version"]),
                           lambda: measure([sys.executable, "-c", "import click"]))
        rows.append(row("(d) --version vs python -c 'import click'", ra, rb, "<= 1.5x"))

    if "e" in parts:
        check = [measure([*vm, "--check", *common, str(tree)], sample_rss=True) for _ in range(3)]
        rewrite = []
        for _ in range(3):
            copy = fresh_copy(tree, work, "copy-ours")
            rewrite.append(measure([*vm, *common, "--allow-dirty", str(copy)], sample_rss=True))
        extra["rss"] = {name: {"tree_mb": statistics.median(r["tree_mb"] for r in rs),
                               "largest_process_mb": statistics.median(r["maxrss_mb"] for r in rs)}
                        for name, rs in (("check", check), ("rewrite", rewrite))}

    if "f" in parts:
        launchers, launcher_counts = ensure_tree(work, args.files, args.seed, mappings, "launchers")
        extra["launcher_counts"] = launcher_counts
        print(f"launcher tree: {launchers} {launcher_counts}", flush=True)
        ra, rb = alternate(args.runs, lambda: measure([*vm, "--check", *common, str(launchers)]),
                           lambda: measure(["grep", "-rlF", "-f", str(tokens), str(launchers)]))
        rows.append(row("(f) launchers: --check vs grep (wall)", ra, rb, "<= 3x"))
        rows.append(row("(f) launchers: --check vs grep (CPU)", ra, rb, "", "cpu"))
        if plain is not None:
            ra, rb = alternate(args.runs, lambda: measure([*vm, "--check", *plain, str(launchers)]),
                               lambda: measure(["grep", "-rlF", "-f", str(tokens), str(launchers)]))
            rows.append(row("(f) launchers: --check, release not named (wall)", ra, rb, ""))
            rows.append(row("(f) launchers: --check, release not named (CPU)", ra, rb, "", "cpu"))

    if "g" in parts:
        if not args.verl_tree:
            parser.error("part g needs --verl-tree DIR")
        verl_tree = str(Path(args.verl_tree).resolve())
        parse_all = [sys.executable, "-c", PARSE_ALL, verl_tree]
        for label, cmd in (("--check --to main", [*vm, "--check", "--to", "main", "-q", "-j", str(jobs), "."]),
                           ("lint --to main", [*vm, "lint", "--to", "main", "-j", str(jobs), "."])):
            ra, rb = alternate(args.runs, lambda cmd=cmd: measure(cmd, cwd=verl_tree), lambda: measure(parse_all))
            rows.append(row(f"(g) verl tree: {label} vs ast.parse (CPU)", ra, rb, "<= 2x", "cpu"))

    if "h" in parts:
        extra["file_size"] = file_size_cost(mappings, args.runs)

    scaling = []
    for n in [int(x) for x in args.scaling.split(",") if x]:
        scaled, _ = ensure_tree(work, n, args.seed, mappings)
        ra, rb = alternate(args.runs, lambda scaled=scaled: measure([*vm, "--check", *common, str(scaled)]),
                           lambda scaled=scaled: measure(["grep", "-rlF", "-f", str(tokens), str(scaled)]))
        scaling.append({"files": n, "ours": statistics.median(r["wall"] for r in ra),
                        "grep": statistics.median(r["wall"] for r in rb)})

    print()
    print(f"{'comparison':56s} {'A median s':>10s} {'B median s':>10s} {'A/B':>7s} {'(min-max)':>13s}  target")
    for r in rows:
        print(f"{r['label']:56s} {r['a']:10.3f} {r['b']:10.3f} {r['ratio']:7.2f} "
              f"({r['ratio_min']:.2f}-{r['ratio_max']:.2f})  {r['target']}   exit codes A {r['rc']} B {r['rc_b']}")
    if "sed_damage" in extra:
        d = extra["sed_damage"]
        print(f"sed: {d['differ']} scripts differ from verl-migrate's result, {d['bash_n_fails']} no longer pass "
              f"`bash -n` (e.g. {', '.join(d['examples'])})")
    if "rss" in extra:
        for name, r in extra["rss"].items():
            print(f"peak RSS {name}: whole process tree {r['tree_mb']:.0f} MB, largest process "
                  f"{r['largest_process_mb']:.0f} MB")
    if "file_size" in extra:
        f = extra["file_size"]
        print(f"one launcher: {f['small_lines']} lines {f['small']:.4f} CPU-s, {f['large_lines']} lines "
              f"{f['large']:.4f} CPU-s: {f['ratio']:.2f}x for {f['large_lines'] / f['small_lines']:.1f}x the lines "
              "(target <= 5x)")
    for s in scaling:
        print(f"scaling: {s['files']:6d} files  --check {s['ours']:.3f} s ({s['ours'] / s['files'] * 1e6:.1f} us/file)"
              f"  grep {s['grep']:.3f} s")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps({"rows": rows, "extra": extra, "scaling": scaling,
                                                   "counts": counts, "jobs": jobs}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
