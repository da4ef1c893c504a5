"""Run a moved script's old and new versions with stub commands and compare the Hydra overrides they pass.

    python scripts/compare_script_runs.py --repo VERL_GIT_DIR [--table mappings/verl/v0.8.0.yaml] [--only OLD_PATH]

Maintainer tool for `path-move` entries with `env:` presets or into consolidated scripts. Each script
runs from a copy of verl's examples/ at its revision (the old one just before the move, the new one at
the table's release) under `bash`, with `python3`, `torchrun`, `ray`, `nvidia-smi` and friends replaced
by stubs that record their arguments (a `python3 -c` probe fails, so device probes answer "gpu"), a
scratch HOME and an empty environment plus the entry's presets. The training command's overrides are
compared key by key; for every difference the script proposes the new script's environment variable
that feeds that key (read as `${VAR:-default}`), reruns the new script with the proposals and prints
what still differs (a candidate for `args:`). A person checks every proposal before it goes into a table.
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
from compare_script_presets import DEFAULT_READ, assignments, env_sources, git  # noqa: E402
from facts_header import revision  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
VERL = ROOT / "mappings" / "verl"
STUBS = ("python3", "python", "torchrun", "ray", "nvidia-smi", "npu-smi", "hf", "huggingface-cli", "wget",
         "pip", "pip3", "sleep", "curl", "hostname", "ip")
STUB = """#!/bin/sh
case "$1" in -c) exit 1;; esac
{ printf '%s\\0' "$(basename "$0")" "$@"; printf '\\n'; } >> "$STUB_LOG"
exit 0
"""
OVERRIDE = re.compile(r"^[+~]?([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_-]+)+)=(.*)$", re.S)


def tree(repo: str, rev: str, dest: Path) -> None:
    """The script directories at `rev` (examples/, recipe/ before it became a submodule, verl/experimental/)."""
    for part in ("examples", "recipe", "verl/experimental"):
        proc = subprocess.run(["git", f"--git-dir={repo}", "archive", "--format=tar", rev, part], capture_output=True)
        if proc.returncode == 0:
            with tarfile.open(fileobj=io.BytesIO(proc.stdout)) as tar:
                tar.extractall(dest, filter="data")


def recorded_calls(workdir: Path, script: str, env: dict[str, str], home: Path) -> list[list[str]]:
    """Run `script` in `workdir` with stub commands (STUBS) that record every call: each call's arguments,
    `$HOME` written back for `home` (so that two runs compare equal and no proposal carries a home path)."""
    stubs = workdir / ".stubs"
    stubs.mkdir(exist_ok=True)
    for name in STUBS:
        (stubs / name).write_text(STUB)
        (stubs / name).chmod(0o755)
    log = workdir / ".stub.log"
    log.write_text("")
    home.mkdir(exist_ok=True)
    # HDFS_ROOT, DATA_ROOT: a few old scripts require them (set -u) and take only paths from them
    base = {"PATH": f"{stubs}:/usr/bin:/bin", "HOME": str(home), "STUB_LOG": str(log),
            "HDFS_ROOT": "/hdfs", "DATA_ROOT": "/data"}
    if not (workdir / script).is_file():
        return []
    # vendor toolkit set-up files are absent here: skip sourcing them
    text = (workdir / script).read_text()
    (workdir / script).write_text(re.sub(r"^\s*(source|\.)\s+/usr/local/Ascend/\S+", ":", text, flags=re.M))
    # two positional arguments only for scripts that take `<nproc_per_node> <save_path>` (the SFT examples)
    positional = ["8", str(home / "ckpt")] if re.search(r"nproc_per_node=\$\{?1\b", text) else []
    subprocess.run(["timeout", "20", "bash", script, *positional], cwd=workdir, env={**base, **env},
                   capture_output=True, text=True, stdin=subprocess.DEVNULL)
    return [[a.replace(str(home), "$HOME") for a in line.split("\0") if a] for line in log.read_text().split("\n")]


def run(workdir: Path, script: str, env: dict[str, str], home: Path) -> dict[str, str]:
    """Overrides of the recorded call with the most `key=value` arguments."""
    best: dict[str, str] = {}
    for args in recorded_calls(workdir, script, env, home):
        found = {m.group(1): m.group(2) for a in args if (m := OVERRIDE.match(a))}
        if len(found) > len(best):
            best = found
    return best


def diff(old: dict[str, str], new: dict[str, str]) -> dict[str, tuple]:
    out = {}
    for key in sorted(set(old) | set(new)):
        a, b = old.get(key), new.get(key)
        if a != b and not (a is not None and b is not None and _num(a) == _num(b) is not None):
            out[key] = (a, b)
    return out


def _num(v: str):
    try:
        return float(v)
    except ValueError:
        return None


def proposals(new_text: str, differences: dict[str, tuple], presets: dict) -> dict[str, str]:
    """For each differing key, the environment variable the new script reads for it and the old value."""
    env = assignments(new_text)
    readable = {m.group(1) for m in DEFAULT_READ.finditer(new_text)}
    raw_of = {}
    for line in new_text.splitlines():
        for m in re.finditer(r"[+~]?([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_-]+)+)=(\S+)", line):
            raw_of.setdefault(m.group(1), m.group(2).rstrip("\\").strip("\"'"))
    out = {}
    for key, (old, _new) in differences.items():
        if old is None or key not in raw_of:
            continue
        sources = env_sources(raw_of[key], env) & readable
        outer = outer_variable(raw_of[key], env)
        if len(sources) == 1 or outer in sources:
            var = outer if outer in sources else sources.pop()
            if var not in presets and re.fullmatch(r"[A-Za-z0-9 _./:,@%+=-]*", old):
                out[var] = old
    return out


def outer_variable(raw: str, env: dict[str, str], depth: int = 0) -> str | None:
    """The variable a value is read from as a whole: `$x` with `x=${VAR:-...}` gives VAR."""
    m = re.fullmatch(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?", raw)
    if m and m.group(1) in env and depth < 8:
        return outer_variable(env[m.group(1)], env, depth + 1) or m.group(1)
    m = re.match(r"\$\{([A-Za-z_][A-Za-z0-9_]*):?[-=]", raw)
    return m.group(1) if m else (m.group(1) if (m := re.fullmatch(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?", raw)) else None)


def compare(repo: str, previous: str, release: str, entry: dict, scratch: Path) -> list[str]:
    rev = revision(release)
    last = git(repo, "rev-list", "-1", f"{previous}..{rev}", "--", entry["old"]).strip()
    if not last:
        return [f"{entry['old']}: no commit moved it in {previous}..{rev}"]
    old_dir, new_dir = scratch / "old", scratch / "new"
    for d in (old_dir, new_dir):
        subprocess.run(["rm", "-rf", str(d)], check=True)
        d.mkdir(parents=True)
    tree(repo, f"{last}^", old_dir)
    tree(repo, rev, new_dir)
    presets = {k: str(v) for k, v in (entry.get("env") or {}).items()}
    home = scratch / "home"
    old = run(old_dir, entry["old"], {k: v for k, v in presets.items() if k == "DEVICE"}, home)
    new = run(new_dir, entry["new"], presets, home)
    if not old or not new:
        return [f"{entry['old']}: no training command recorded (old {len(old)}, new {len(new)} overrides)"]
    first = diff(old, new)
    proposed = proposals((new_dir / entry["new"]).read_text(), first, presets)
    after = run(new_dir, entry["new"], {**presets, **proposed}, home) if proposed else new
    lines = [f"{entry['old']} -> {entry['new']}: propose env {proposed}" if proposed else
             f"{entry['old']} -> {entry['new']}: no env proposal"]
    for key, (a, b) in diff(old, after).items():
        lines.append(f"    still differs {key}: old={a} new={b}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", required=True)
    parser.add_argument("--table", action="append")
    parser.add_argument("--only", action="append", help="old path(s) to compare")
    args = parser.parse_args()
    releases = yaml.safe_load((VERL / "releases.yaml").read_text())["releases"]
    tables = [Path(t) for t in args.table] if args.table else [VERL / f"{r}.yaml" for r in releases[1:]]
    with tempfile.TemporaryDirectory() as tmp:
        for table in tables:
            data = yaml.safe_load(table.read_text())
            previous = releases[releases.index(data["release"]) - 1]
            for entry in data["entries"]:
                if entry["kind"] != "path-move" or entry["old"].endswith("/") or not entry["new"].endswith(".sh"):
                    continue
                if args.only and entry["old"] not in args.only:
                    continue
                for line in compare(args.repo, previous, data["release"], entry, Path(tmp)):
                    print(f"{data['release']}\t{line}", flush=True)


if __name__ == "__main__":
    os.umask(0o022)
    main()
