"""How well the draft entry-point table moves verl's own SFT and generation scripts to a release
(maintainer tool, not shipped).

    python scripts/measure_entry_remap.py --repo GITDIR [--from v0.4.1 v0.6.1] [--to v0.9.0]

For each `examples/sft/**/*.sh` and `examples/generation/*.sh` of the FROM releases (read with
`git archive`, never copied into this repository) it finds the entry module the script runs and its
Hydra overrides, remaps them with the release tables' entry-point entries ( scoped key
entries, the entry-point move and its pinned defaults) and the built-in tables' key renames of the later
releases, then composes every remapped override against TO's config with hydra-core and counts the ones
Hydra rejects.
"""

from __future__ import annotations

import argparse
import io
import re
import shlex
import sys
import tarfile
import tempfile
from pathlib import Path

from hydra.errors import HydraException
from omegaconf.errors import OmegaConfBaseException

sys.path.insert(0, str(Path(__file__).resolve().parent))
import check_entry_coverage as coverage  # noqa: E402
import extract_entry_config_keys as extract  # noqa: E402

OVERRIDE = re.compile(r"^([+~]{0,2})([A-Za-z_][A-Za-z0-9_.@-]*)=(.*)$", re.S)
CONFIG_OF = {"verl.trainer.fsdp_sft_trainer": "sft_trainer", "verl.trainer.main_generation": "generation"}


def scripts(repo: str, rev: str) -> dict[str, str]:
    data = extract.git(repo, "archive", "--format=tar", rev, "examples/sft", "examples/generation")
    out = {}
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        for member in tar.getmembers():
            if member.isfile() and member.name.endswith(".sh"):
                out[member.name] = tar.extractfile(member).read().decode("utf-8", "replace")
    return out


def shell_arithmetic(text: str) -> str:
    """`$((a + b))` as one word, so that splitting on blanks keeps the override whole."""
    return re.sub(r"[$][(][(][^)]*[)][)]", "X", text)


def launch(text: str) -> tuple[str | None, list[str]]:
    """The verl module a script runs and the Hydra overrides after it."""
    joined = shell_arithmetic(re.sub(r"\\\n", " ", text))
    for line in joined.splitlines():
        match = re.search(r"(?:-m\s+)(verl\.trainer\.[a-z_]+)|verl/trainer/([a-z_]+)\.py", line)
        if not match:
            continue
        module = match[1] or f"verl.trainer.{match[2]}"
        try:
            words = shlex.split(line[match.end():], comments=True)
        except ValueError:
            words = line[match.end():].split()
        return module, [w for w in words if OVERRIDE.match(w)]
    return None, []


def draft_entries(release_range: list[str]) -> list[dict]:
    return [e for e in coverage.draft()["entries"] if e["release"] in release_range]


def rename(key: str, old: str, new: str) -> str | None:
    if old.endswith(".*"):
        stem, target = old[:-2], new[:-2]
        if key == stem or key.startswith(stem + "."):
            return target + key[len(stem):]
        return None
    return new if key == old else None


def remap(module: str, overrides: list[str], source: str, target: str) -> tuple[str, list[str], list[str]]:
    """The module, the remapped overrides and the manual steps, going from `source` to `target`."""
    order = coverage.releases()
    later = order[order.index(source) + 1 : order.index(target) + 1]
    config = CONFIG_OF.get(module)
    parsed = [OVERRIDE.match(o).groups() for o in overrides]
    manual: list[str] = []
    for release in later:
        for entry in draft_entries([release]):
            if entry["kind"] in coverage.KEY_KINDS and config in coverage.scope_configs(entry):
                parsed = apply_key_entry(entry, parsed, manual)
            if entry["kind"] == "entry-point-move" and entry["old"] == module:
                parsed = apply_move(entry, parsed, manual)
                module, config = entry["new"], entry["new-config"]
        if config in coverage.draft()["families"]["ppo"]:
            for entry in coverage.table_key_entries(release):
                parsed = apply_key_entry(entry, parsed, manual)
    return module, [f"{p}{k}={v}" for p, k, v in parsed], manual


def apply_key_entry(entry: dict, parsed, manual):
    out = []
    for prefix, key, value in parsed:
        new = rename(key, entry["old"], entry["new"]) if entry["kind"] == "key-rename" else None
        if new:
            values = {str(k).lower(): str(v) for k, v in (entry.get("values") or {}).items()}
            out.append((prefix, new, values.get(value.lower(), value)))
        elif entry["kind"] == "key-removal" and coverage.matches(entry["old"], key):
            if entry["action"] == "warn":
                manual.append(f"{key}: {entry['hint']}")
                out.append((prefix, key, value))
        else:
            out.append((prefix, key, value))
    return out


def apply_move(entry: dict, parsed, manual):
    out = []
    for prefix, key, value in parsed:
        item = next((i for i in entry["keys"] if coverage.matches(i["old"], key)), None)
        if item is None:
            out.append((prefix, key, value))  # a `+` key the config never had: left as the user wrote it
        elif item.get("new"):
            new = rename(key, item["old"], item["new"]) if item["old"].endswith(".*") else item["new"]
            out.append(("+" if item.get("add") else prefix.replace("+", ""), new, value))
        elif item.get("action") == "warn":
            manual.append(f"{key}: {item['hint']}")
    for pin in entry.get("defaults") or []:
        if pin.get("pin", True) and pin["key"] not in {k for _, k, _ in out} and pin.get("old") is not None:
            value = str(pin["old"]).lower() if isinstance(pin["old"], bool) else str(pin["old"])
            out.append(("+" if pin.get("new") == "absent" else "", pin["key"], value))
    return out


def placeholder(override: str) -> str:
    """The override with shell variables replaced: Hydra judges the key, not the value."""
    key, _, value = override.partition("=")
    return f"{key}={re.sub(r'[$][{]?[A-Za-z_][A-Za-z0-9_]*[}]?', 'X', value)}"


def rejected(root: Path, config: str, overrides: list[str], config_dir: str = extract.TRAINER_CONFIG) -> list[str]:
    """The overrides Hydra rejects when composing `config`, found by halving the list while it fails."""

    def fails(chunk: list[str]) -> str | None:
        try:
            extract.compose_config(root, config_dir, config, [placeholder(o) for o in chunk])
            return None
        except (HydraException, OmegaConfBaseException) as error:
            return type(error).__name__

    def search(chunk: list[str]) -> list[str]:
        error = fails(chunk)
        if error is None:
            return []
        if len(chunk) == 1:
            return [f"{chunk[0]}  ({error})"]
        middle = len(chunk) // 2
        found = search(chunk[:middle]) + search(chunk[middle:])
        return found or [f"(only together: {' '.join(chunk)})"]

    return search(overrides) if overrides else []


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", required=True)
    parser.add_argument("--from", dest="sources", nargs="+", default=["v0.4.1", "v0.6.1"])
    parser.add_argument("--to", default="v0.9.0")
    args = parser.parse_args()
    totals = {"scripts": 0, "overrides": 0, "rejected": 0, "manual": 0}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        extract.materialize(args.repo, args.to, extract.tree_paths(args.repo, args.to), root)
        for source in args.sources:
            for path, text in sorted(scripts(args.repo, source).items()):
                module, overrides = launch(text)
                if module is None:
                    print(f"{source} {path}: no verl entry point")
                    continue
                new_module, remapped, manual = remap(module, overrides, source, args.to)
                config = "sft_trainer_engine" if new_module.startswith("verl.trainer.sft_trainer") else "ppo_trainer"
                bad = rejected(root, config, remapped)
                totals["scripts"] += 1
                totals["overrides"] += len(remapped)
                totals["rejected"] += len(bad)
                totals["manual"] += len(manual)
                print(f"{source} {path}: {module} -> {new_module}; {len(overrides)} overrides -> {len(remapped)}, "
                      f"{len(bad)} rejected, {len(manual)} manual")
                for line in bad:
                    print(f"    REJECTED {line}")
                for line in manual:
                    print(f"    MANUAL   {line}")
    share = 100.0 * totals["rejected"] / totals["overrides"] if totals["overrides"] else 0.0
    print(f"total: {totals['scripts']} scripts, {totals['overrides']} remapped overrides, "
          f"{totals['rejected']} rejected by Hydra ({share:.1f}%), {totals['manual']} manual steps")
    return 0


if __name__ == "__main__":
    sys.exit(main())
