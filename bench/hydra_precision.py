"""How the migration and the lint agree with Hydra itself, on a directory of launch scripts.

    python bench/hydra_precision.py DIR --to v0.9.0 [--from REV] [--show 20]

DIR is copied to a temp dir and migrated there (`python -m migrator --to REV`, this working tree). For every
script, Hydra's verdict at REV (migrator/verdict, each launch of a verl entry point, if/case branches judged
apart as the lint does) is taken before and after the migration, and `lint --to REV` runs on the migrated copy:

(a) Hydra's rejections before and after; rejected overrides the migration wrote (their text is not in the
    original script) whose original spelling Hydra accepted; `+key=` refused because the key exists, after.
(b) recall: Hydra's rejections (after) that lint reports (same line, same key); precision: lint's key findings
    (VM003/VM004/VM007, severity error, with a key) on an override that Hydra judged and accepted.
Not a test: pytest does not collect this directory.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from migrator.lint.facts import load_facts  # noqa: E402
from migrator.lint.hydra_overrides import _judge_launch  # noqa: E402
from migrator.lint.runner import lint_source  # noqa: E402
from migrator.mapping import compose, load_builtin  # noqa: E402
from migrator.rewrite.shell.hydra_launches import ShellScript, launches  # noqa: E402
from migrator.rewrite.shell.review import APPEND_REFUSED, launch_config  # noqa: E402
from migrator.verdict import release_configs  # noqa: E402

KEY_CODES = ("VM003", "VM004", "VM007")


class _Notes(ShellScript):
    notes: list = []


def hydra(src: bytes, configs) -> tuple[dict, set]:
    """({(line, key): (override, message)} rejected, {(line, key)} judged) for one script."""
    script = _Notes(src)
    script.notes = []
    rejected, judged = {}, set()
    for launch in launches(script):
        target = launch_config(configs, launch)
        if target is None or not launch.overrides or any(o.key == "hydra.searchpath" for o in launch.overrides):
            continue
        found, failure, *_ = _judge_launch(script, configs, *target, launch.overrides)
        if failure is not None:
            continue
        for o in launch.overrides:
            judged.add((src.count(b"\n", 0, o.start) + 1, o.key))
        for o, rejection in found:
            rejected[(src.count(b"\n", 0, o.start) + 1, o.key)] = (o.written, rejection.message)
    return rejected, judged


def _renamed(mappings, key: str) -> str:
    change = mappings.key(key)
    return change.new if change is not None and change.action == "rename" else key


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("directory")
    parser.add_argument("--to", required=True)
    parser.add_argument("--from", dest="from_release")
    parser.add_argument("--show", type=int, default=15)
    args = parser.parse_args()
    configs = release_configs(args.to)
    mappings = compose(load_builtin(), None, args.to, [])
    facts = load_facts()
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "scripts"
        shutil.copytree(args.directory, copy)
        originals = {p.relative_to(copy): p.read_bytes() for p in sorted(copy.rglob("*.sh"))}
        command = [sys.executable, "-m", "migrator", "--to", args.to, "--allow-dirty", str(copy)]
        if args.from_release:
            command[3:3] = ["--from", args.from_release]
        proc = subprocess.run(command, capture_output=True, text=True, cwd=tmp, env={"PYTHONPATH": str(ROOT),
                              "PATH": "/usr/bin:/bin", "HOME": str(Path.home())})
        print(proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "(no summary)")
        count = Counter(dict.fromkeys(["scripts", "rejected before", "rejected after", "introduced by the migration",
                                       "+ refused (key exists) before", "+ refused (key exists) after",
                                       "hydra rejections", "reported by lint", "lint key findings",
                                       "lint findings Hydra accepts", "lint findings Hydra did not judge"], 0))
        shown = Counter()
        for name, before in originals.items():
            after = (copy / name).read_bytes()
            was, _ = hydra(before, configs)
            now, judged = hydra(after, configs)
            count["scripts"] += 1
            count["rejected before"] += len(was)
            count["rejected after"] += len(now)
            was_texts = {o for o, _ in was.values()}
            was_keys = {_renamed(mappings, key) for _, key in was}  # rejected before, under the new name
            before_text = before.decode("utf-8", "replace")
            count["+ refused (key exists) before"] += sum(m.startswith(APPEND_REFUSED) for _, m in was.values())
            for (line, key), (written, message) in now.items():
                if message.startswith(APPEND_REFUSED):
                    count["+ refused (key exists) after"] += 1
                if written not in before_text and written not in was_texts and key not in was_keys:
                    count["introduced by the migration"] += 1
                    if shown["introduced"] < args.show:
                        shown["introduced"] += 1
                        print(f"  introduced {name}:{line}: {written}: {message[:120]}")
            report = lint_source(after, str(name), facts, mappings, args.to)
            linted = {(f.line, f.key) for f in report.findings
                      if f.code in KEY_CODES and f.key and f.severity == "error"}
            for item in now:
                count["hydra rejections"] += 1
                if item in linted:
                    count["reported by lint"] += 1
                elif shown["missed"] < args.show:
                    shown["missed"] += 1
                    print(f"  missed {name}:{item[0]}: {now[item][0]}: {now[item][1][:100]}")
            for item in linted:
                count["lint key findings"] += 1
                if item in judged and item not in now:
                    count["lint findings Hydra accepts"] += 1
                    if shown["false"] < args.show:
                        shown["false"] += 1
                        print(f"  lint-only {name}:{item[0]}: {item[1]}")
                elif item not in judged:
                    count["lint findings Hydra did not judge"] += 1
    for name, n in count.items():
        print(f"{name}: {n}")
    if count["hydra rejections"]:
        print(f"recall: {count['reported by lint'] / count['hydra rejections']:.1%}")
    if count["lint key findings"]:
        print(f"lint findings Hydra accepts: {count['lint findings Hydra accepts'] / count['lint key findings']:.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
