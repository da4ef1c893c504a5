"""Does the migrated run train what the original trained? For every launch of every shell script of a tree,
the effective config before (at --from, the original overrides) and after (at --to, the migrated ones) are
composed by Hydra and compared (migrator.verdict.effective); each difference must be named by a finding of
the migration at that launch, or it is unexplained.

    python bench/effective_differences.py TREE --from v0.6.1 --to v0.9.0 [--show 20] [--json OUT]

With `--from auto` each script is compared from the release the migration settled for it
(`written_for.from` of the JSON report); a script settled at the target is counted, not compared.

The tree is copied and migrated in the copy (`verl-migrate --from --to --output-format json`); nothing in
TREE is written. A launch is judged when its entry point and config are verl's at both releases and both
configs compose; launches whose command passes `"$@"` or words the script does not show are judged on
what the script shows.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def migrate(tree: Path, release_from: str, release_to: str) -> dict:
    proc = subprocess.run([sys.executable, "-m", "migrator", "--from", release_from, "--to", release_to,
                           "--output-format", "json", str(tree)], capture_output=True, text=True)
    if proc.returncode not in (0, 1, 3):
        raise SystemExit(f"verl-migrate failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return json.loads(proc.stdout)


def judged_launches(src: bytes, configs, stats: Counter | None = None):
    """The launches of verl's entry points and configs; `stats` counts every launch found and the others."""
    from migrator.rewrite.shell.hydra_launches import ShellScript, launches
    from migrator.rewrite.shell.review import launch_config

    out = []
    found = list(launches(ShellScript(src)))
    for launch in found:
        target = launch_config(configs, launch)
        if target is not None:
            out.append((launch, target))
    if stats is not None:
        stats["scripts"] += 1
        stats["scripts: no launch found"] += not found
        stats["launches found"] += len(found)
        stats["launches not judged: not verl's entry point or config at --from"] += len(found) - len(out)
    return out


def line_span(src: bytes, launch) -> tuple[int, int]:
    """The lines of the command and of every override it passes (an array's may come before it)."""
    offsets = [launch.start, *(o.start for o in launch.overrides), *(o.start + len(o.written) for o in launch.overrides)]
    return src.count(b"\n", 0, min(offsets)) + 1, src.count(b"\n", 0, max(offsets)) + 1


def compare_tree(tree: Path, release_from: str, release_to: str, report: dict):
    from migrator.rewrite.shell.effect import launch_module, same_as_read
    from migrator.tablecache import composed
    from migrator.verdict import release_configs
    from migrator.verdict.effective import compare_through_tables, effective_config, shown
    from migrator.verdict.in_use import as_read, inactive

    after_configs = release_configs(release_to)
    settled = {Path(p).relative_to(report["_copy"]): start["release"]
               for p, start in (report.get("written_for") or {}).get("from", {}).items()}
    findings: dict[str, list[dict]] = {}
    for result in report["files"]:
        findings.setdefault(Path(result["path"]).as_posix(), []).extend(result.get("findings") or [])
    stats = Counter()
    unexplained = []
    for path in sorted(tree.rglob("*.sh")):
        rel = path.relative_to(tree)
        start = settled.get(rel) if release_from == "auto" else release_from
        if start is None:
            stats["scripts: --from auto settles no release"] += 1
            continue
        if start == release_to:
            stats["scripts: --from auto settles at --to (nothing to compare)"] += 1
            continue
        mappings, _ = composed(start, release_to, ())
        before_configs = release_configs(start)
        before_src = path.read_bytes()
        after_path = Path(report["_copy"]) / rel
        after_src = after_path.read_bytes() if after_path.is_file() else before_src
        old = judged_launches(before_src, before_configs, stats)
        new = judged_launches(after_src, after_configs)
        if not old:
            continue
        if len(old) != len(new):
            stats["launches not paired"] += len(old)
            continue
        here = findings.get((Path(report["_copy"]) / rel).as_posix(), []) + findings.get(str(rel), [])
        for (launch_a, (dir_a, name_a)), (launch_b, (dir_b, name_b)) in zip(old, new):
            a = effective_config(before_configs, dir_a, name_a, [o.text for o in launch_a.overrides])
            b = effective_config(after_configs, dir_b, name_b, [o.text for o in launch_b.overrides])
            a, b = as_read(a, launch_module(launch_a)), as_read(b, launch_module(launch_b))
            if a.failure or b.failure:
                stats["launches not composed"] += 1
                continue
            stats["launches judged"] += 1
            context = mappings.context(launch_a.entry if launch_a.is_module else None, name_a)

            # A component the run does not start trains nothing, and a null verl fills from another key is
            # that key's value (mappings/verl/effective-config.yaml): not differences of the run.
            differences = [d for d in compare_through_tables(a, b, mappings, context, inactive).differences
                           if not same_as_read(d, a, b, launch_module(launch_a))]
            if not differences:
                continue
            stats["launches with differences"] += 1
            first, last = line_span(before_src, launch_a)
            near = [f for f in here if first - 1 <= f["line"] <= last + 1]
            first = before_src.count(b"\n", 0, launch_a.start) + 1  # where the launch is named
            for d in differences:
                stats[f"differences ({d.cause})"] += 1
                named = any(d.key in f["message"] or d.source_key in f["message"] or d.key in (f.get("hint") or "")
                            for f in near)
                if named:
                    stats[f"explained ({d.cause})"] += 1
                else:
                    stats[f"unexplained ({d.cause})"] += 1
                    unexplained.append((str(rel), first, d.key, shown(d.before), shown(d.after), d.cause))
    return stats, unexplained


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tree", type=Path)
    parser.add_argument("--from", dest="release_from", required=True)
    parser.add_argument("--to", dest="release_to", required=True)
    parser.add_argument("--show", type=int, default=20, help="unexplained differences to print")
    parser.add_argument("--json", type=Path, help="write the counts and every unexplained difference here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / args.tree.name
        shutil.copytree(args.tree, copy, symlinks=True)
        report = migrate(copy, args.release_from, args.release_to)
        report["_copy"] = str(copy)
        for result in report["files"]:
            path = Path(result["path"])
            if path.is_absolute() or str(path).startswith(str(copy)):
                continue
            result["path"] = str(copy / Path(result["path"]).relative_to(args.tree.name)) \
                if Path(result["path"]).parts[:1] == (args.tree.name,) else result["path"]
        stats, unexplained = compare_tree(args.tree, args.release_from, args.release_to, report)
    print(f"{args.tree} {args.release_from} -> {args.release_to}")
    for name in sorted(stats):
        print(f"  {name}: {stats[name]}")
    for row in unexplained[:args.show]:
        print("  unexplained: {}:{} {} {} -> {} ({})".format(*row))
    if args.json:
        args.json.write_text(json.dumps({"counts": dict(stats), "unexplained": unexplained}, indent=1))


if __name__ == "__main__":
    main()
