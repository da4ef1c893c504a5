"""Measure lint's start-up verdict (VM020/VM021) against verl's own, launch by launch.

For every launch lint judges in the scripts under DIR (`verl-migrate lint --to REV`'s launches), this
composes the effective config at REV and judges it with the start-up checks as data; each launch whose
inputs are literal is then run through verl's own validators at REV (scripts/prove_startup_checks.py
`--launches`, in its throwaway venv), and the two verdicts are compared per validator: the same outcome,
and for a failure verl's exception message. Model paths point at the prover's tiny local model (no
weights are loaded; verl's model configs read a config and a tokenizer).

With `--no-args` a launch that passes `"$@"` is judged as the script runs without arguments (lint
itself skips it: the caller may set any key), which measures the checks on many more real launches.

Counts: launches found; skipped for unknown inputs (`"$@"`, words the script does not show, a check input
the shell decides); not run because Hydra rejects an override (VM007's verdict: verl never starts), a mandatory
value is unset (VM008: OmegaConf stops verl at the first read) or the config does not compose; judged; of those, verl fails; agreements and disagreements (listed).

    python scripts/measure_startup_agreement.py --to v0.9.0 /work/trees/v0.9.0 [--verl CLONE] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

MODEL_KEYS = ("actor_rollout_ref.model.path", "critic.model.path", "critic.model.tokenizer_path",
              "actor_rollout_ref.model.tokenizer_path")


def launches_of(paths: list[Path], rev: str):
    """(script, launch, config dir, config name) for each launch VM007 judges, like lint does."""
    from migrator.lint.facts import load_facts
    from migrator.lint.hydra_overrides import verdicts
    from migrator.lint.script import Script
    from migrator.tablecache import composed

    facts = load_facts(None)
    mappings = composed(None, rev, ())[0]  # the tables lint composes
    for path in paths:
        for file in sorted(path.rglob("*.sh")) if path.is_dir() else [path]:
            script = Script(str(file), file.read_bytes(), facts, mappings, rev)
            for launch, config_dir, config_name in verdicts(script).composed:
                yield script, launch, config_dir, config_name


def lint_side(rev: str, paths: list[Path], no_args: bool = False):
    from migrator.lint.launch import exclusive
    from migrator.startup import UNKNOWN, config_lookup, judge, load_checks
    from migrator.startup.checks import run_as_verl
    from migrator.verdict import NEUTRAL_VALUE, PLACEHOLDER, release_configs
    from migrator.verdict import judge as hydra
    from migrator.verdict.effective import effective_config

    table, configs = load_checks(), release_configs(rev)
    counts, judged = Counter(), []
    for script, launch, config_dir, config_name in launches_of(paths, rev):
        entry = configs.entry_by_module(launch.entry) if launch.is_module else configs.entry_by_script(launch.entry)
        mine = [c for c in table.at(rev) if entry is not None and entry.module in c.entry_points
                and config_name in c.configs]
        if not mine:
            counts["no start-up checks for its entry point or config"] += 1
            continue
        counts["launches"] += 1
        if launch.unseen_args or launch.passes_all_args and not no_args:
            counts["skipped: unknown inputs (\"$@\" or unseen words)"] += 1
            continue
        texts = [o.text for o in launch.overrides]
        verdict = hydra(configs, config_dir, config_name, texts)
        if verdict.rejections:
            counts["not run: Hydra rejects an override (VM007)"] += 1
            continue
        if verdict.unset:
            counts["not run: a mandatory value is unset (VM008)"] += 1
            continue
        effective = effective_config(configs, config_dir, config_name, texts)
        if effective.failure is not None:
            counts["not run: the config does not compose"] += 1
            continue
        undecided = {o.key for o in launch.overrides if any(p.key == o.key and exclusive(p, o) for p in launch.overrides)}
        outcomes = judge(table, effective, unknown_keys=undecided)
        lookup = config_lookup(effective, undecided)
        read = {k for b in table.bindings_at(rev) for k in b.value.keys()}
        read |= {k for c in mine for e in (c.when, c.fails, *(x for _, x in c.let)) if e is not None for k in e.keys()}
        if any(o.status == "unknown" for o in outcomes) or any(lookup(k) is UNKNOWN for k in read):
            # verl reads some of these whatever the guards say (n_gpus first): a shell value would be a guess
            counts["skipped: unknown inputs (a check input the shell decides)"] += 1
            continue
        verdicts = {}
        for validator in dict.fromkeys(o.check.validator for o in outcomes):
            stop, warned = run_as_verl([o for o in outcomes if o.check.validator == validator])
            verdicts[validator] = {"outcome": "fails" if stop else "passes", "message": stop.message if stop else None,
                                   "warnings": sorted(o.message for o in warned)}
        overrides = [t.replace(PLACEHOLDER, NEUTRAL_VALUE) for t in texts if PLACEHOLDER not in t.partition("=")[0]]
        judged.append({"script": script.path, "line": script.line_col(launch.start)[0], "config_dir": config_dir,
                       "config_name": config_name, "overrides": overrides, "lint": verdicts})
    return counts, judged


def verl_side(rev: str, judged: list[dict], clone: Path, venv: Path) -> list[dict]:
    from scripts.prove_startup_checks import WORK

    model = str(WORK / "tiny-model")
    cases = []
    for item in judged:
        overrides = [o for o in item["overrides"] if o.partition("=")[0].lstrip("+") not in MODEL_KEYS]
        overrides += [f"{key}={model}" for key in MODEL_KEYS[:2]]
        cases.append({"release": rev, "config_dir": item["config_dir"], "config_name": item["config_name"],
                      "overrides": overrides})
    with tempfile.TemporaryDirectory() as tmp:
        given, got = Path(tmp) / "cases.json", Path(tmp) / "verdicts.json"
        given.write_text(json.dumps(cases))
        subprocess.run([sys.executable, str(ROOT / "scripts" / "prove_startup_checks.py"), "--verl", str(clone),
                        "--venv", str(venv), "--launches", str(given), "--out", str(got)], check=True)
        return json.loads(got.read_text())


def main(argv=None) -> int:
    from scripts.prove_startup_checks import WORK

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="+", type=Path)
    parser.add_argument("--to", required=True)
    parser.add_argument("--verl", type=Path, default=Path("/work/.mirror/verl-project+verl/repo"))
    parser.add_argument("--venv", type=Path, default=WORK / "venv")
    parser.add_argument("--json", type=Path, help="write every judged launch with both verdicts here")
    parser.add_argument("--no-args", action="store_true",
                        help='judge the scripts as run without arguments: `"$@"` passes nothing (lint itself '
                             "skips such launches: a caller may set any key)")
    args = parser.parse_args(argv)
    counts, judged = lint_side(args.to, args.paths, args.no_args)
    results = verl_side(args.to, judged, args.verl, args.venv) if judged else []
    disagreements = []
    for item, verl in zip(judged, results):
        item["verl"] = verl
        if not verl["composed"]:
            counts["not run: verl's Hydra does not compose it"] += 1
            continue
        counts["judged"] += 1
        fails = any(v["outcome"] == "fails" for v in verl["verdicts"].values())
        counts["judged: verl fails"] += fails
        same = True
        for validator, theirs in verl["verdicts"].items():
            mine = item["lint"].get(validator, {"outcome": "passes", "message": None, "warnings": []})
            if mine["outcome"] != theirs["outcome"] or (fails and mine["message"] != theirs.get("message")) \
                    or mine["warnings"] != theirs.get("warnings", []):
                same = False
        counts["judged: agree" if same else "judged: disagree"] += 1
        if not same:
            disagreements.append(item)
    for name, n in sorted(counts.items()):
        print(f"{n:5d}  {name}")
    for item in disagreements:
        print(f"DISAGREE {item['script']}:{item['line']}\n  lint: {item['lint']}\n  verl: {item['verl']['verdicts']}")
    if args.json:
        args.json.write_text(json.dumps(judged, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
