"""Extract verl's component registries and its accepted-but-ignored keys, per release, with evidence.

Writes mappings/verl/facts/components.yaml (read by migrator/startup/components.py):

- registries: for each config key whose value names a component (a reward manager, a rollout engine, a
  rollout mode), the names verl registers at each release, each with the file:line that registers it
  (`@register("name")` in the registry's package, the keys of `_ROLLOUT_REGISTRY`, the one mode
  RolloutConfig accepts), and the file:line that reads the key.
- ignored: keys a release still declares (Hydra accepts them) that no code reads any more, with the line
  that read them at the release before (`read_before`), the proof that it is gone (`absent`: the pattern
  no longer matches that file), and what is read instead, with the PR.

The specs below are the data: where each registry lives and which key selects from it, and which reader
each ignored key lost; the script finds the lines in verl's history and fails if a spec does not hold.

    python scripts/extract_verl_components.py --repo /path/to/verl-clone
"""

from __future__ import annotations

import argparse
import ast
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "mappings" / "verl" / "facts" / "components.yaml"
RELEASES = ["v0.4.1", "v0.5.0", "v0.6.0", "v0.6.1", "v0.7.0", "v0.7.1", "v0.8.0", "v0.9.0"]

# (registry, key, first..last release, how names are registered, where, the reader: file and pattern)
REGISTRIES = [
    ("reward-manager", "reward_model.reward_manager", "v0.4.1", "v0.6.1", "decorator", "verl/workers/reward_manager",
     "verl/trainer/ppo/reward.py", r'config\.reward_model\.get\("reward_manager"'),
    ("reward-manager", "reward_model.reward_manager", "v0.7.0", "v0.7.0", "decorator",
     "verl/experimental/reward_loop/reward_manager", "verl/experimental/reward_loop/reward_loop.py",
     r"get_reward_manager_cls\(self\.config\.reward_model\.reward_manager\)"),
    ("reward-manager", "reward.reward_manager.name", "v0.7.1", "v0.9.0", "decorator",
     "verl/experimental/reward_loop/reward_manager", "verl/trainer/ppo/reward.py",
     r"get_reward_manager_cls\(reward_manager_cfg\.name\)"),
    ("rollout-name", "actor_rollout_ref.rollout.name", "v0.6.0", "v0.9.0", "rollout-registry:0",
     "verl/workers/rollout/base.py", "verl/workers/rollout/base.py", r"_ROLLOUT_REGISTRY\[\(rollout_name, mode\)\]"),
    ("rollout-mode", "actor_rollout_ref.rollout.mode", "v0.6.0", "v0.6.1", "rollout-registry:1",
     "verl/workers/rollout/base.py", "verl/workers/rollout/base.py", r"_ROLLOUT_REGISTRY\[\(rollout_name, mode\)\]"),
    ("rollout-mode", "actor_rollout_ref.rollout.mode", "v0.7.0", "v0.9.0", "compared:async",
     "verl/workers/config/rollout.py", "verl/workers/config/rollout.py", r'if self\.mode != "async"'),
]
# When the value is not a registered name but a path or class (`source: importlib`), no registry applies.
ONLY_WHEN = {"reward.reward_manager.name": {"reward.reward_manager.source": "register"}}

# (node or key, the release that stops reading it, entry points, reader file and pattern at the release
#  before, what verl reads instead (old-key prefix -> new), PR)
IGNORED = [
    ("reward_model", "v0.9.0", ["verl.trainer.main_ppo"], "verl/trainer/main_ppo.py",
     r"config = migrate_legacy_reward_impl\(config\)",
     {"reward_model.num_workers": "reward.num_workers", "reward_model.reward_manager": "reward.reward_manager.name",
      "reward_model.reward_loop_source": "reward.reward_manager.source",
      "reward_model.reward_loop_module_path": "reward.reward_manager.module.path",
      "reward_model.reward_loop_class_name": "reward.reward_manager.module.name",
      "reward_model.enable": "reward.reward_model.enable",
      "reward_model.enable_resource_pool": "reward.reward_model.enable_resource_pool",
      "reward_model.n_gpus_per_node": "reward.reward_model.n_gpus_per_node",
      "reward_model.nnodes": "reward.reward_model.nnodes", "reward_model.model.path": "reward.reward_model.model_path",
      "reward_model.reward_kwargs": "reward.reward_kwargs", "reward_model.rollout": "reward.reward_model.rollout"},
     6710),
    ("custom_reward_function", "v0.9.0", ["verl.trainer.main_ppo"], "verl/trainer/main_ppo.py",
     r"config = migrate_legacy_reward_impl\(config\)",
     {"custom_reward_function": "reward.custom_reward_function"}, 6710),
    ("sandbox_fusion", "v0.9.0", ["verl.trainer.main_ppo"], "verl/trainer/main_ppo.py",
     r"config = migrate_legacy_reward_impl\(config\)", {"sandbox_fusion": "reward.sandbox_fusion"}, 6710),
    ("actor_rollout_ref.actor.grad_clip", "v0.8.0", ["verl.trainer.main_ppo"], "verl/workers/actor/dp_actor.py",
     r"self\.config\.grad_clip", {"actor_rollout_ref.actor.grad_clip": "actor_rollout_ref.actor.optim.clip_grad"},
     6067),
    ("critic.grad_clip", "v0.8.0", ["verl.trainer.main_ppo"], "verl/workers/critic/dp_critic.py",
     r"self\.config\.grad_clip", {"critic.grad_clip": "critic.optim.clip_grad"}, 6067),
]


class Git:
    def __init__(self, repo: Path):
        self.repo = repo

    def run(self, *args: str) -> str:
        return subprocess.run(["git", "-C", str(self.repo), *args], check=True, capture_output=True,
                              text=True).stdout

    def files(self, rev: str, folder: str) -> list[str]:
        return [p for p in self.run("ls-tree", "-r", "--name-only", rev, "--", folder).splitlines() if p.endswith(".py")]

    def show(self, rev: str, path: str) -> str | None:
        try:
            return self.run("show", f"{rev}:{path}")
        except subprocess.CalledProcessError:
            return None

    def commit(self, rev: str) -> str:
        return self.run("rev-parse", "--short=9", f"{rev}^{{commit}}").strip()


def line_of(text: str | None, pattern: str) -> int | None:
    if text is None:
        return None
    m = re.search(pattern, text)
    return text.count("\n", 0, m.start()) + 1 if m else None


def registered(git: Git, rev: str, how: str, where: str) -> dict[str, str]:
    """name -> file:line that registers it."""
    out: dict[str, str] = {}
    if how == "decorator":
        for path in git.files(rev, where):
            for m in re.finditer(r'^@register\(\s*["\']([\w-]+)["\']', git.show(rev, path) or "", re.M):
                out.setdefault(m.group(1), f"{path}:{git.show(rev, path).count(chr(10), 0, m.start()) + 1}")
    elif how.startswith("rollout-registry:"):
        part = int(how.split(":")[1])
        text = git.show(rev, where) or ""
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "_ROLLOUT_REGISTRY" for t in node.targets):
                for key in node.value.keys:
                    out.setdefault(key.elts[part].value, f"{where}:{key.lineno}")
    elif how.startswith("compared:"):
        name = how.split(":")[1]
        line = line_of(git.show(rev, where), rf'self\.mode != "{name}"')
        if line:
            out[name] = f"{where}:{line}"
    if not out:
        raise SystemExit(f"{rev}: no {how} names under {where}")
    return dict(sorted(out.items()))


def extract(git: Git) -> dict:
    registries = []
    for name, key, first, last, how, where, reader, pattern in REGISTRIES:
        span = RELEASES[RELEASES.index(first):RELEASES.index(last) + 1]
        for rev in span:
            read = line_of(git.show(rev, reader), pattern)
            if read is None:
                raise SystemExit(f"{rev}: `{pattern}` not in {reader}: the reader of {key} moved")
            entry = {"registry": name, "key": key, "release": rev, "read_at": f"{reader}:{read}",
                     "names": registered(git, rev, how, where)}
            if key in ONLY_WHEN:
                entry["only_when"] = dict(ONLY_WHEN[key])
            registries.append(entry)
    ignored = []
    for node, release, entries, reader, pattern, instead, pr in IGNORED:
        before = RELEASES[RELEASES.index(release) - 1]
        read = line_of(git.show(before, reader), pattern)
        if read is None:
            raise SystemExit(f"{before}: `{pattern}` not in {reader}: {node} was not read there")
        span = RELEASES[RELEASES.index(release):]
        for rev in span:
            if line_of(git.show(rev, reader), pattern) is not None:
                raise SystemExit(f"{rev}: {reader} still reads {node}")
        ignored.append({"key": node, "release": release, "releases": span, "entry_points": entries,
                        "read_before": f"{before}:{reader}:{read}", "absent": f"{release}:{reader}",
                        "read_instead": instead, "pr": pr})
    return {"registries": registries, "ignored": ignored}


def main(argv=None) -> int:
    import yaml

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", "--verl", dest="verl", type=Path, required=True)
    args = parser.parse_args(argv)
    git = Git(args.verl)
    facts = extract(git)
    header = (f"# GENERATED VIA scripts/extract_verl_components.py from verl {RELEASES[-1]} ({git.commit(RELEASES[-1])}); "
              "do not edit\n"
              f"# (read at every release {RELEASES[0]}..{RELEASES[-1]}) registries: the names verl registers for a config key, per release, each with the line that registers\n"
              "# it; read_at: the line that reads the key. ignored: keys still declared that nothing reads from\n"
              "# `release` on, at each of `releases` (read_before: the reader at the release before; absent: the file that no\n"
              "# longer reads it, checked at each).\n")
    OUT.write_text(header + yaml.safe_dump(facts, sort_keys=False, width=120), encoding="utf-8")
    print(f"{len(facts['registries'])} registry entries, {len(facts['ignored'])} ignored keys -> {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
