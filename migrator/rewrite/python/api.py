"""Uses of verl's Python API that reach a function or class through an import, with the stdlib `ast`.

- keyword renames at call sites: only where the called name provably is the table's function (imported
  by name from its module, or `module_alias.func(...)` with the alias bound to that module; a name the
  file also binds itself, `def compute_policy_loss(...)`, is never resolved), and in
  `super().__init__(...)` of a subclass;
- signature changes a person must make (`signature-change`): a call passing the dropped keyword, or a
  subclass overriding the method with the dropped parameter, reported at that spot with the hint;
- symbols renamed, moved or removed, spelt `module_alias.Name`: renamed in place when the name stays in
  the module the alias ends up naming, reported otherwise.
Imports themselves are the locator's (`locator.Locator.import_from`). `ast` gives exact byte columns for
names, keywords and parameters; a file it cannot place exactly (a non-UTF-8 coding cookie, a lone `\\r`)
is left to the import rewrites alone.
"""

from __future__ import annotations

import ast

from migrator.edits import Edit, Finding
from migrator.mapping import MappingSet
from migrator.mapping.per_set import per_table_set
from migrator.mapping.spelled_names import api_groups
from migrator.prefilter import Prefilter
from migrator.rewrite.python.parsed import line_starts, lone_cr, other_encoding, parse, walk_tree
from migrator.rewrite.python.statements import walk_statements

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


@per_table_set  # asked for every Python file: composing it walks every step of the tables
def _api_modules(maps: MappingSet) -> frozenset[str]:
    return frozenset(maps.api_modules())


def locate_api(source: bytes, maps: MappingSet) -> tuple[list[Edit], list[Finding]]:
    modules = _api_modules(maps)
    if not modules or not _may_use(source, maps):
        return [], []
    if other_encoding(source) or lone_cr(source):
        return [], []
    try:
        tree = parse(source)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return [], []
    bindings = _Bindings(tree, modules)
    # A name imported from a module (`from verl.x import f`) matters to the walk only in calls and class
    # bases, where keyword and signature entries apply; its moves are the import's (the front-ends').
    if not bindings.modules and not any(maps.changes_calls(ref) for ref in bindings.names.values()):
        return [], []
    walker = _ApiWalker(source, maps, bindings)
    walker.walk(tree)
    return walker.edits, walker.findings


def _targets(node) -> list:
    """What a statement assigns to (the names it binds, besides imports and definitions)."""
    if isinstance(node, ast.Assign):
        return node.targets
    if isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor)):
        return [node.target]
    if isinstance(node, (ast.With, ast.AsyncWith)):
        return [item.optional_vars for item in node.items if item.optional_vars is not None]
    if isinstance(node, ast.ExceptHandler) and node.name:
        return [ast.Name(node.name)]
    return []


def _may_use(source: bytes, maps: MappingSet) -> bool:
    """Some entry's module and the name it changes are spelt, each as whole names (`import a.b.c`,
    `from a.b import c` and `c.Name` all spell `a`, `b`, `c` and `Name`): checked before any parse.
    One search per composed table set, built once per process."""
    return _api_check(maps)(source)


@per_table_set
def _api_check(maps: MappingSet) -> Prefilter:
    return Prefilter((), api_groups(maps.entries()))


class _Bindings:
    """What the file's names mean: module aliases and names imported from verl modules, minus every name
    the file also binds some other way (a local def, an assignment, another import)."""

    def __init__(self, tree: ast.Module, api_modules: set[str]):
        self.modules: dict[str, str] = {}
        self.names: dict[str, str] = {}
        bound_twice: set[str] = set()
        other: set[str] = set()

        def bind(table: dict, local: str, value: str) -> None:
            if local in table and table[local] != value or local in self.modules or local in self.names:
                bound_twice.add(local)
            table[local] = value

        def leads_to_api(module: str) -> bool:
            return any(m == module or m.startswith(module + ".") for m in api_modules)

        for node in walk_statements(tree.body):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if not leads_to_api(alias.name):
                        root = alias.name.split(".")[0]
                        if alias.asname or not any(m.split(".")[0] == root for m in api_modules):
                            other.add(alias.asname or root)  # `import verl.x` binds the same `verl`
                    elif alias.asname:
                        bind(self.modules, alias.asname, alias.name)
                    else:
                        root = alias.name.split(".")[0]
                        if self.modules.get(root, root) == root:
                            self.modules[root] = root
                        else:
                            bound_twice.add(root)
            elif isinstance(node, ast.ImportFrom):
                if node.level or not node.module:
                    other.update(a.asname or a.name for a in node.names)
                    continue
                for alias in node.names:
                    if alias.name == "*":
                        continue
                    full = f"{node.module}.{alias.name}"
                    if leads_to_api(full):
                        bind(self.modules, alias.asname or alias.name, full)
                    elif node.module in api_modules:
                        bind(self.names, alias.asname or alias.name, f"{node.module}:{alias.name}")
                    else:
                        other.add(alias.asname or alias.name)
            elif isinstance(node, (*_FUNCTIONS, ast.ClassDef)):
                other.add(node.name)
            else:
                for target in _targets(node):
                    other.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
        for name in bound_twice | other:
            self.modules.pop(name, None)
            self.names.pop(name, None)

    def resolve(self, node) -> tuple[str, bool] | None:
        """(`module:name` the expression names, whether it is an attribute of a module alias), or None."""
        if isinstance(node, ast.Name):
            ref = self.names.get(node.id)
            return (ref, False) if ref else None
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name) or node.id not in self.modules or not parts:
            return None
        parts.reverse()
        module = ".".join([self.modules[node.id], *parts[:-1]])
        return f"{module}:{parts[-1]}", True


class _ApiWalker:
    def __init__(self, source: bytes, maps: MappingSet, bindings: _Bindings):
        self.src = source
        self.maps = maps
        self.bindings = bindings
        self.edits: list[Edit] = []
        self.findings: list[Finding] = []
        self.line_starts = line_starts(source)

    def offset(self, line: int, col: int) -> int:
        return self.line_starts[line - 1] + col

    def spelled(self, start: int, text: str) -> tuple[int, int] | None:
        raw = text.encode()
        return (start, start + len(raw)) if self.src[start:start + len(raw)] == raw else None

    def walk(self, tree: ast.Module) -> None:
        for node in walk_tree(tree):
            if isinstance(node, ast.Call):
                found = self.bindings.resolve(node.func)
                if found is not None:
                    self.call(found[0], node)
            elif isinstance(node, ast.ClassDef):
                self.class_def(node)
            elif isinstance(node, ast.Attribute):
                found = self.bindings.resolve(node)
                if found is not None and found[1]:
                    self.module_attribute(found[0], node)

    def call(self, ref: str, node: ast.Call) -> None:
        # a `callback` entry is about users' functions verl calls (python.callbacks), not calls of verl's
        signatures = [e for e in self.maps.signature_changes(ref) if e.method is None and e.callback is None]
        for keyword in node.keywords:
            if keyword.arg is None:
                continue
            span = self.spelled(self.offset(keyword.lineno, keyword.col_offset), keyword.arg)
            if span is None:
                continue
            change = self.maps.keyword(ref, keyword.arg)
            if change is not None:
                self.edits.append(Edit(*span, change.new.encode(), "keyword-rename",
                                       f"{ref}({keyword.arg}=) -> {change.new}=", change.prs))
            for entry in signatures:
                if entry.param == keyword.arg:
                    self.findings.append(Finding(span[0], "signature-change", f"{ref}(..., {keyword.arg}=...): "
                                                 f"{entry.param} was removed; change this call by hand",
                                                 entry.hint, (entry.pr,)))

    def class_def(self, node: ast.ClassDef) -> None:
        """A subclass of a table's class: its overrides and its `super().__init__(...)` call."""
        for base in node.bases:
            found = self.bindings.resolve(base)
            if found is None:
                continue
            ref = found[0]
            methods = {item.name: item for item in node.body if isinstance(item, _FUNCTIONS)}
            for entry in self.maps.signature_changes(ref):
                method = methods.get(entry.method or "")
                if method is None:
                    continue
                args = method.args
                for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs):
                    if arg.arg == entry.param:
                        self.findings.append(Finding(
                            self.offset(arg.lineno, arg.col_offset), "signature-change",
                            f"{node.name}.{entry.method} overrides {entry.function}, whose parameter {entry.param} "
                            "is gone; change this method by hand", entry.hint, (entry.pr,)))
            init = methods.get("__init__")
            for call in ast.walk(init) if init is not None else ():
                if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and \
                        call.func.attr == "__init__" and isinstance(call.func.value, ast.Call) and \
                        isinstance(call.func.value.func, ast.Name) and call.func.value.func.id == "super":
                    self.call(ref, call)
            return

    def module_attribute(self, ref: str, node: ast.Attribute) -> None:
        """`alias.Name` where alias is a module: a symbol entry moved, renamed or removed Name."""
        change = self.maps.symbol(ref)
        if change is None or not change.explicit:
            return  # a module-level change: the locator rewrites the import and its references
        start = self.offset(node.end_lineno, node.end_col_offset) - len(node.attr.encode())
        span = self.spelled(start, node.attr)
        if span is None:
            return
        old_module, _, old_name = ref.rpartition(":")
        if change.new is None:
            self.findings.append(Finding(start, "symbol-removal", f"{old_module}.{old_name} was removed; change "
                                         "this code by hand", change.hint, change.prs))
            return
        new_module, _, new_name = change.new.rpartition(":")
        module_change = self.maps.module(old_module)
        alias_names = module_change.new if module_change is not None else old_module
        if new_module == alias_names:
            if new_name != old_name:
                self.edits.append(Edit(*span, new_name.encode(), "symbol-move",
                                       f"{old_module}.{old_name} -> {new_module}.{new_name}", change.prs))
            return
        self.findings.append(Finding(start, "symbol-move", f"{old_module}.{old_name} moved to {new_module}.{new_name}; "
                                     f"import it from {new_module}", change.hint, change.prs))
