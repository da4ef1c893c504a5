"""Measure the Python API migration (maintainer tool).

    python scripts/measure_python_api.py [--corpus DIR]

1. For every module present at one release and gone at the next (the shipped module facts), migrate
   `import <old>` and `from <parent> import <last>` from the release before to the release of the
   change: each must be rewritten to a module that exists there, or reported at its line. Modules a
   `module-no-action` entry names are counted apart.
2. With --corpus (users' Python files; never committed), migrate a copy to `--to` (default v0.9.0) and
   count the verl imports of the result that neither resolve (the module exists at the target and binds
   the name, per the facts) nor are reported, and list what the reports are (by rule code).
"""

import argparse
import ast
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from migrator.fileprocess import process_file  # noqa: E402
from migrator.mapping import compose, load_builtin  # noqa: E402
from migrator.mapping.kinds.module import ModuleNoAction  # noqa: E402
from migrator.mapping.modulefacts import read_module_facts  # noqa: E402
from migrator.rewrite.python.resolution import import_roots  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
FACTS = ROOT / "mappings" / "verl" / "facts" / "modules" / "verl.modules"


def imported_modules(source: bytes, bound: bool = False, roots=("verl", "recipe")) -> list[tuple]:
    """(line, module, name or None) of every absolute import of verl or recipe (+ the local name bound and
    the lines a finding about it may name: the statement's and the name's)."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name, None, a.asname or a.name, {node.lineno, a.lineno}) for a in node.names
                    if a.name.split(".")[0] in roots]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module \
                and node.module.split(".")[0] in roots:
            out += [(node.lineno, node.module, a.name, a.asname or a.name, {node.lineno, a.lineno})
                    for a in node.names if a.name != "*"]
    return out if bound else [row[:3] for row in out]


def resolves(modules, module: str, name: str | None) -> bool:
    if name is None:
        return module in modules
    return (module in modules and modules[module].reaches(name)) or f"{module}.{name}" in modules


def measure_removed(tables, facts, releases) -> None:
    total = ok = no_action = 0
    failures = []
    for before, after in zip(releases, releases[1:]):
        maps = compose(tables, before, after)
        skip = [e.old for e in maps.entries() if isinstance(e, ModuleNoAction)]
        for module in sorted(set(facts[before]) - set(facts[after])):
            if any(module == o or module.startswith(o + ".") for o in skip):
                no_action += 1
                continue
            parent, _, last = module.rpartition(".")
            forms = [f"import {module}\n"] + ([f"from {parent} import {last}\n"] if parent else [])
            for source in forms:
                total += 1
                result = process_file("user.py", "user.py", maps, data=source.encode())
                reported = any(f.line == 1 for f in result.findings)
                rewritten = result.status == "changed" and all(
                    resolves(facts[after], m, n) for _, m, n in imported_modules(result.after))
                if reported or rewritten:
                    ok += 1
                else:
                    failures.append(f"{before}->{after}: {source.strip()} ({result.status})")
    print(f"removed/renamed modules: {ok}/{total} import forms rewritten to an existing module or reported "
          f"({100.0 * ok / max(total, 1):.1f}%); {no_action} modules are module-no-action")
    for line in failures[:20]:
        print("  not handled:", line)


def measure_corpus(tables, facts, corpus: Path, to: str) -> None:
    maps = compose(tables, None, to)
    roots = tuple(import_roots(maps))  # recipe.* only while verl shipped recipe/ (the imports the tool checks)
    files = imports = silent = foreign = 0
    codes = {}
    ever = set().union(*(set(modules) for modules in facts.values()))
    misses = []
    for path in sorted(corpus.glob("**/*.py")):
        data = path.read_bytes()
        result = process_file(path.name, path.name, maps, data=data)
        after = result.after if result.status == "changed" else data
        try:
            found = imported_modules(after, bound=True, roots=roots)
            # edits may add lines (split imports): a finding names an original line; match by bound name
            reported = {row[3] for row in imported_modules(data, bound=True, roots=roots)
                        if row[4] & {f.line for f in result.findings}}
        except (SyntaxError, ValueError):
            continue
        files += 1
        for finding in result.findings:
            codes[finding.code] = codes.get(finding.code, 0) + 1
        for line, module, name, local, _ in found:
            imports += 1
            if resolves(facts[to], module, name):
                continue
            foreign += module not in ever  # a module verl never shipped: the user's fork adds it
            if local in reported:
                continue
            silent += 1
            misses.append(f"{path.name}:{line}: {module}{'' if name is None else ':' + name}")
    print(f"corpus: {files} files, {imports} verl imports after migrating to {to}; {foreign} name modules verl never "
          f"shipped (forks); {silent} neither resolve nor are reported ({100.0 * silent / max(imports, 1):.1f}%)")
    print("findings by code: " + ", ".join(f"{code} {n}" for code, n in sorted(codes.items())))
    for line in misses[:40]:
        print("  ", line)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path)
    parser.add_argument("--to", default="v0.9.0")
    args = parser.parse_args(argv)
    tables = load_builtin()
    releases = list(tables.releases)
    facts = read_module_facts(FACTS, releases)
    measure_removed(tables, facts, releases)
    if args.corpus:
        measure_corpus(tables, facts, args.corpus, args.to)
    return 0


if __name__ == "__main__":
    sys.exit(main())
