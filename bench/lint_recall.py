"""How much of what Hydra refuses `verl-migrate lint` reports, judged on scripts lint was not tuned to, with a
ground truth that shares no code with verl-migrate.

    python bench/lint_recall.py --verl-git VERL_GIT --to v0.9.0 DIR [DIR ...] [--show 20] [--json OUT]

1. Every shell script under DIR (not under a vendored `verl/` package) runs under bash with nothing real on
   PATH: `python`, `python3`, `torchrun`, `ray`, `nohup`, `env`, ... are stubs that record their argv,
   `bash`/`sh` run for real under the same stubs (a heredoc or another script they run counts), every
   other command is a no-op (`command_not_found_handle`), `cd` never fails, stdin is empty, 20 s at
   most, from the script's directory in a copy of DIR. What reaches a stub is what the script would hand verl: after bash's own quoting, variable,
   array, heredoc and `eval` expansion, through functions and `source`d files.
2. Each recorded launch of a verl entry point (`-m verl.*` / `recipe.*`, or a `verl/**.py` path) is judged
   by hydra-core itself (`hydra.compose` on verl's config tree at the target, taken from VERL_GIT with
   `git archive`): all overrides at once, and where that fails each override alone (with the launch's
   config-group choices), so every refused override is found. `hydra.*` overrides and launches with their
   own `--config-path` are not judged. A launch of an entry point the target lacks is counted apart.
3. `verl-migrate lint --to REV --output-format json DIR` runs on the same files. A refused override is
   reported when lint has a finding with its key in that file (any code: a rename lint asks to migrate
   counts); a false flag is a finding that says Hydra refuses a key (VM003, VM004, VM007) where every
   recorded launch of that file passed the key and Hydra accepted it.

Not a test: pytest does not collect this directory. Prints recall and false flags, and the misses.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STUBS = ("python", "python3", "python3.10", "python3.11", "python3.12", "torchrun", "ray", "accelerate",
         "deepspeed", "srun", "mpirun", "uv", "nohup", "setsid", "timeout", "env", "numactl", "taskset")
SHELLS = ("bash", "sh")  # run for real (under the same stubs): `bash other.sh`, `bash <<EOF ... EOF`
PRELUDE = """command_not_found_handle() { return 0; }
cd() { builtin cd "$@" 2>/dev/null; return 0; }
pushd() { builtin pushd "$@" >/dev/null 2>&1; return 0; }
"""
STUB = """#!{python}
import json, os, sys
with open(os.environ["CAPTURE"], "a", encoding="utf-8") as out:
    out.write(json.dumps({{"script": os.environ.get("CAPTURE_SCRIPT", ""), "argv": [os.path.basename(sys.argv[0])] + sys.argv[1:]}}) + "\\n")
"""
HYDRA_MAIN = re.compile(r"@hydra\.main\(([^)]*)\)", re.S)
REFUSES = {"VM003", "VM004", "VM007"}


def scripts_under(directory: Path) -> list[Path]:
    return sorted(p for p in directory.rglob("*.sh") if p.is_file() and "verl" not in p.relative_to(directory).parts[:-1])


def capture(scripts: list[tuple[Path, Path]], work: Path) -> dict[str, list[list[str]]]:
    """{script path: [argv of each launch that names verl]} from running each script (path, its DIR) under
    stubs, from its directory in a copy of its DIR (relative `source` and paths work; nothing is written
    into DIR)."""
    stubs = work / "stubs"
    stubs.mkdir()
    for name in STUBS:
        path = stubs / name
        path.write_text(STUB.format(python=sys.executable))
        path.chmod(0o755)
    for name in SHELLS:
        path = stubs / name
        path.write_text('#!/bin/bash\nexec /bin/bash "$@"\n')
        path.chmod(0o755)
    prelude = work / "prelude.sh"
    prelude.write_text(PRELUDE)
    record = work / "capture.jsonl"
    copies: dict[Path, Path] = {}
    for script, base in scripts:
        if base not in copies:
            copies[base] = work / "copies" / f"{len(copies)}"
            shutil.copytree(base, copies[base], symlinks=True)
        copy = copies[base] / script.relative_to(base)
        scratch = work / "home"
        shutil.rmtree(scratch, ignore_errors=True)
        scratch.mkdir()
        env = {"PATH": str(stubs), "BASH_ENV": str(prelude), "HOME": str(scratch), "CAPTURE": str(record),
               "CAPTURE_SCRIPT": str(script), "TMPDIR": str(scratch)}
        try:
            subprocess.run(["/bin/bash", str(copy)], cwd=copy.parent, env=env, stdin=subprocess.DEVNULL,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=20)
        except subprocess.TimeoutExpired:
            pass
    launches: dict[str, list[list[str]]] = defaultdict(list)
    if record.exists():
        for line in record.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            if any(a.startswith(("verl.", "recipe.")) or ("verl/" in a and a.endswith(".py")) for a in row["argv"]):
                launches[row["script"]].append(row["argv"])
    return launches


def entry_and_overrides(argv: list[str]) -> tuple[str, list[str], dict] | None:
    """(entry module, overrides, hydra flags) of one recorded argv."""
    for n, arg in enumerate(argv):
        if arg == "-m" and n + 1 < len(argv) and argv[n + 1].startswith(("verl.", "recipe.")):
            entry, rest = argv[n + 1], argv[n + 2:]
            break
        if arg.endswith(".py") and "verl/" in arg:
            entry = arg[arg.index("verl/"):].removesuffix(".py").replace("/", ".")
            rest = argv[n + 1:]
            break
    else:
        return None
    overrides, flags, skip = [], {}, False
    for n, arg in enumerate(rest):
        if skip:
            skip = False
            continue
        if arg in ("--config-path", "--config-name", "-cp", "-cn"):
            flags["path" if arg in ("--config-path", "-cp") else "name"] = rest[n + 1] if n + 1 < len(rest) else ""
            skip = True
        elif arg.startswith(("--config-path=", "--config-name=")):
            flags["path" if arg.startswith("--config-path") else "name"] = arg.partition("=")[2]
        elif "=" in arg and not arg.startswith("-"):
            overrides.append(arg)
    return entry, overrides, flags


class Hydra:
    """hydra-core's compose on verl's config tree at one release (git archive of verl/ into a temp dir)."""

    def __init__(self, verl_git: str, rev: str, work: Path):
        self.root = work / "verl-src"
        self.root.mkdir()
        archive = subprocess.run(["git", f"--git-dir={verl_git}", "archive", rev, "verl"], check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(self.root)], input=archive, check=True)
        self.cache: dict = {}

    def config_of(self, entry: str) -> tuple[Path, str] | None:
        source = self.root / (entry.replace(".", "/") + ".py")
        if not source.is_file():
            return None
        m = HYDRA_MAIN.search(source.read_text(encoding="utf-8", errors="replace"))
        if not m:
            return None
        args = dict(re.findall(r"(config_path|config_name)\s*=\s*[\"']([^\"']*)[\"']", m.group(1)))
        return (source.parent / args.get("config_path", ".")).resolve(), args.get("config_name", "")

    def refused(self, config_dir: Path, config_name: str, overrides: list[str]) -> dict[str, str]:
        """{override: Hydra's message} for each override Hydra refuses."""
        from hydra import compose, initialize_config_dir
        from hydra.core.global_hydra import GlobalHydra

        groups = [o for o in overrides if "." not in o.split("=", 1)[0].lstrip("+~") and
                  (config_dir / o.split("=", 1)[0].lstrip("+~").split("@")[0]).is_dir()]

        def fails(items: list[str]) -> str | None:
            key = (str(config_dir), config_name, tuple(items))
            if key not in self.cache:
                GlobalHydra.instance().clear()
                try:
                    with initialize_config_dir(config_dir=str(config_dir), version_base=None):
                        compose(config_name=config_name, overrides=items)
                    self.cache[key] = None
                except Exception as exc:  # noqa: BLE001 - Hydra's verdict is whatever it raises
                    self.cache[key] = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
            return self.cache[key]

        if fails(overrides) is None:
            return {}
        if groups and fails(groups) is not None:
            return {g: fails([g]) or fails(groups) for g in groups}
        out = {}
        for item in overrides:
            if item in groups:
                continue
            message = fails(groups + [item])
            if message is not None:
                out[item] = message
        return out


def key_of(override: str) -> str:
    return override.split("=", 1)[0].lstrip("+~")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dirs", nargs="+", type=Path)
    parser.add_argument("--verl-git", required=True)
    parser.add_argument("--to", default="v0.9.0")
    parser.add_argument("--show", type=int, default=20)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="lint-recall-"))
    try:
        scripts = [(p.resolve(), d.resolve()) for d in args.dirs for p in scripts_under(d)]
        launches = capture(scripts, work)
        hydra = Hydra(args.verl_git, args.to, work)
        refused, missing_entries, not_judged = {}, [], 0
        passed: dict[tuple[str, str], bool] = {}
        for script, argvs in launches.items():
            for argv_ in argvs:
                parsed = entry_and_overrides(argv_)
                if parsed is None:
                    continue
                entry, overrides, flags = parsed
                config = hydra.config_of(entry)
                if config is None:
                    missing_entries.append((script, entry))
                    continue
                if "path" in flags:
                    not_judged += 1
                    continue
                config_dir, config_name = config
                config_name = flags.get("name", config_name).removesuffix(".yaml")
                judged = [o for o in overrides if not key_of(o).startswith(("hydra.", "hydra/"))]
                found = hydra.refused(config_dir, config_name, judged)
                for o in judged:
                    k = (script, key_of(o))
                    if o in found:
                        refused[k] = (o, found[o])
                    passed[k] = passed.get(k, True) and o not in found
        lint = subprocess.run([sys.executable, "-m", "migrator", "lint", "--to", args.to, "--output-format", "json",
                               *(str(d.resolve()) for d in args.dirs)], capture_output=True, text=True, cwd=ROOT)
        findings = json.loads(lint.stdout or "[]")
        by_file = defaultdict(list)
        for f in findings:
            by_file[str(Path(f["path"]).resolve())].append(f)
        reported = {k for k in refused if any(f.get("key") == k[1] or f"`{k[1]}`" in f["message"] for f in by_file[k[0]])}
        false_flags = [(path, f) for path, fs in by_file.items() for f in fs
                       if f["code"] in REFUSES and f.get("key") and passed.get((path, f["key"])) is True]
        entries_flagged = [(s, e) for s, e in missing_entries if any(f["code"] == "VM006" or e in f["message"] for f in by_file[s])]
        n_launches = sum(len(v) for v in launches.values())
        print(f"{len(scripts)} scripts, {len(launches)} launched verl ({n_launches} launches); "
              f"{not_judged} launches with their own --config-path not judged")
        print(f"Hydra refuses {len(refused)} (file, key) overrides at {args.to}; lint reports {len(reported)}: "
              f"recall {len(reported) / max(1, len(refused)):.1%}")
        print(f"launches of an entry point {args.to} lacks: {len(missing_entries)}, lint flags {len(entries_flagged)}")
        print(f"false flags (lint says Hydra refuses a key every launch passed and Hydra accepted): {len(false_flags)}")
        for (script, key), (override, message) in sorted(refused.items()):
            if (script, key) not in reported and args.show > 0:
                args.show -= 1
                print(f"  missed {script}: {override}  [{message[:120]}]")
        for path, f in false_flags[:20]:
            print(f"  false flag {path}:{f['line']} {f['code']} {f['key']}")
        if args.json:
            args.json.write_text(json.dumps({"refused": len(refused), "reported": len(reported),
                                             "false_flags": len(false_flags)}, indent=1))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
