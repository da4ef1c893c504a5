"""Write the Python modules of every verl release and the names they bind (maintainer tool).

    python scripts/extract_verl_modules.py --repo GITDIR [--out FILE] [--check]

For each release in mappings/verl/releases.yaml (`main` is verl commit MAIN_REV) it reads every `.py`
blob under verl/ and recipe/ with `git cat-file` and parses it with `ast`; verl's code is never
imported or run. It writes one file, `verl.modules`, one line per distinct module content:

    module<TAB>releases<TAB>defined names<TAB>re-exported names

`releases` lists the releases where the module binds exactly these names, as runs of consecutive
releases (`v0.4.0..v0.6.1`, `v0.1,v0.4.0`): the same module at several releases is written once.

Defined: top-level functions, classes and assignments (also inside top-level if/try/with blocks),
public names only. A function is written `name(p1,p2,*args,k,**kw)`, a class with an `__init__` the
same way with its `__init__` parameters (without self); other names bare. Re-exported: names bound by
imports from verl itself (`from .x import Y`, `from verl.x import Y`) or listed in `__all__`, and
`*verl.x` for a star import from verl.x (whose names the reader resolves). A module
whose source does not parse keeps its line with `!syntax-error` as the only defined name.
"""

import argparse
import ast
import keyword
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
RELEASES_YAML = ROOT / "mappings" / "verl" / "releases.yaml"
MAIN_REV = "1dda039b9"
PACKAGE_ROOTS = ("verl", "recipe")
# verl's own test folders are not API (`verl/.../tests/`, `recipe/.../tests/`)
EXCLUDED_DIRS = {"tests", "test"}


def git(repo, *args, input_bytes=None):
    return subprocess.run(["git", "--git-dir", repo, *args], input=input_bytes, capture_output=True,
                          check=True).stdout


def module_name(path):
    """Dotted module name of a tracked .py path, or None for files Python cannot import by name."""
    parts = path[:-3].split("/")
    if parts[-1] == "__init__":
        parts.pop()
    if any(p in EXCLUDED_DIRS for p in parts):
        return None
    if not all(p.isidentifier() and not keyword.iskeyword(p) for p in parts):
        return None
    return ".".join(parts)


def python_blobs(repo, rev):
    """{module: (blob sha, is package)} for the .py files of `rev` under the package roots."""
    out = git(repo, "ls-tree", "-r", rev, "--", *PACKAGE_ROOTS).decode()
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


def signature(args, drop_self):
    names = [a.arg for a in args.posonlyargs + args.args]
    if drop_self and names:
        names = names[1:]
    if args.vararg:
        names.append("*" + args.vararg.arg)
    elif args.kwonlyargs:
        names.append("*")
    names += [a.arg for a in args.kwonlyargs]
    if args.kwarg:
        names.append("**" + args.kwarg.arg)
    return "(" + ",".join(names) + ")"


def is_verl_import(node):
    if node.level:
        return True
    return (node.module or "").split(".")[0] in PACKAGE_ROOTS


def absolute_module(node, module, is_package):
    """The absolute name of the module an ImportFrom reads (relative imports resolved)."""
    if not node.level:
        return node.module
    parts = module.split(".")
    base = parts if is_package else parts[:-1]
    base = base[:len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def top_level_statements(body):
    """Statements at module level, descending into if/try/with blocks (not functions or classes)."""
    for node in body:
        yield node
        if isinstance(node, (ast.If, ast.For, ast.While)):
            yield from top_level_statements(node.body)
            yield from top_level_statements(node.orelse)
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            yield from top_level_statements(node.body)
        elif isinstance(node, ast.Try) or type(node).__name__ == "TryStar":
            yield from top_level_statements(node.body)
            for handler in node.handlers:
                yield from top_level_statements(handler.body)
            yield from top_level_statements(node.orelse)
            yield from top_level_statements(node.finalbody)


def target_names(target):
    if isinstance(target, ast.Name):
        yield target.id
    elif isinstance(target, (ast.Tuple, ast.List)):
        for elt in target.elts:
            yield from target_names(elt)
    elif isinstance(target, ast.Starred):
        yield from target_names(target.value)


def literal_strings(node):
    if isinstance(node, (ast.List, ast.Tuple)):
        return [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return []


def bound_names(source, module, is_package):
    """(defined tokens, re-exported names) of one module's source; `*verl.x` for `from verl.x import *`."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return ["!syntax-error"], []
    defined, imported_internal, imported_other, dunder_all = {}, set(), set(), []
    for node in top_level_statements(tree.body):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            defined[node.name] = node.name + signature(node.args, drop_self=False)
        elif isinstance(node, ast.ClassDef):
            token = node.name
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name == "__init__":
                    token += signature(item.args, drop_self=True)
            defined[node.name] = token
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for name in target_names(target):
                    if name == "__all__" and node.value is not None:
                        dunder_all += literal_strings(node.value)
                    defined.setdefault(name, name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                bound = alias.asname or alias.name.split(".")[0]
                internal = alias.name.split(".")[0] in PACKAGE_ROOTS
                (imported_internal if internal else imported_other).add(bound)
        elif isinstance(node, ast.ImportFrom):
            internal = is_verl_import(node)
            for alias in node.names:
                if alias.name == "*" and internal:
                    imported_internal.add("*" + absolute_module(node, module, is_package))
                elif alias.name != "*":
                    (imported_internal if internal else imported_other).add(alias.asname or alias.name)
    public_all = set(dunder_all)
    defined_tokens = [tok for name, tok in defined.items()
                      if (not name.startswith("_") or name in public_all) and name != "__all__"]
    reexported = {n for n in imported_internal if not n.startswith("_") or n in public_all}
    reexported |= {n for n in imported_other if n in public_all}
    reexported -= set(defined)
    return sorted(defined_tokens), sorted(reexported)


def release_revs():
    releases = yaml.safe_load(RELEASES_YAML.read_text())["releases"]
    return [(r, MAIN_REV if r == "main" else r) for r in releases]


def release_runs(indices, releases):
    """'v0.4.0..v0.6.1,main' for sorted release indices."""
    runs, start = [], indices[0]
    for prev, cur in zip(indices, indices[1:] + [None]):
        if cur != prev + 1:
            runs.append(releases[start] if start == prev else f"{releases[start]}..{releases[prev]}")
            start = cur
    return ",".join(runs)


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
                parsed[module, sha] = bound_names(sources[sha], module, is_package)
            defined, reexported = parsed[module, sha]
            line = (module, " ".join(defined), " ".join(reexported))
            seen_at.setdefault(line, []).append(index)
    header = ("# Python modules of each verl release and the names they bind; written by\n"
              "# scripts/extract_verl_modules.py (see its docstring). Columns, tab-separated:\n"
              "# module, releases, defined names (functions and classes with their parameters), re-exported names\n")
    body = [f"{m}\t{release_runs(seen_at[(m, d, r)], releases)}\t{d}\t{r}\n"
            for (m, d, r) in sorted(seen_at, key=lambda line: (line[0], seen_at[line][0]))]
    out, text = Path(args.out), header + "".join(body)
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
