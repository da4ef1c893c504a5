"""The package's shape: imports flow one way (no cycles), no module over 600 lines, only `migrator/cli/`
imports `migrator.cli`, no module imports another's private name (`from x import _y`).

The import graph is read from the source with `ast`, not by importing: every import statement counts,
those inside functions and under `if TYPE_CHECKING:` too, and so do lazy imports by name
(`importlib.import_module`): its literal argument, an f-string prefix joined with the module's string
constants (`f"migrator.lint.{name}"` over `CHECK_MODULES`), and, in a module that calls it, every
string constant naming a module of the package (registries such as `REWRITERS` or `LAZY_COMMANDS`,
"module" or "module:attribute"), and a package that walks itself (`pkgutil.iter_modules(__path__)`,
a registry such as `migrator.mapping.kinds`) imports each of its modules. `import a.b` is an edge to
`a/b.py` or `a/b/__init__.py`;
`from a import b` to the submodule `a.b` when there is one, else to `a`. The parent packages that
Python imports on the way are not edges (else every package whose `__init__` imports its own
submodules would be a cycle).
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.helpers import REPO

PACKAGE_DIR = REPO / "migrator"
MAX_LINES = 600
CLI = "migrator.cli"
# The one place outside the commands that must start them: `python -m migrator`.
CLI_ENTRY_POINTS = frozenset({"migrator.__main__"})


def package_modules(package_dir: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every `.py` under `package_dir` (a package is its `__init__`)."""
    modules = {}
    for path in sorted(package_dir.rglob("*.py")):
        parts = path.relative_to(package_dir.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(parts)] = path
    return modules


def _known(name: str, modules: dict[str, Path]) -> str | None:
    """The module that `import name` loads last: the longest dotted prefix of `name` that is a module."""
    while name:
        if name in modules:
            return name
        name = name.rpartition(".")[0]
    return None


def _module_in_string(text: str, modules: dict[str, Path]) -> str | None:
    """The module a registry string names: "pkg.mod" or "pkg.mod:attribute"."""
    name = text.split(":", 1)[0]
    return name if name in modules else None


def _is_import_module(call: ast.Call) -> bool:
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    return name in ("import_module", "__import__")


def _from_base(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    parts = module.split(".") if is_package else module.split(".")[:-1]
    parts = parts[:len(parts) - (node.level - 1)]
    return ".".join(parts + ([node.module] if node.module else []))


def _walks_own_package(call: ast.Call) -> bool:
    """`pkgutil.iter_modules(__path__)` or `pkgutil.walk_packages(__path__, ...)`."""
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    first = call.args[0] if call.args else None
    return name in ("iter_modules", "walk_packages") and isinstance(first, ast.Name) and first.id == "__path__"


def module_imports(module: str, path: Path, modules: dict[str, Path]) -> dict[str, int]:
    """Modules of the package that `module` imports -> the line of the first such import."""
    tree = ast.parse(path.read_bytes(), filename=str(path))
    is_package = path.name == "__init__.py"
    found: dict[str, int] = {}

    def add(target: str | None, line: int) -> None:
        if target is not None and target != module:
            found.setdefault(target, line)

    strings: list[ast.Constant] = []
    prefixes: list[tuple[str, int]] = []
    calls_import_module = False
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(_known(alias.name, modules), node.lineno)
        elif isinstance(node, ast.ImportFrom):
            base = _from_base(module, is_package, node)
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                add(sub if sub in modules else _known(base, modules), node.lineno)
        elif isinstance(node, ast.Call) and is_package and _walks_own_package(node):
            for name in modules:
                if name.startswith(module + ".") and "." not in name[len(module) + 1:]:
                    add(name, node.lineno)
        elif isinstance(node, ast.Call) and _is_import_module(node):
            calls_import_module = True
            arg = node.args[0] if node.args else None
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                add(_known(arg.value, modules), node.lineno)
            elif isinstance(arg, ast.JoinedStr) and arg.values and isinstance(arg.values[0], ast.Constant):
                prefixes.append((str(arg.values[0].value), node.lineno))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            strings.append(node)
    if calls_import_module:
        for const in strings:
            add(_module_in_string(const.value, modules), const.lineno)
            for prefix, line in prefixes:
                add(_module_in_string(prefix + const.value, modules), line)
    return found


def import_graph(package_dir: Path) -> tuple[dict[str, dict[str, int]], dict[str, Path]]:
    """(module -> {imported module -> line}, module -> file) for the package at `package_dir`."""
    modules = package_modules(package_dir)
    return {name: module_imports(name, path, modules) for name, path in modules.items()}, modules


def cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """One cycle (as a path a -> ... -> a) per group of modules that reach each other."""
    return [_cycle_in(c, graph) for c in tangles(graph)]


def _reachable(graph: dict[str, dict[str, int]], start: str) -> set[str]:
    """Every module reachable from `start` by one import or more (`start` itself only through a cycle)."""
    seen: set[str] = set()
    todo = [start]
    while todo:
        for target in graph.get(todo.pop(), ()):
            if target not in seen:
                seen.add(target)
                todo.append(target)
    return seen


def tangles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The groups of modules that all reach each other (strongly connected components with a cycle)."""
    reach = {name: _reachable(graph, name) for name in graph}
    groups = {tuple(sorted(m for m in reach[name] if name in reach.get(m, ())))
              for name in graph if name in reach[name]}
    return sorted(list(group) for group in groups)


def _cycle_in(group: list[str], graph: dict[str, dict[str, int]]) -> list[str]:
    """A shortest cycle through the first module of a group that reach each other (breadth first)."""
    start, members = group[0], set(group)
    came_from: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for target in sorted(graph.get(node, ())):
                if target == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(came_from[path[-1]])
                    return [*reversed(path), start]
                if target in members and target not in came_from:
                    came_from[target] = node
                    following.append(target)
        frontier = following
    raise AssertionError(f"no cycle through {start} in {group}")


def describe_cycle(cycle: list[str], graph: dict[str, dict[str, int]], files: dict[str, Path]) -> str:
    root = files[cycle[0].split(".")[0]].parent.parent  # the directory holding the top-level package
    steps = [f"{a} -> {b} ({files[a].relative_to(root)}:{graph[a][b]})" for a, b in zip(cycle, cycle[1:])]
    return "cycle: " + "; ".join(steps)


def _in_cli(module: str) -> bool:
    return module == CLI or module.startswith(CLI + ".")


GRAPH, FILES = import_graph(PACKAGE_DIR)


def test_no_import_cycles():
    found = [f"{len(t)} modules import each other ({', '.join(t)}), e.g. "
             f"{describe_cycle(_cycle_in(t, GRAPH), GRAPH, FILES)}" for t in tangles(GRAPH)]
    print("\n".join(found) or "no import cycles")
    assert not found, "\n".join(found)


def test_no_module_over_the_line_limit():
    over = sorted(f"{name}: {n} lines (limit {MAX_LINES})" for name, path in FILES.items()
                  if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES)
    print("\n".join(over) or f"no module over {MAX_LINES} lines")
    assert not over, "\n".join(over)


def test_only_the_commands_import_the_cli():
    outside = sorted(f"{name} imports {target} (line {line})" for name, targets in GRAPH.items()
                     for target, line in targets.items()
                     if _in_cli(target) and not _in_cli(name) and name not in CLI_ENTRY_POINTS)
    print("\n".join(outside) or f"only {CLI} imports {CLI}")
    assert not outside, "\n".join(outside)


def test_the_graph_sees_real_imports():
    # Guards against a builder that finds nothing and so passes everything.
    assert "migrator.parallel" in GRAPH["migrator.engine"]  # a top-level import
    assert any(t.startswith("migrator.rewrite.shell") for t in GRAPH["migrator.rewrite"])  # the REWRITERS registry
    assert "migrator.lock" in GRAPH["migrator.engine"]  # an import inside a function
    assert "migrator.mapping.kinds.key" in GRAPH["migrator.mapping.kinds"]  # the registry that walks its package


# Importers whose private imports are another change's to remove (the mapping package's own restructuring).
PRIVATE_IMPORTS_PENDING = ("migrator.mapping",)


def private_imports(package_dir: Path) -> list[str]:
    """`from x import _y` of another module of the package (`import a as _a` binds a public name privately:
    not one). Names inside one module stay private to it; what another module needs is public."""
    found = []
    for module, path in package_modules(package_dir).items():
        for node in ast.walk(ast.parse(path.read_bytes(), filename=str(path))):
            if isinstance(node, ast.ImportFrom) and node.module != "__future__":
                for alias in node.names:
                    if alias.name.startswith("_") and not alias.name.startswith("__"):
                        found.append(f"{module} imports {alias.name} from {node.module} "
                                     f"({path.relative_to(package_dir.parent)}:{node.lineno})")
    return sorted(found)


def test_no_module_imports_a_private_name_of_another():
    found = [f for f in private_imports(PACKAGE_DIR) if not f.startswith(PRIVATE_IMPORTS_PENDING)]
    print("\n".join(found) or "no private imports")
    assert not found, "\n".join(found)


def test_a_private_import_is_found(tmp_path):
    package = _write_package(tmp_path, {
        "pkg/__init__.py": "from __future__ import annotations\n",
        "pkg/a.py": "def _helper():\n    pass\n",
        "pkg/b.py": "from pkg.a import _helper\nfrom pkg.a import public as _alias\n",
    })
    assert private_imports(package) == ["pkg.b imports _helper from pkg.a (pkg/b.py:1)"]


def _write_package(root: Path, files: dict[str, str]) -> Path:
    for relpath, text in files.items():
        path = root / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root / "pkg"


def test_a_cycle_through_lazy_and_relative_imports_is_found(tmp_path):
    package = _write_package(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/a.py": "def f():\n    from pkg.sub import b\n",  # inside a function, `from package import module`
        "pkg/sub/__init__.py": "",
        "pkg/sub/b.py": "from ..c import thing\n",  # relative
        "pkg/c.py": "import importlib\nCOMMANDS = {'x': 'pkg.a:run'}\n"  # a registry string
                    "def load(n):\n    return importlib.import_module(COMMANDS[n].split(':')[0])\n",
        "pkg/d.py": "import pkg.sub\nimport os\n",  # the package: its __init__; outside modules ignored
    })
    graph, files = import_graph(package)
    assert graph["pkg.a"] == {"pkg.sub.b": 2}
    assert graph["pkg.sub.b"] == {"pkg.c": 1}
    assert graph["pkg.c"] == {"pkg.a": 2}
    assert graph["pkg.d"] == {"pkg.sub": 1}
    (cycle,) = cycles(graph)
    assert cycle == ["pkg.a", "pkg.sub.b", "pkg.c", "pkg.a"]
    assert describe_cycle(cycle, graph, files).startswith("cycle: pkg.a -> pkg.sub.b (pkg/a.py:2)")


def test_an_f_string_registry_and_a_self_import_are_found(tmp_path):
    package = _write_package(tmp_path, {
        "pkg/__init__.py": "import importlib\nCHECKS = ('one',)\n"
                           "def load():\n    for n in CHECKS:\n        importlib.import_module(f'pkg.{n}')\n",
        "pkg/one.py": "from pkg import CHECKS\n",
        "pkg/two.py": "from pkg import two\n",
    })
    graph, _ = import_graph(package)
    assert graph["pkg"] == {"pkg.one": 5}
    assert sorted(cycles(graph)) == [["pkg", "pkg.one", "pkg"]]  # a module naming itself is no edge


def test_a_package_that_walks_its_modules_imports_them(tmp_path):
    package = _write_package(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/kinds/__init__.py": "import importlib, pkgutil\n"
                                 "for m in pkgutil.iter_modules(__path__):\n"
                                 "    importlib.import_module(f'{__name__}.{m.name}')\n",
        "pkg/kinds/one.py": "from pkg import kinds\n",
        "pkg/kinds/sub/__init__.py": "",
        "pkg/kinds/sub/deep.py": "",
    })
    graph, _ = import_graph(package)
    assert graph["pkg.kinds"] == {"pkg.kinds.one": 2, "pkg.kinds.sub": 2}
    assert cycles(graph) == [["pkg.kinds", "pkg.kinds.one", "pkg.kinds"]]


def test_an_acyclic_package_has_no_cycle(tmp_path):
    package = _write_package(tmp_path, {
        "pkg/__init__.py": "from pkg.a import x\n",
        "pkg/a.py": "from pkg.b import y\nx = y\n",
        "pkg/b.py": "y = 1\n",
    })
    graph, _ = import_graph(package)
    assert graph == {"pkg": {"pkg.a": 1}, "pkg.a": {"pkg.b": 1}, "pkg.b": {}}
    assert cycles(graph) == []
