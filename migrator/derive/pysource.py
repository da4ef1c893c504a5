"""What a Python source file binds, read with `ast` (verl's code is never imported or run).

Shared by `derive` (Python API changes between two revisions) and `scripts/extract_verl_modules.py`
(the shipped module facts): defined names with their signatures, and names re-exported from verl.
"""

from __future__ import annotations

import ast
import keyword

from migrator.layout import verl_layout

# verl's own test folders are not API (`verl/.../tests/`, `recipe/.../tests/`)
EXCLUDED_DIRS = {"tests", "test"}


def module_name(path: str) -> str | None:
    """Dotted module name of a tracked .py path, or None for files Python cannot import by name."""
    parts = path[:-3].split("/")
    if parts[-1] == "__init__":
        parts.pop()
    if any(p in EXCLUDED_DIRS for p in parts):
        return None
    if not all(p.isidentifier() and not keyword.iskeyword(p) for p in parts):
        return None
    return ".".join(parts)


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
    return (node.module or "").split(".")[0] in verl_layout().packages


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
    defined, reexported, _ = module_bindings(source, module, is_package)
    return defined, reexported


def module_bindings(source, module, is_package):
    """(defined tokens, re-exported names, private names): the public API as `bound_names` gives it, and
    the private names the module defines or imports from verl (`__getattr__` too), which a user's
    `from verl.x import _helper` still reaches. Names imported from outside verl (`torch`) are left out:
    they would grow the shipped facts by a third, and a user should import them from their package."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return ["!syntax-error"], [], []
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
                internal = alias.name.split(".")[0] in verl_layout().packages
                (imported_internal if internal else imported_other).add(bound)
        elif isinstance(node, ast.ImportFrom):
            internal = is_verl_import(node)
            for alias in node.names:
                if alias.name == "*" and internal:
                    imported_internal.add("*" + absolute_module(node, module, is_package))
                elif alias.name != "*":
                    (imported_internal if internal else imported_other).add(alias.asname or alias.name)
    public_all = set(dunder_all)
    public = {name for name in defined if (not name.startswith("_") or name in public_all) and name != "__all__"}
    reexported = {n for n in imported_internal if not n.startswith("_") or n in public_all}
    reexported |= {n for n in imported_other if n in public_all}
    reexported -= set(defined)
    others = (set(defined) | imported_internal) - public - reexported - {"__all__"}
    others = {n for n in others if not n.startswith("*")}
    return sorted(defined[n] for n in public), sorted(reexported), sorted(others)
