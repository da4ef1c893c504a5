"""Which environment presets a path-move into a script that reads `${X:-default}` is missing (maintainer tool).

    python scripts/compare_script_presets.py --repo VERL_GIT_DIR [--table mappings/verl/v0.8.0.yaml ...]

For every `path-move` whose new script reads environment variables with defaults, compares the old
script (its last version before the move) with the new script at the table's release: for each
variable X the new script reads, the Hydra overrides whose value comes from X (directly or through
shell variables assigned from it) are resolved in the old script; where the old script hard-coded a
different value (or assigned X itself), X=<old value> is a missing preset. Prints one line per finding
(`entry  VAR  old=...  new-default=...  via key`); a person checks each before adding it to `env:`.
"""

from __future__ import annotations

import argparse
import re
import subprocess
from pathlib import Path

import yaml
from facts_header import revision

ROOT = Path(__file__).resolve().parent.parent
VERL = ROOT / "mappings" / "verl"
DEFAULT_READ = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*):?[-=]([^}]*)\}")
VAR_REF = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)")
ASSIGN = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=(\S*)")
OVERRIDE = re.compile(r"(?:^|\s)[+~]?([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_-]+)+)=(\S*)")


def git(repo: str, *args: str) -> str:
    return subprocess.run(["git", f"--git-dir={repo}", *args], capture_output=True, text=True).stdout


def unquote(value: str) -> str:
    value = value.rstrip("\\").strip()
    return value[1:-1] if len(value) > 1 and value[0] == value[-1] and value[0] in "'\"" else value.strip("'\"")


def assignments(text: str) -> dict[str, str]:
    """Shell variable -> its first assigned raw value (comments skipped)."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        if line.lstrip().startswith("#"):
            continue
        m = ASSIGN.match(line)
        if m and "." not in m.group(1):
            out.setdefault(m.group(1), unquote(m.group(2)))
    return out


def overrides(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in text.splitlines():
        if line.lstrip().startswith("#"):
            continue
        for m in OVERRIDE.finditer(line):
            out.setdefault(m.group(1), unquote(m.group(2)))
    return out


def resolve(value: str, env: dict[str, str], depth: int = 0) -> str:
    """Substitute variables by their assigned values (`${X:-d}` falls back to d when X is unassigned)."""
    if depth > 8:
        return value

    def sub(m: re.Match) -> str:
        name, default = m.group(1), m.group(2)
        if name in env and env[name] != m.group(0):
            return resolve(env[name], env, depth + 1)
        return resolve(default, env, depth + 1)

    value = DEFAULT_READ.sub(sub, value)
    return re.sub(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?",
                  lambda m: resolve(env[m.group(1)], env, depth + 1) if m.group(1) in env else m.group(0), value)


def env_sources(raw: str, env: dict[str, str], depth: int = 0) -> set[str]:
    """Environment variables (read with a default) that a raw value depends on."""
    found = {m.group(1) for m in DEFAULT_READ.finditer(raw)}
    if depth < 8:
        for name in {m.group(1) for m in VAR_REF.finditer(raw)}:
            if name in env and name not in found:
                found |= env_sources(env[name], env, depth + 1)
    return found


def old_text(repo: str, span: str, path: str) -> str:
    last = git(repo, "rev-list", "-1", span, "--", path).strip()
    return git(repo, "show", f"{last}^:{path}") if last else ""


def same(a: str, b: str) -> bool:
    a, b = unquote(a), unquote(b)
    try:
        return float(a) == float(b)
    except ValueError:
        return a == b


def later_values(text: str, var: str) -> list[str]:
    """Literal values a script assigns to `var` after reading it (`[ -z "$X" ] && X=2`, per-backend defaults)."""
    found = re.findall(r"(?:^|[\s;&|(])" + var + r"=([^\s;$)]+)", text, re.M)
    return sorted({unquote(v) for v in found if v and not v.startswith("${")})


def compare(repo: str, previous: str, release: str, entry: dict) -> list[str]:
    rev = revision(release)
    new = git(repo, "show", f"{rev}:{entry['new']}")
    old = old_text(repo, f"{previous}..{rev}", entry["old"])
    defaults = {}
    for m in DEFAULT_READ.finditer(new):
        defaults.setdefault(m.group(1), m.group(2))
    if not defaults or not old:
        return []
    new_env, old_env = assignments(new), assignments(old)
    old_over = overrides(old)
    presets = dict(entry.get("env") or {})
    findings = []
    for var, default in sorted(defaults.items()):
        if var in presets:
            continue
        new_default = unquote(resolve(default, new_env))
        if not new_default:  # computed later in the new script: show the candidates for a person to check
            new_default = "computed:" + "|".join(later_values(new, var))
        if var in old_env:  # the old script set the variable itself
            value = unquote(resolve(old_env[var], old_env))
            if not same(value, new_default) and "$" not in value:
                findings.append(f"{var}\told={value}\tnew-default={new_default}\tvia the old script's {var}=")
            continue
        for key, raw in overrides(new).items():
            if env_sources(raw, new_env) != {var} or key not in old_over:
                continue
            if not new_default.startswith("computed:") and not same(resolve(raw, new_env), new_default):
                continue  # the key holds more than the variable (a path built from it, ...)
            value = unquote(resolve(old_over[key], old_env))
            if not same(value, new_default) and "$" not in value:
                findings.append(f"{var}\told={value}\tnew-default={new_default}\tvia {key}")
                break
    return findings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", required=True)
    parser.add_argument("--table", action="append", help="table file(s); default: every release table")
    args = parser.parse_args()
    releases = yaml.safe_load((VERL / "releases.yaml").read_text())["releases"]
    tables = [Path(t) for t in args.table] if args.table else [VERL / f"{r}.yaml" for r in releases[1:]]
    for table in tables:
        data = yaml.safe_load(table.read_text())
        previous = releases[releases.index(data["release"]) - 1]
        for entry in data["entries"]:
            if entry["kind"] != "path-move" or entry["old"].endswith("/"):
                continue
            for line in compare(args.repo, previous, data["release"], entry):
                print(f"{data['release']}\t{entry['old']} -> {entry['new']}\t{line}")


if __name__ == "__main__":
    main()
