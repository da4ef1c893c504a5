"""Config keys of verl's entry points other than main_ppo, and the entry points themselves, per release
(maintainer tool, not shipped).

    python scripts/extract_entry_config_keys.py --repo GITDIR [--recipe-repo GITDIR] [--out mappings/verl/facts]

For every release in mappings/verl/releases.yaml (`main`: the commit that file names) it materializes the
release's config directories (`git archive REV DIRS | tar -x`), composes each config below with
hydra-core exactly as the entry point's `@hydra.main` would, and flattens the composed tree (unresolved)
to `dotted.key<TAB>type` lines in `entry-config-keys/<release>.<config>.keys`, the format of
`config-keys/`. It also writes `entry-points.yaml`: every module with `@hydra.main` (tests excluded),
its config name and config directory.
"""

from __future__ import annotations

import argparse
import io
import os
import re
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import yaml
from facts_header import all_releases, commit_of, header, main_commit, revision
from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from omegaconf import OmegaConf

TRAINER_CONFIG = "verl/trainer/config"

# name written to the facts -> (config name, candidate config directories, subtree or None).
# The first candidate directory holding `<config name>.yaml` at a release wins.
CONFIGS = {
    "sft_trainer": ("sft_trainer", [TRAINER_CONFIG], None),
    "sft_trainer_engine": ("sft_trainer_engine", [TRAINER_CONFIG], None),
    "generation": ("generation", [TRAINER_CONFIG], None),
    "evaluation": ("evaluation", [TRAINER_CONFIG], None),
    "legacy_reward_impl": ("legacy_reward_impl", [TRAINER_CONFIG], None),
    "fully_async_ppo_trainer": (
        "fully_async_ppo_trainer",
        ["verl/experimental/fully_async_policy/config", "recipe/fully_async_policy/config"],
        None,
    ),
    "fully_async_ppo_megatron_trainer": (
        "fully_async_ppo_megatron_trainer",
        ["verl/experimental/fully_async_policy/config", "recipe/fully_async_policy/config"],
        None,
    ),
    "one_step_off_ppo_trainer": (
        "one_step_off_ppo_trainer",
        ["verl/experimental/one_step_off_policy/config", "recipe/one_step_off_policy/config"],
        None,
    ),
    "one_step_off_ppo_megatron_trainer": (
        "one_step_off_ppo_megatron_trainer",
        ["verl/experimental/one_step_off_policy/config", "recipe/one_step_off_policy/config"],
        None,
    ),
    # Config groups main_ppo composes under one node: the node as ppo_trainer composes it.
    "reward": ("ppo_trainer", [TRAINER_CONFIG], "reward"),
    "reward_manager": ("ppo_trainer", [TRAINER_CONFIG], "reward_manager"),
    "distillation": ("ppo_trainer", [TRAINER_CONFIG], "distillation"),
}
# The group file a subtree comes from: no file at a release means no facts for it there.
SUBTREE_SOURCES = {
    "reward": "verl/trainer/config/reward/reward.yaml",
    "reward_manager": "verl/trainer/config/reward_manager.yaml",
    "distillation": "verl/trainer/config/distillation/distillation.yaml",
}
ARCHIVED_DIRS = [TRAINER_CONFIG] + sorted({d for _, dirs, _ in CONFIGS.values() for d in dirs} - {TRAINER_CONFIG})

HYDRA_MAIN = re.compile(r"""@hydra\.main\((?P<args>.*)\)""")
HYDRA_ARG = re.compile(r"""(config_path|config_name)\s*=\s*["']([^"']*)["']""")
# Lines of context read before `-m MODULE` to find the start of its backslash-continued command.
LAUNCHER_CONTEXT = 40


def git(repo: str, *args: str) -> bytes:
    return subprocess.run(["git", "--git-dir", repo, *args], check=True, capture_output=True).stdout


def tree_paths(repo: str, rev: str) -> set[str]:
    return set(git(repo, "ls-tree", "-r", "--name-only", rev).decode().splitlines())


def materialize(repo: str, rev: str, paths: set[str], dest: Path) -> None:
    present = [d for d in ARCHIVED_DIRS if any(p.startswith(d + "/") for p in paths)]
    data = git(repo, "archive", "--format=tar", rev, *present)
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(dest, filter="data")


def yaml_type(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "str"
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        return "dict"
    raise TypeError(f"unexpected config value {value!r}")


def flatten(node, prefix: str, out: dict[str, str]) -> None:
    if isinstance(node, dict) and node:
        for key, value in node.items():
            flatten(value, f"{prefix}.{key}" if prefix else str(key), out)
    else:
        out[prefix] = yaml_type(node)


def compose_config(root: Path, config_dir: str, config_name: str, overrides: list[str] = ()) -> dict:
    """The config as the entry point's @hydra.main composes it, interpolations left unresolved."""
    GlobalHydra.instance().clear()
    # Recipe configs find ppo_trainer through `hydra.searchpath` (a cwd-relative file:// or pkg://verl...):
    # point it at the materialized trainer configs instead.
    searchpath = [f"hydra.searchpath=[file://{root / TRAINER_CONFIG}]"] if config_dir != TRAINER_CONFIG else []
    with initialize_config_dir(config_dir=str(root / config_dir), version_base=None):
        cfg = compose(config_name=config_name, overrides=[*searchpath, *overrides])
    return OmegaConf.to_container(cfg, resolve=False)


def release_config_keys(root: Path, paths: set[str]) -> dict[str, dict[str, str]]:
    out = {}
    for name, (config_name, dirs, subtree) in CONFIGS.items():
        if subtree and SUBTREE_SOURCES[name] not in paths:
            continue
        config_dir = next((d for d in dirs if f"{d}/{config_name}.yaml" in paths), None)
        if config_dir is None:
            continue
        tree = compose_config(root, config_dir, config_name)
        keys: dict[str, str] = {}
        flatten({subtree: tree[subtree]} if subtree else tree, "", keys)
        out[name] = keys
    return out


def hydra_mains(repo: str, rev: str, prefix: str = "") -> list[dict]:
    """Every module of `rev` with @hydra.main (tests excluded); `prefix` is where the tree sits in verl."""
    try:
        hits = git(repo, "grep", "-n", "hydra.main", rev, "--", "*.py").decode().splitlines()
    except subprocess.CalledProcessError:
        return []
    out = []
    for hit in hits:
        _, path, _, text = hit.split(":", 3)
        match = HYDRA_MAIN.search(text)
        if not match or path.startswith("tests/"):
            continue
        path = prefix + path
        args = dict(HYDRA_ARG.findall(match["args"]))
        module = path[: -len(".py")].replace("/", ".")
        config_dir = os.path.normpath(os.path.join(os.path.dirname(path), args.get("config_path", ".")))
        out.append({"module": module, "config_name": args.get("config_name"), "config_dir": config_dir})
    return out


def recipe_submodule(repo: str, rev: str) -> str | None:
    """The verl-recipe commit `rev` pins at recipe/ (a git submodule from v0.7.1, #4795), if any."""
    line = git(repo, "ls-tree", rev, "recipe").decode().split()
    return line[2] if line and line[0] == "160000" else None


def entry_points(repo: str, rev: str, recipe_repo: str | None) -> list[dict]:
    out = hydra_mains(repo, rev)
    pinned = recipe_submodule(repo, rev)
    if pinned and recipe_repo:
        for entry in hydra_mains(recipe_repo, pinned, "recipe/"):
            entry["submodule"] = f"verl-recipe {pinned[:9]}"
            out.append(entry)
    for entry in out:
        launchers = script_launchers(repo, rev, entry["module"])
        if launchers:
            entry["launched_by"] = launchers
    return sorted(out, key=lambda e: e["module"])


def script_launchers(repo: str, rev: str, module: str) -> dict[str, int]:
    """How verl's own shell scripts at `rev` start `module`, counted per `-m MODULE`: `torchrun` (also
    `torch.distributed.run`), `python`, or `other` (the command is built in a variable, ...)."""
    pattern = rf"-m {re.escape(module)}([^A-Za-z0-9_.]|$)"
    try:
        text = git(repo, "grep", "-h", f"-B{LAUNCHER_CONTEXT}", "-E", "-e", pattern, rev, "--", "*.sh").decode()
    except subprocess.CalledProcessError:
        return {}
    counts: dict[str, int] = {}
    for group in re.split(r"^--$", text, flags=re.M):
        lines = group.strip("\n").splitlines()
        for index, line in enumerate(lines):
            if not re.search(pattern, line) or line.lstrip().startswith("#"):
                continue
            start = index  # back to the first line of the backslash-continued command
            while start > 0 and lines[start - 1].rstrip().endswith("\\"):
                start -= 1
            command = " ".join(lines[start : index + 1])
            if re.search(r"torchrun|torch\.distributed\.run", command):
                kind = "torchrun"
            elif re.search(r"\bpython3?\b", command):
                kind = "python"
            else:
                kind = "other"
            counts[kind] = counts.get(kind, 0) + 1
    return dict(sorted(counts.items()))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", required=True, help="verl git directory")
    parser.add_argument("--recipe-repo", help="verl-recipe git directory: entry points of the recipe/ submodule")
    parser.add_argument("--out", default="mappings/verl/facts", type=Path)
    parser.add_argument("--releases", default="mappings/verl/releases.yaml", type=Path)
    args = parser.parse_args()
    releases = yaml.safe_load(args.releases.read_text(encoding="utf-8"))["releases"]
    keys_dir = args.out / "entry-config-keys"
    keys_dir.mkdir(parents=True, exist_ok=True)
    points = {}
    for release in releases:
        rev = revision(release)
        paths = tree_paths(args.repo, rev)
        with tempfile.TemporaryDirectory() as tmp:
            materialize(args.repo, rev, paths, Path(tmp))
            configs = release_config_keys(Path(tmp), paths)
        for name, keys in configs.items():
            lines = "".join(f"{k}\t{t}\n" for k, t in sorted(keys.items()))
            text = header(__file__, release, commit_of(args.repo, release)) + lines
            (keys_dir / f"{release}.{name}.keys").write_text(text, encoding="utf-8")
        points[release] = entry_points(args.repo, rev, args.recipe_repo)
        print(f"{release}: {', '.join(f'{n} {len(k)}' for n, k in configs.items())}", file=sys.stderr)
    description = (
        "# verl entry points with @hydra.main per release (tests/ excluded), from\n"
        "# `git grep -n hydra.main REV -- '*.py'`; written by scripts/extract_entry_config_keys.py.\n"
        f"# config_dir is relative to verl's repository root. `main` is verl commit {main_commit()}.\n"
        "# launched_by: how verl's own shell scripts of that release start the module, per `-m MODULE`: torchrun\n"
        "# (or torch.distributed.run), python, or other (the command is assembled in a variable).\n"
        "# From v0.7.1 recipe/ is the verl-recipe submodule: its entry points (at the commit the release pins)\n"
        "# carry `submodule:`. Entry points without Hydra: see `without_hydra` below.\n"
    )
    body = {"releases": points, "without_hydra": WITHOUT_HYDRA}
    text = yaml.safe_dump(body, sort_keys=False, width=120)
    provenance = header(__file__, all_releases(), commit_of(args.repo, "main"))
    (args.out / "entry-points.yaml").write_text(provenance + description + text, encoding="utf-8")
    return 0


# Entry points users launch that have no @hydra.main of their own (checked by reading the modules).
WITHOUT_HYDRA = [
    {
        "module": "verl.model_merger",
        "note": "argparse CLI (`python -m verl.model_merger merge --backend fsdp ...`), "
        "shipped from v0.4.1; its flags are not Hydra keys and did not move",
    },
    {
        "module": "verl.experimental.one_step_off_policy.async_main_ppo",
        "note": "named (also as recipe.one_step_off_policy.async_main_ppo) in docs/advance/one_step_off.md and the "
        "one_step_off_policy README from v0.5.0 on, but no release ships it: the entry point is "
        "one_step_off_policy.main_ppo",
    },
]

if __name__ == "__main__":
    sys.exit(main())
