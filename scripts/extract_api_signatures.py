"""Write the signatures and members of the verl names the tables move or rename keywords of (maintainer tool).

    python scripts/extract_api_signatures.py --repo GITDIR [--out FILE]

Which names: `migrator.mapping.apifacts.referenced_symbols` (symbol moves and renames, old and new;
functions with a renamed keyword; the public names of a moved module, under both modules). For each
release of mappings/verl/releases.yaml it reads the module that defines the name with `git cat-file`
and parses it with `ast` (verl's code is never imported or run): a function's parameters and, when
every `return` gives a tuple literal of one length, that length; a class's constructor parameters
(its `__init__`, a dataclass's fields, else a base's from verl) and its members (methods, class
attributes, `self.x` assignments, and its verl bases' members; public ones only, so a reader checks
only public names). A base from outside verl (but
`object`, `ABC`, `Generic`) or a `__getattr__` leaves what it would add unknown (`?`). Releases with
the same shape are written as one run. The format: migrator/mapping/apifacts.py.
"""

import ast
import sys
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from extract_verl_modules import python_blobs, read_blobs, release_revs  # noqa: E402
from facts_header import FACTS, all_releases, commit_of, header, writer_arguments  # noqa: E402

from migrator.derive.pysource import absolute_module, top_level_statements  # noqa: E402
from migrator.mapping import load_builtin  # noqa: E402
from migrator.mapping.apifacts import API_FACTS, UNKNOWN, referenced_symbols  # noqa: E402
from migrator.mapping.fields import split_symbol  # noqa: E402
from migrator.mapping.modulefacts import read_module_facts, release_runs  # noqa: E402
from migrator.rewrite.python.parsed import scope_nodes  # noqa: E402

EMPTY_BASES = {"object", "ABC", "abc.ABC", "Generic", "typing.Generic"}
DATACLASS = {"dataclass", "dataclasses.dataclass"}
OPEN_MEMBERS = {"__getattr__", "__getattribute__"}


def parameters(args: ast.arguments, drop_first: bool) -> str:
    positional = [*args.posonlyargs, *args.args]
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    tokens = [a.arg + ("=" if d is not None else "") for a, d in zip(positional, defaults)]
    only = len(args.posonlyargs)
    if drop_first and tokens:  # `self` / `cls`
        tokens, only = tokens[1:], max(only - 1, 0)
    if only:
        tokens.insert(only, "/")
    if args.vararg:
        tokens.append("*" + args.vararg.arg)
    elif args.kwonlyargs:
        tokens.append("*")
    tokens += [a.arg + ("=" if d is not None else "") for a, d in zip(args.kwonlyargs, args.kw_defaults)]
    if args.kwarg:
        tokens.append("**" + args.kwarg.arg)
    return "(" + ",".join(tokens) + ")"


def returned_arity(func) -> int | None:
    lengths = set()
    for node in scope_nodes(func.body):
        if isinstance(node, (ast.Yield, ast.YieldFrom)):
            return None
        if isinstance(node, ast.Return):
            value = node.value
            if not isinstance(value, ast.Tuple) or any(isinstance(e, ast.Starred) for e in value.elts):
                return None
            lengths.add(len(value.elts))
    return lengths.pop() if len(lengths) == 1 else None


def dotted(node) -> str | None:
    if isinstance(node, ast.Subscript):
        node = node.value
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(parts)])


class Release:
    """One release's modules, parsed when first asked for."""

    def __init__(self, blobs: dict, sources: dict):
        self.blobs, self.sources, self.trees = blobs, sources, {}

    def tree(self, module: str):
        if module not in self.blobs:
            return None
        if module not in self.trees:
            try:
                self.trees[module] = ast.parse(self.sources[self.blobs[module][0]])
            except (SyntaxError, ValueError):
                self.trees[module] = None
        return self.trees[module]

    def definition(self, module: str, name: str, depth: int = 0):
        """(module, the def or class node) that `module.name` is, following verl imports; None when unknown."""
        tree = self.tree(module)
        if tree is None or depth > 5:
            return None
        found = None
        for node in top_level_statements(tree.body):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
                found = (module, node)
            elif isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if (alias.asname or alias.name) == name and alias.name != "*":
                        source = absolute_module(node, module, self.blobs[module][1])
                        found = self.definition(source, alias.name, depth + 1) if source in self.blobs else None
        return found

    def resolve_base(self, module: str, expr) -> tuple | None:
        name = dotted(expr)
        if name is None:
            return None
        head, _, rest = name.partition(".")
        if not rest:
            return self.definition(module, head)
        for node in top_level_statements(self.tree(module).body):  # `import verl.x as m` then `m.Base`
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if (alias.asname or alias.name) == head and alias.name in self.blobs and "." not in rest:
                        return self.definition(alias.name, rest)
        return None

    def class_facts(self, module: str, node: ast.ClassDef, depth: int = 0) -> tuple[str, set | None]:
        """(constructor parameters or `?`, members or None when open)."""
        members: set | None = set()
        init, fields = UNKNOWN, []
        methods = {item.name: item for item in node.body if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))}
        for item in node.body:
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                members.add(item.name)
            elif isinstance(item, ast.Assign):
                members.update(t.id for t in item.targets if isinstance(t, ast.Name))
            elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                members.add(item.target.id)
                fields.append(item.target.id + ("=" if item.value is not None else ""))
        for method in methods.values():
            if method.args.args:
                this = method.args.args[0].arg
                for sub in ast.walk(method):
                    if isinstance(sub, ast.Attribute) and isinstance(sub.ctx, ast.Store) and \
                            isinstance(sub.value, ast.Name) and sub.value.id == this:
                        members.add(sub.attr)
        if OPEN_MEMBERS & set(methods):
            members = None
        inherited_init = None  # the first verl base's constructor (single inheritance's MRO)
        for base in node.bases:
            if dotted(base) in EMPTY_BASES:
                continue
            resolved = self.resolve_base(module, base) if depth < 8 else None
            if resolved is None or not isinstance(resolved[1], ast.ClassDef):
                members, inherited_init = None, inherited_init or UNKNOWN
                break
            base_init, base_members = self.class_facts(*resolved, depth + 1)
            members = None if members is None or base_members is None else members | base_members
            inherited_init = inherited_init or base_init
        if "__init__" in methods:
            init = parameters(methods["__init__"].args, drop_first=True)
        elif "__new__" in methods or node.keywords:
            init = UNKNOWN
        elif any(dotted(d.func if isinstance(d, ast.Call) else d) in DATACLASS for d in node.decorator_list):
            init = "(" + ",".join(fields) + ")" if not node.bases else UNKNOWN
        else:
            init = inherited_init or "()"
        return init, members

    def shape(self, symbol: str) -> dict | None:
        module, name = split_symbol(symbol)
        found = self.definition(module, name)
        if found is None:
            return None
        where, node = found
        if isinstance(node, ast.ClassDef):
            init, members = self.class_facts(where, node)
            public = UNKNOWN if members is None else " ".join(sorted(m for m in members if not m.startswith("_")))
            return {"class": init, "members": public}
        shape = {"function": parameters(node.args, drop_first=False)}
        arity = returned_arity(node)
        if arity is not None:
            shape["returns"] = arity
        return shape


def main(argv=None):
    args = writer_arguments(__doc__, FACTS / API_FACTS, argv)
    revs = release_revs()
    releases = [release for release, _ in revs]
    per_release = [python_blobs(args.repo, rev) for _, rev in revs]
    sources = read_blobs(args.repo, [sha for blobs in per_release for sha, _ in blobs.values()])
    module_names = read_module_facts(FACTS / "modules" / "verl.modules", releases)
    symbols = sorted(referenced_symbols(load_builtin(), module_names))
    loaded = [Release(blobs, sources) for blobs in per_release]
    out = {}
    for symbol in symbols:
        seen: dict[str, list[int]] = {}
        shapes = {}
        for index, release in enumerate(loaded):
            shape = release.shape(symbol)
            if shape is not None:
                key = repr(sorted(shape.items()))
                shapes[key] = shape
                seen.setdefault(key, []).append(index)
        out[symbol] = [{"releases": release_runs(indices, releases), **shapes[key]}
                       for key, indices in sorted(seen.items(), key=lambda item: item[1][0])]
    path = Path(args.out)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = header(__file__, all_releases(), commit_of(args.repo, "main")) + \
        "# The signatures and members of the names the tables move; format: migrator/mapping/apifacts.py\n" + \
        yaml.safe_dump({"symbols": out}, sort_keys=True, width=120)
    path.write_text(text, encoding="utf-8")
    known = sum(1 for runs in out.values() if runs)
    print(f"{path}: {len(out)} symbols ({known} found at some release), {path.stat().st_size} bytes", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
