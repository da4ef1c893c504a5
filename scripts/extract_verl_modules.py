"""Write the Python modules of every verl release and the names they bind (maintainer tool).

    python scripts/extract_verl_modules.py --repo GITDIR [--out FILE] [--check]

For each release in mappings/verl/releases.yaml (`main`: the commit that file names) it reads every `.py`
blob under verl/ and recipe/ with `git cat-file` and parses it with `ast`; verl's code is never
imported or run. It writes one file, `verl.modules`, one line per distinct module content:

    module<TAB>releases<TAB>defined names<TAB>re-exported names<TAB>private names

`releases` lists the releases where the module binds exactly these names, as runs of consecutive
releases (`v0.4.0..v0.6.1`, `v0.1,v0.4.0`): the same module at several releases is written once.

Defined: top-level functions, classes and assignments (also inside top-level if/try/with blocks),
public names only. A function is written `name(p1,p2,*args,k,**kw)`, a class with an `__init__` the
same way with its `__init__` parameters (without self); other names bare. Re-exported: names bound by
imports from verl itself (`from .x import Y`, `from verl.x import Y`) or listed in `__all__`, and
`*verl.x` for a star import from verl.x (whose names the reader resolves). Private: the other names
it defines or imports from verl (`_timer`, `__getattr__`), which `from verl.x import _timer` still finds
(the import check, migrator/rewrite/python/resolution.py); names imported from outside verl are not
written. A module
whose source does not parse keeps its line with `!syntax-error` as the only defined name.
"""

import argparse
import subprocess
import sys
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))  # facts_header, also when the tests load this file
from facts_header import ROOT, all_releases, commit_of, header, revision  # noqa: E402

from migrator.derive.pysource import bound_names, module_bindings, module_name  # noqa: E402,F401
from migrator.layout import verl_layout  # noqa: E402
from migrator.mapping.modulefacts import release_runs  # noqa: E402,F401

RELEASES_YAML = ROOT / "mappings" / "verl" / "releases.yaml"


def git(repo, *args, input_bytes=None):
    return subprocess.run(["git", "--git-dir", repo, *args], input=input_bytes, capture_output=True,
                          check=True).stdout


def python_blobs(repo, rev):
    """{module: (blob sha, is package)} for the .py files of `rev` under the package roots."""
    out = git(repo, "ls-tree", "-r", rev, "--", *verl_layout().packages).decode()
    blobs = {}
    for line in out.splitlines():
        meta, path = line.split("\t", 1)
        mode, kind, sha = meta.split()
        if kind != "blob" or not path.endswith(".py"):
            continue
        name = module_name(path)
        if name is not None:
            blobs[name] = (sha, path.endswith("/__init__.py"))
    return blobs


def read_blobs(repo, shas):
    """{sha: bytes} through one `git cat-file --batch`."""
    shas = sorted(set(shas))
    raw = git(repo, "cat-file", "--batch", input_bytes="".join(s + "\n" for s in shas).encode())
    result, pos = {}, 0
    for sha in shas:
        header_end = raw.index(b"\n", pos)
        _, _, size = raw[pos:header_end].split()
        start = header_end + 1
        result[sha] = raw[start:start + int(size)]
        pos = start + int(size) + 1
    return result


def release_revs():
    releases = yaml.safe_load(RELEASES_YAML.read_text())["releases"]
    return [(r, revision(r)) for r in releases]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", required=True, help="verl git dir (bare or .git)")
    parser.add_argument("--out", default=str(ROOT / "mappings" / "verl" / "facts" / "modules" / "verl.modules"))
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if --out differs from the history")
    args = parser.parse_args(argv)
    revs = release_revs()
    releases = [release for release, _ in revs]
    per_release = [python_blobs(args.repo, rev) for _, rev in revs]
    sources = read_blobs(args.repo, [sha for blobs in per_release for sha, _ in blobs.values()])
    parsed, seen_at = {}, {}
    for index, blobs in enumerate(per_release):
        for module, (sha, is_package) in blobs.items():
            if (module, sha) not in parsed:
                parsed[module, sha] = module_bindings(sources[sha], module, is_package)
            line = tuple([module] + [" ".join(names) for names in parsed[module, sha]])
            seen_at.setdefault(line, []).append(index)
    description = ("# Python modules of each verl release and the names they bind; written by\n"
                   "# scripts/extract_verl_modules.py (see its docstring). Columns, tab-separated:\n"
                   "# module, releases, defined names (functions and classes with their parameters), re-exported "
                   "names,\n# private names (defined, or imported from verl)\n")
    body = [f"{line[0]}\t{release_runs(seen_at[line], releases)}\t" + "\t".join(line[1:]) + "\n"
            for line in sorted(seen_at, key=lambda line: (line[0], seen_at[line][0]))]
    out = Path(args.out)
    text = header(__file__, all_releases(), commit_of(args.repo, "main")) + description + "".join(body)
    if args.check:
        current = out.read_text() if out.exists() else ""
        print(f"{out}: {'up to date' if current == text else 'out of date'}", file=sys.stderr)
        return 0 if current == text else 1
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    for index, release in enumerate(releases):
        print(f"{release}: {len(per_release[index])} modules", file=sys.stderr)
    print(f"{out}: {len(body)} lines, {out.stat().st_size} bytes", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
