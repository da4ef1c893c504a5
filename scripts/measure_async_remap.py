"""How many overrides of verl's own fully-async and one-step-off scripts Hydra rejects after migration
(maintainer tool, not shipped).

    python scripts/measure_async_remap.py --repo GITDIR [--from v0.6.1] [--to v0.9.0]

Reads the FROM release's `recipe/fully_async_policy/**/*.sh` and `recipe/one_step_off_policy/*.sh`
(`git archive` into a temp dir), migrates them with verl-migrate (this checkout), then applies the draft's
scoped key entries of the release tables and composes each script's overrides with
hydra-core against TO's config of its entry point. Counts rejected overrides after verl-migrate alone and
after verl-migrate plus the draft.
"""

from __future__ import annotations

import argparse
import io
import os
import re
import shlex
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import check_entry_coverage as coverage  # noqa: E402
import extract_entry_config_keys as extract  # noqa: E402
from measure_entry_remap import OVERRIDE, apply_key_entry, rejected, shell_arithmetic  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ["recipe/fully_async_policy", "recipe/one_step_off_policy"]
LAUNCH = re.compile(r"-m\s+((?:recipe|verl\.experimental)\.(fully_async_policy|one_step_off_policy)\.[a-z_]+)")
DEFAULT_CONFIG = {"fully_async_policy": "fully_async_ppo_trainer", "one_step_off_policy": "one_step_off_ppo_trainer"}


def launch(text: str) -> tuple[str, str, str, list[str]] | None:
    """(module, package, config name, overrides) of the script's entry-point command, if any."""
    joined = shell_arithmetic(re.sub(r"\\\n", " ", text))
    for line in joined.splitlines():
        match = LAUNCH.search(line)
        if not match or line.lstrip().startswith("#"):
            continue
        try:
            words = shlex.split(line[match.end():], comments=True)
        except ValueError:
            words = line[match.end():].split()
        config = DEFAULT_CONFIG[match[2]]
        for index, word in enumerate(words):
            if word.startswith("--config-name"):
                config = word.partition("=")[2] or words[index + 1]
        config = config.strip("'\"").removesuffix(".yaml")
        return match[1], match[2], config, [w for w in words if OVERRIDE.match(w)]
    return None


def draft_remap(config: str, overrides: list[str], source: str, target: str) -> tuple[list[str], list[str]]:
    order = coverage.releases()
    parsed = [OVERRIDE.match(o).groups() for o in overrides]
    manual: list[str] = []
    for release in order[order.index(source) + 1 : order.index(target) + 1]:
        for entry in coverage.draft()["entries"]:
            if entry["release"] != release or entry["kind"] not in coverage.KEY_KINDS:
                continue
            if config in coverage.scope_configs(entry):
                parsed = apply_key_entry(entry, parsed, manual)
    return [f"{p}{k}={v}" for p, k, v in parsed], manual


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", required=True)
    parser.add_argument("--from", dest="source", default="v0.6.1")
    parser.add_argument("--to", default="v0.9.0")
    args = parser.parse_args()
    totals = {"scripts": 0, "overrides": 0, "tool": 0, "draft": 0}
    with tempfile.TemporaryDirectory() as tmp:
        work, configs = Path(tmp) / "scripts", Path(tmp) / "configs"
        work.mkdir()
        paths = extract.tree_paths(args.repo, args.source)
        present = [s for s in SOURCES if any(p.startswith(s + "/") for p in paths)]
        data = extract.git(args.repo, "archive", "--format=tar", args.source, *present)
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            tar.extractall(work, filter="data")
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        migrate = [sys.executable, "-m", "migrator", "migrate", "-q", "--from", args.source, "--to", args.to]
        subprocess.run([*migrate, str(work)], env=env, check=False, capture_output=True)
        extract.materialize(args.repo, args.to, extract.tree_paths(args.repo, args.to), configs)
        for script in sorted(work.rglob("*.sh")):
            found = launch(script.read_text(encoding="utf-8", errors="replace"))
            if found is None:
                continue
            module, package, config, overrides = found
            config_dir = f"verl/experimental/{package}/config"
            if not (configs / config_dir / f"{config}.yaml").is_file():
                print(f"{script.relative_to(work)}: config {config} not shipped at {args.to}")
                continue
            tool_bad = rejected(configs, config, overrides, config_dir)
            remapped, manual = draft_remap(config, overrides, args.source, args.to)
            draft_bad = rejected(configs, config, remapped, config_dir)
            totals["scripts"] += 1
            totals["overrides"] += len(overrides)
            totals["tool"] += len(tool_bad)
            totals["draft"] += len(draft_bad)
            print(f"{script.relative_to(work)}: -m {module} ({config}); {len(overrides)} overrides, rejected: "
                  f"{len(tool_bad)} after verl-migrate, {len(draft_bad)} with the draft, {len(manual)} manual")
            for line in draft_bad:
                print(f"    REJECTED {line}")
    n = totals["overrides"] or 1
    print(f"total: {totals['scripts']} scripts, {totals['overrides']} overrides; rejected after verl-migrate "
          f"{totals['tool']} ({100 * totals['tool'] / n:.1f}%), with the draft {totals['draft']} "
          f"({100 * totals['draft'] / n:.1f}%)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
