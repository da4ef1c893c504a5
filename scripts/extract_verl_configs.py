"""Extract the Hydra config trees verl's entry points compose, per release in the tables (maintainer tool).

    python scripts/extract_verl_configs.py --repo /path/to/verl/.git [--out mappings/verl/facts/configs]

For every release in mappings/verl/releases.yaml (`main` is the commit named in that file's header), it
finds each `@hydra.main(config_path=..., config_name=...)` outside `tests/`, resolves config_path against
the .py file, and stores every YAML under those config directories (and under the directories their
`hydra.searchpath` names) except `_generated_*.yaml` (generated references, never composed).
File contents are stored once, by content (`blobs/<sha256[:16]>.yaml`, the digest of verl's bytes, after a
header line naming the first release that has them); `releases/<rev>.yaml` maps paths to blobs and entry
points to configs. Idempotent: unchanged files are not rewritten, unreferenced blobs deleted.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import posixpath
import re
import subprocess
import sys
from pathlib import Path

import yaml
from facts_header import ROOT, header, revision
from facts_header import releases as release_names

_SEARCHPATH = re.compile(r"^\s*-\s*['\"]?(file|pkg)://([\w./-]+)", re.M)


def git(repo: str, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", repo, *args], check=True, capture_output=True, text=True).stdout


def blob(repo: str, sha: str) -> bytes:
    return subprocess.run(["git", "--git-dir", repo, "cat-file", "blob", sha], check=True, capture_output=True).stdout


def releases() -> list[tuple[str, str]]:
    """(release name, git revision) in table order."""
    return [(r, revision(r)) for r in release_names()]


def hydra_mains(repo: str, rev: str) -> dict[str, dict]:
    """script path -> {config_path, config_name} for each `@hydra.main` decorator at rev (tests excluded)."""
    try:
        hits = git(repo, "grep", "-l", "hydra.main", rev, "--", "*.py")
    except subprocess.CalledProcessError:  # no match
        return {}
    found = {}
    for line in hits.splitlines():
        path = line.split(":", 1)[1]
        if path.startswith("tests/") or "/tests/" in path:
            continue
        decorator = _decorator(git(repo, "show", f"{rev}:{path}"))
        if decorator is None or decorator.get("config_path") is None:
            continue
        config_dir = posixpath.normpath(posixpath.join(posixpath.dirname(path), decorator["config_path"]))
        found[path] = {"config_path": config_dir, "config_name": decorator.get("config_name")}
    return dict(sorted(found.items()))


def _decorator(source: str) -> dict | None:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for deco in node.decorator_list:
            if isinstance(deco, ast.Call) and ast.unparse(deco.func) == "hydra.main":
                args = {k.arg: k.value.value for k in deco.keywords if isinstance(k.value, ast.Constant)}
                positional = ("config_path", "config_name")
                for name, arg in zip(positional, deco.args):
                    if isinstance(arg, ast.Constant):
                        args[name] = arg.value
                return args
    return None


def config_files(repo: str, rev: str, directories: set[str]) -> dict[str, str]:
    """path -> git blob id of every composable YAML under the directories (and their search paths)."""
    listing: dict[str, str] = {}
    todo, seen = sorted(directories), set()
    while todo:
        directory = todo.pop()
        if directory in seen:
            continue
        seen.add(directory)
        for line in git(repo, "ls-tree", "-r", rev, "--", directory + "/").splitlines():
            meta, path = line.split("\t", 1)
            name = posixpath.basename(path)
            if not name.endswith((".yaml", ".yml")) or name.startswith("_generated_"):
                continue
            listing[path] = meta.split()[2]
    return listing


def searchpath_declarers(repo: str, rev: str) -> set[str]:
    """Config directories (outside tests/) holding a primary config with `hydra: searchpath:`: run with
    `--config-path` by verl's example scripts."""
    try:
        hits = git(repo, "grep", "-l", "searchpath", rev, "--", "*.yaml", "*.yml")
    except subprocess.CalledProcessError:
        return set()
    paths = (line.split(":", 1)[1] for line in hits.splitlines())
    return {posixpath.dirname(p) for p in paths if not p.startswith("tests/") and "/tests/" not in p}


def searchpath_dirs(text: str) -> set[str]:
    """Directories a primary config adds with `hydra: searchpath:` (relative to verl's root)."""
    if "searchpath" not in text:
        return set()
    found = {posixpath.normpath(p if scheme == "file" else p.replace(".", "/")) for scheme, p in _SEARCHPATH.findall(text)}
    return {p for p in found if not p.startswith((".", "/"))}  # relative to verl's root only


def extract(repo: str, out: Path) -> dict[str, int]:
    blobs: dict[str, bytes] = {}  # digest -> the first release's header and the file's bytes
    stats = {}
    for release, rev in releases():
        commit = git(repo, "rev-parse", f"{rev}^{{commit}}").strip()
        mains = hydra_mains(repo, commit)
        directories = {m["config_path"] for m in mains.values()} | searchpath_declarers(repo, commit)
        files = config_files(repo, commit, directories)
        extra = set()
        for sha in files.values():
            extra |= searchpath_dirs(blob(repo, sha).decode("utf-8", "replace"))
        files.update(config_files(repo, commit, extra - directories))
        index = {}
        for path, sha in sorted(files.items()):
            data = blob(repo, sha)
            digest = hashlib.sha256(data).hexdigest()[:16]
            blobs.setdefault(digest, header(__file__, release, commit).encode() + data)
            index[path] = digest
        entry_points = {p: m for p, m in mains.items() if any(f.startswith(m["config_path"] + "/") for f in files)}
        description = f"# verl {release} ({commit[:12]}): the Hydra configs its entry points compose.\n"
        body = yaml.safe_dump({"release": release, "commit": commit, "entry_points": entry_points, "files": index},
                              sort_keys=False, width=120)
        write_if_changed(out / "releases" / f"{release}.yaml", (header(__file__, release, commit) + description
                                                                 + body).encode())
        stats[release] = len(index)
    for digest, data in blobs.items():
        write_if_changed(out / "blobs" / f"{digest}.yaml", data)
    for stale in (out / "blobs").glob("*.yaml"):
        if stale.stem not in blobs:
            stale.unlink()
    known = {r for r, _ in releases()}
    for stale in (out / "releases").glob("*.yaml"):
        if stale.stem not in known:
            stale.unlink()
    stats["blobs"] = len(blobs)
    return stats


def write_if_changed(path: Path, data: bytes) -> None:
    if path.is_file() and path.read_bytes() == data:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_bytes(data)
    tmp.replace(path)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", required=True, help="verl's git directory (bare or .git)")
    parser.add_argument("--out", default=str(ROOT / "mappings" / "verl" / "facts" / "configs"))
    args = parser.parse_args(argv)
    stats = extract(args.repo, Path(args.out))
    for name, count in stats.items():
        print(f"{name}: {count}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
