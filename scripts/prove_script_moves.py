"""Write mappings/verl/facts/script-moves.yaml: whether each moved script trains what the old one trained
(maintainer tool).

    python scripts/prove_script_moves.py --repo VERL_GIT_DIR [--only OLD_PATH] [--out mappings/verl/facts/script-moves.yaml]

For every `path-move` of a script in the release tables, the old script (the previous release's version, or
for a script that lived only between two releases its last version before the move) and the new one (at the table's release, with the entry's `env:` presets and `args:`) run under bash with
stub commands that record their arguments (scripts/compare_script_runs.py). The training command each one
passes (its entry module, `--config-path`/`--config-name` and overrides) is composed with Hydra from the
shipped config trees at its release (`migrator.verdict.effective`), and the two effective configs are
compared through the composed table of that release step. A move where no key either script sets differs
is `same: true` (a default the release changed differs for every launch: default-changes.yaml); otherwise
every differing key is listed with the old script's and the new script's value. A script whose
training command cannot be recorded or composed says why (`unproven:`).
"""

from __future__ import annotations

import argparse
import os
import posixpath
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import facts_header  # noqa: E402
from compare_script_presets import git  # noqa: E402
from compare_script_runs import recorded_calls, tree  # noqa: E402

VERL = ROOT / "mappings" / "verl"
OVERRIDE = re.compile(r"^(?:\+\+|\+|~)?[A-Za-z_][\w/.@-]*=", re.S)


def recorded_call(workdir: Path, script: str, env: dict[str, str], home: Path) -> list[str]:
    """The arguments of the recorded call that runs a Python module or script with the most overrides."""
    best: list[str] = []
    for args in recorded_calls(workdir, script, env, home):
        if args and args[0] in ("python3", "python", "torchrun") and \
                sum(bool(OVERRIDE.match(a)) for a in args) > sum(bool(OVERRIDE.match(a)) for a in best):
            best = args
    return best


def launch_of(args: list[str], script: str) -> tuple[str | None, str | None, str | None, list[str]]:
    """(entry module or script, --config-path, --config-name, overrides) of a recorded call."""
    entry = config_path = config_name = None
    overrides = []
    words = iter(enumerate(args))
    for i, word in words:
        if entry is None:
            if word == "-m" and i + 1 < len(args) and args[i + 1] not in ("torch.distributed.run",):
                entry = args[i + 1]
                next(words, None)
            elif word.endswith(".py"):
                entry = posixpath.normpath(posixpath.join(posixpath.dirname(script), word)) \
                    if word.startswith(".") else word
            continue
        flag, eq, value = word.partition("=")
        if flag in ("--config-path", "-cp", "--config-name", "-cn"):
            if not eq:
                value = next(words, (0, ""))[1]
            if flag in ("--config-path", "-cp"):
                config_path = value
            else:
                config_name = value.removesuffix(".yaml")
        elif OVERRIDE.match(word):
            overrides.append(word)
    return entry, config_path, config_name, overrides


def effective(release: str, entry: str, config_path: str | None, config_name: str | None, overrides: list[str]):
    from migrator.rewrite.shell.hydra_launches import config_dir_of_launch
    from migrator.verdict import release_configs
    from migrator.verdict.effective import effective_config

    configs = release_configs(release)
    point = configs.entry_by_module(entry) if "/" not in entry and not entry.endswith(".py") \
        else configs.entry_by_script(entry)
    if point is None:
        return None, f"{entry} is no @hydra.main entry point of verl {release}"
    config_dir = point.config_path
    if config_path is not None:
        config_dir = config_dir_of_launch(configs, point, config_path)
        if config_dir is None:
            return None, f"--config-path {config_path} is not one of verl {release}'s config directories"
    result = effective_config(configs, config_dir, config_name or point.config_name, overrides)
    if result.failure:
        return None, f"does not compose at verl {release}: {result.failure}"
    return result, None


def prove(repo: str, previous: str, release: str, entry: dict, scratch: Path) -> dict:
    from migrator.tablecache import composed
    from migrator.verdict.effective import compare_through_tables, shown

    rev = facts_header.revision(release)
    row = {"release": release, "old": entry["old"], "new": entry["new"]}
    # A user's copy is the previous release's version; a script added after it and moved before the next
    # release is the version just before the move, written against the next release's configs.
    old_rev, old_release = previous, previous
    if subprocess.run(["git", f"--git-dir={repo}", "cat-file", "-e", f"{previous}:{entry['old']}"],
                      capture_output=True).returncode != 0:
        last = git(repo, "rev-list", "-1", f"{previous}..{rev}", "--", entry["old"]).strip()
        if not last:
            return {**row, "unproven": f"no commit moved it in {previous}..{release}"}
        old_rev, old_release = f"{last}^", release
        row["old-version"] = "between releases"
    old_dir, new_dir = scratch / "old", scratch / "new"
    for d in (old_dir, new_dir):
        subprocess.run(["rm", "-rf", str(d)], check=True)
        d.mkdir(parents=True)
    tree(repo, old_rev, old_dir)
    tree(repo, rev, new_dir)
    presets = {k: str(v) for k, v in (entry.get("env") or {}).items()}
    home = scratch / "home"
    old_call = recorded_call(old_dir, entry["old"], {k: v for k, v in presets.items() if k == "DEVICE"}, home)
    new_call = recorded_call(new_dir, entry["new"], presets, home) + list(entry.get("args") or ())
    if not old_call or not new_call:
        return {**row, "unproven": "no training command recorded"
                + ("" if old_call else " for the old script") + ("" if new_call else " for the new script")}
    old_launch, new_launch = launch_of(old_call, entry["old"]), launch_of(new_call, entry["new"])
    if old_launch[0] is None or new_launch[0] is None:
        return {**row, "unproven": "the recorded command runs no Python entry point"}
    before, why = effective(old_release, *old_launch)
    after, why_after = effective(release, *new_launch) if before is not None else (None, None)
    if before is None or after is None:
        return {**row, "unproven": f"old script: {why}" if before is None else f"new script: {why_after}"}
    mappings, _ = composed(old_release, release, ())
    context = mappings.context(old_launch[0], old_launch[2])

    # A default the release changed differs for every launch, moved or not (default-changes.yaml): the move is
    # judged by what the two scripts set.
    differences = [d for d in compare_through_tables(before, after, mappings, context).differences
                   if d.cause == "setting"]
    if not differences:
        return {**row, "same": True}
    return {**row, "same": False, "differences": [
        {"key": d.key, "old": shown(d.before), "new": shown(d.after)} for d in
        sorted(differences, key=lambda d: d.key)]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", required=True)
    parser.add_argument("--only", action="append", help="old path(s) to prove (the others are kept as they are)")
    parser.add_argument("--out", default=str(VERL / "facts" / "script-moves.yaml"))
    args = parser.parse_args()
    releases = yaml.safe_load((VERL / "releases.yaml").read_text())["releases"]
    out_path = Path(args.out)
    kept = [] if not args.only or not out_path.is_file() else \
        [r for r in yaml.safe_load(out_path.read_text())["moves"] if r["old"] not in args.only]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for release in releases[1:]:
            data = yaml.safe_load((VERL / f"{release}.yaml").read_text())
            previous = releases[releases.index(release) - 1]
            for entry in data["entries"]:
                if entry["kind"] != "path-move" or entry["old"].endswith("/") or not entry["new"].endswith(".sh"):
                    continue
                if args.only and entry["old"] not in args.only:
                    continue
                row = prove(args.repo, previous, release, entry, Path(tmp))
                print(f"{release}\t{entry['old']}\t{'same' if row.get('same') else row.get('unproven') or len(row['differences'])}",
                      file=sys.stderr, flush=True)
                rows.append(row)
    rows = sorted(kept + rows, key=lambda r: (releases.index(r["release"]), r["old"]))
    head = (facts_header.header(__file__, facts_header.all_releases(), facts_header.main_commit())
            + "# Each path-move of a script: does the new script (with the entry's env presets and args) train what\n"
            "# the old one trained? Both runs' training commands composed by Hydra at their releases and compared.\n")
    out_path.write_text(head + yaml.safe_dump({"moves": rows}, sort_keys=False, allow_unicode=True, width=200))


if __name__ == "__main__":
    os.umask(0o022)
    main()
