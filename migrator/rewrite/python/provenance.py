"""Which names of a Python file provably hold verl's config, and which node of it.

A config key spelt in code (`config.reward_model.enable`, `cfg.get("x")`) is renamed only where the
object is verl's config; a program that reads its own old-layout YAML breaks when its keys are moved.
Evidence, followed through simple assignments and calls within the file:
- the parameter of an `@hydra.main` whose `config_path` is verl's own config tree (a verl checkout's
  `verl/trainer/config`, or `pkg://verl.trainer.config`); a fork's own `config_path="config"` is not;
- a parameter annotated with a verl config class (`AlgoConfig` holds `algorithm`);
- `self.config` in a subclass of a verl trainer or worker, and its `__init__`'s `config` parameter;
- a name handed to verl code that reads the whole config (`run_ppo(config)`, `RayPPOTrainer(config)`);
- a parameter of a function of this file that every call in the file passes such an object.
A name assigned more than once (or by anything but `x = <verl config>`) is unknown. Nothing here
edits: `config_access` asks `node_of` and decides.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from migrator.layout import verl_layout
from migrator.mapping.config_objects import ConfigObjects
from migrator.rewrite.python.parsed import child_nodes, walk_tree

_ROUNDS = 6  # call-graph propagation: a chain of calls main -> run_ppo -> TaskRunner.run is 2 rounds


@dataclass(frozen=True)
class ConfigNode:
    """A value that is verl's config at `prefix` (() = the whole config) of the config `config_name`
    (None: main_ppo's); `origin`: where it was bound (`x = config.reward_model`), as (start, end) bytes."""

    prefix: tuple[str, ...]
    config_name: str | None = None
    origin: tuple[int, int] | None = None


Function = ast.FunctionDef | ast.AsyncFunctionDef


class Provenance:
    """The verl-config names of one parsed file, per function (`names`) and per class (`holders`)."""

    def __init__(self, tree: ast.Module, line_starts: list[int], objects: ConfigObjects | None = None,
                 nodes: dict[type, list] | None = None):
        self.line_starts = line_starts
        self.objects = objects if objects is not None else ConfigObjects()  # verl's objects that carry its config (mappings/verl/config-objects.yaml)
        # One walk over the whole tree for what is file-wide: imports, classes, calls, names read.
        self._nodes = nodes if nodes is not None else _nodes_by_kind(tree)
        self.imports = _imported_names(self._nodes)
        self.functions: list[tuple[Function, ast.ClassDef | None]] = list(_functions(tree.body, None))
        self.holders: dict[int, ConfigNode] = {}  # id(ClassDef) -> what its `self.config` holds
        self.names: dict[int, dict[str, ConfigNode]] = {}  # id(function) -> name -> node
        self._assignments: dict[int, tuple] = {}
        self._calls: dict[int, list[ast.Call]] = {}
        self._fixed: dict[int, tuple[dict[str, ConfigNode], frozenset[str]]] = {}  # id(function) -> seeds, taken
        self._targets: dict[int, tuple | None] = {}  # id(call) -> (target, its parameters the call fills)
        for function, _ in self.functions:  # each node of a function's own body once
            self._assignments[id(function)], self._calls[id(function)] = _assignments(function)
        self._tree = tree
        self._holders()
        self._propagate()

    # -- queries -------------------------------------------------------------------------------------
    def node_of(self, scopes: list[Function], cls: ast.ClassDef | None, names: list[str]) -> tuple[int, ConfigNode] | None:
        """For an access `names[0].names[1]...` inside `scopes` (innermost last; `cls` holds the innermost
        one): (how many names after the root the object spans, its node), or None when unknown."""
        if not scopes:
            return None
        inner = scopes[-1]
        if names[0] == "self" and len(names) > 1 and names[1] == "config" and cls is not None \
                and _is_method(inner) and id(cls) in self.holders:
            return 1, self.holders[id(cls)]
        for scope in reversed(scopes):
            env = self.names.get(id(scope), {})
            if names[0] in env:
                return 0, env[names[0]]
            assigned = self._assignments.get(id(scope))  # a lambda assigns nothing
            if (assigned is not None and names[0] in assigned[0]) or names[0] in _params(scope):
                return None  # bound here, to something unknown
        return None

    def qualified(self, node) -> str | None:
        """`RayPPOTrainer` -> `verl.trainer.ppo.ray_trainer.RayPPOTrainer` through the file's imports."""
        names = _dotted(node)
        if names is None or names[0] not in self.imports:
            return None
        return ".".join([self.imports[names[0]], *names[1:]])

    # -- analysis ------------------------------------------------------------------------------------
    def _holders(self) -> None:
        classes = self._nodes.get(ast.ClassDef, [])
        for _ in range(3):  # a local subclass of a local subclass of a verl class
            for cls in classes:
                if id(cls) in self.holders:
                    continue
                for base in cls.bases:
                    held = self.objects.holders.get(self.qualified(base) or "")
                    local = next((c for c in classes if isinstance(base, ast.Name) and c.name == base.id
                                  and id(c) in self.holders), None)
                    if held is None and local is not None:
                        held = self.holders[id(local)].prefix
                    if held is not None and _assigns_config_plainly(cls):
                        self.holders[id(cls)] = ConfigNode(held)
                        break

    def _seeds(self, function: Function, cls: ast.ClassDef | None) -> dict[str, ConfigNode]:
        seeds: dict[str, ConfigNode] = {}
        params = _params(function)
        for decorator in function.decorator_list:
            if isinstance(decorator, ast.Call) and (self.qualified(decorator.func) == "hydra.main" or (
                    _dotted(decorator.func) == ["hydra", "main"] and "hydra" not in self.imports)):
                path, name = _keyword_string(decorator, "config_path"), _keyword_string(decorator, "config_name")
                # `@hydra.main(config_path=...)` that is verl's own config tree.
                if path is not None and verl_layout().config_dir_pattern.fullmatch(path) and params:
                    seeds[params[0]] = ConfigNode((), name)
        classes_package = verl_layout().config_classes_package + "."
        for arg in function.args.posonlyargs + function.args.args + function.args.kwonlyargs:
            annotation = self.qualified(arg.annotation) if arg.annotation is not None else None
            classes = self.objects.classes
            if annotation and annotation.startswith(classes_package) and annotation.rsplit(".", 1)[-1] in classes:
                seeds[arg.arg] = ConfigNode(classes[annotation.rsplit(".", 1)[-1]])
        if cls is not None and id(cls) in self.holders and function.name == "__init__" and "config" in params:
            seeds["config"] = self.holders[id(cls)]
        return seeds

    def _propagate(self) -> None:
        by_name: dict[str, list[tuple[Function, ast.ClassDef | None]]] = {}
        for function, cls in self.functions:
            by_name.setdefault(function.name, []).append((function, cls))
        # A function also used as a value (a callback, `hydra.main(...)(f)`) has callers we cannot see.
        called = {id(n.func) for n in self._nodes.get(ast.Call, ())}
        escaped = {n.id for n in self._nodes.get(ast.Name, ()) if isinstance(n.ctx, ast.Load)
                   and n.id in by_name and id(n) not in called}
        by_name = {name: targets for name, targets in by_name.items() if name not in escaped}
        outside = [n for n in _own_nodes(self._tree) if isinstance(n, ast.Call)]  # calls outside every function
        from_calls: dict[int, dict[str, ConfigNode]] = {}
        for _ in range(_ROUNDS):
            before = {k: dict(v) for k, v in self.names.items()}
            calls: dict[tuple[int, str], list[ConfigNode | None]] = {}
            self._record_calls(outside, None, {}, by_name, calls)
            for function, cls in self.functions:
                env = self._environment(function, cls, from_calls.get(id(function), {}))
                self.names[id(function)] = env
                self._record_calls(self._calls[id(function)], function, env, by_name, calls, cls)
            from_calls = {}
            for (fid, param), nodes in calls.items():
                if nodes and all(n is not None for n in nodes) and len(set(nodes)) == 1:
                    from_calls.setdefault(fid, {})[param] = nodes[0]  # type: ignore[assignment]
            if self.names == before:
                break

    def _environment(self, function: Function, cls, from_calls: dict[str, ConfigNode]) -> dict[str, ConfigNode]:
        assigned, counts, values = self._assignments[id(function)]
        params = set(_params(function))
        fixed = self._fixed.get(id(function))
        if fixed is None:  # what does not change between rounds: the seeds and the names verl code takes
            fixed = self._fixed[id(function)] = (self._seeds(function, cls), self._taken_by_verl(function))
        seeds, taken = fixed
        env = {n: node for n, node in {**from_calls, **seeds}.items() if n in params and n not in assigned}
        for name in params - assigned:  # a name handed to verl code that reads the whole config
            if name not in env and name in taken:
                env[name] = ConfigNode(())
        for name, value in values.items():
            if counts.get(name) == 1 and name not in params:
                found = self._value_node(value, [function], cls, env)
                if found is not None:
                    env[name] = found
        return env

    def _value_node(self, value, scopes, cls, env) -> ConfigNode | None:
        """The node of `x = <value>` when value is a verl config (an attribute chain of one)."""
        names = _dotted(value)
        if names is None:
            return None
        if names[0] in env:
            base = 0, env[names[0]]
        else:
            base = self.node_of(scopes, cls, names) if names[0] == "self" else None
        if base is None:
            return None
        consumed, node = base
        start = self.line_starts[value.lineno - 1] + value.col_offset
        end = self.line_starts[value.end_lineno - 1] + value.end_col_offset
        return ConfigNode(node.prefix + tuple(names[1 + consumed:]), node.config_name, (start, end))

    def _taken_by_verl(self, function: Function) -> frozenset[str]:
        """The names the function hands to verl code that reads the whole config (`run_ppo(config)`)."""
        taken = set()
        for call in self._calls[id(function)]:
            target = self.qualified(call.func)
            if target not in self.objects.takers:
                continue
            arg = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "config"), None)
            if isinstance(arg, ast.Name):
                taken.add(arg.id)
        return frozenset(taken)

    def _record_calls(self, found, function, env, by_name, calls, cls=None) -> None:
        """Each call of a function of this file (`f(x)`, `obj.f(x)`, `obj.f.remote(x)`): the node of each
        argument, None when unknown; a name defined twice in the file is not followed."""
        for call in found:
            if id(call) not in self._targets:  # the same in every round
                self._targets[id(call)] = _call_target(call, by_name)
            resolved = self._targets[id(call)]
            if resolved is None:
                continue
            target, params = resolved
            for index, param in enumerate(params):
                arg = call.args[index] if index < len(call.args) and not any(
                    isinstance(a, ast.Starred) for a in call.args[:index + 1]) else next(
                    (k.value for k in call.keywords if k.arg == param), None)
                if arg is None:
                    continue
                node = self._value_node(arg, [function], cls, env) if function is not None else None
                calls.setdefault((id(target), param), []).append(node)


def _call_target(call: ast.Call, by_name) -> tuple | None:
    """(the one function of this file a call calls, the parameters its arguments fill), or None."""
    names = _dotted(call.func)
    if names is None:
        return None
    if names[-1] == "remote" and len(names) > 1:
        names = names[:-1]
    targets = by_name.get(names[-1], [])
    if len(targets) != 1:
        return None
    target, target_cls = targets[0]
    params = _params(target)
    if target_cls is not None and len(names) > 1 and params and params[0] in ("self", "cls"):
        params = params[1:]
    elif len(names) > 1:
        return None  # `obj.f()` of a plain function: not this one
    return target, params


class _Nothing:
    """The provenance of a file that cannot hold verl's config: no name is known to."""

    @staticmethod
    def node_of(scopes, cls, names) -> None:
        return None


NOTHING = _Nothing()


def provenance_of(tree: ast.Module, source: bytes, line_starts: list[int], objects: ConfigObjects | None = None):
    """`Provenance(...)` where the file can hold verl's config, else `NOTHING`: every piece of evidence is a
    name bound by an import of verl's packages (the objects' modules, its config classes) or an
    `@hydra.main`, so a file that spells neither (a launcher that runs verl in a child process) has none,
    and neither has one whose imports bind none of those objects and no config class."""
    objects = objects if objects is not None else ConfigObjects()
    roots = {name.split(".")[0] for name in (*objects.takers, *objects.holders)} \
        | {verl_layout().config_classes_package.split(".")[0], "hydra"}
    if not any(root.encode() in source for root in roots):
        return NOTHING
    nodes = _nodes_by_kind(tree)
    if b"hydra" not in source and not _binds_evidence(_imported_names(nodes), source, objects):
        return NOTHING
    return Provenance(tree, line_starts, objects, nodes)


def _binds_evidence(imports: dict[str, str], source: bytes, objects: ConfigObjects) -> bool:
    """Can a name these imports bind be evidence? Every seed is a name the file's imports qualify
    (`Provenance.qualified`: the bound name, then the attributes after it): a taker or holder
    (`run_ppo(config)`, `class W(ActorRolloutRefWorker)`) is one the binding is, or a module or class above
    it; a config class (`config: ActorConfig`) lies in verl's config-classes package and its name is
    spelt in the file (in the annotation or in the import that binds it). Without a seed no name of the
    file is ever verl's config (`_propagate` only carries seeds), and `@hydra.main` is told by its bytes."""
    objects_above = {".".join(parts[:i]) for name in (*objects.takers, *objects.holders)
                     for parts in [name.split(".")] for i in range(1, len(parts) + 1)}
    package = verl_layout().config_classes_package
    spells_class = any(name.encode() in source for name in objects.classes)
    for bound in imports.values():
        if bound in objects_above:
            return True
        if spells_class and (bound == package or bound.startswith(package + ".") or package.startswith(bound + ".")):
            return True
    return False


def _nodes_by_kind(tree: ast.Module) -> dict[type, list]:
    nodes: dict[type, list] = {}
    for node in walk_tree(tree):
        nodes.setdefault(type(node), []).append(node)
    return nodes


def _functions(body, cls):
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node, cls
            yield from _functions(node.body, None)
        elif isinstance(node, ast.ClassDef):
            yield from _functions(node.body, node)
        else:
            for field in ("body", "orelse", "finalbody", "handlers", "cases"):
                inner = getattr(node, field, None)
                if isinstance(inner, list):
                    yield from _functions(inner, cls)


def _own_nodes(function: Function | ast.Module):
    """The nodes of a function's (or module's) body, not entering nested functions, classes or lambdas."""
    stack = list(function.body)
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        stack.extend(child_nodes(node))


_DEFINES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_DECLARES = (ast.Global, ast.Nonlocal)
_STORES = (ast.Store, ast.Del)


def _assignments(function: Function) -> tuple[tuple[set[str], dict[str, int], dict[str, ast.expr]], list[ast.Call]]:
    """((every name the body binds, how many times it binds each, the value of a plain `x = value`),
    the calls in the body)."""
    counts: dict[str, int] = {}
    values: dict[str, ast.expr] = {}
    calls: list[ast.Call] = []
    for node in _own_nodes(function):
        kind = type(node)  # parsed trees hold the ast classes themselves, never subclasses
        if kind is ast.Call:
            calls.append(node)
            continue
        if kind is ast.Name:
            if type(node.ctx) not in _STORES:
                continue
            bound = [node.id]
        elif kind in _DEFINES:
            bound = [node.name, node.name]  # never a plain single binding
        elif kind in _DECLARES:
            bound = [*node.names, *node.names]
        elif kind is ast.alias:
            name = (node.asname or node.name).split(".")[0]
            bound = [name, name]
        else:
            if kind is ast.Assign and len(node.targets) == 1 and type(node.targets[0]) is ast.Name:
                values[node.targets[0].id] = node.value
            continue
        for name in bound:
            counts[name] = counts.get(name, 0) + 1
    values = {name: value for name, value in values.items() if counts.get(name) == 1}
    return (set(counts), counts, values), calls


def _params(function: Function) -> list[str]:
    args = function.args
    names = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]
    names += [a.arg for a in (args.vararg, args.kwarg) if a is not None]
    return names


def _is_method(function: Function) -> bool:
    params = _params(function)
    return bool(params) and params[0] == "self"


def _assigns_config_plainly(cls: ast.ClassDef) -> bool:  # only for classes based on a verl class
    """Does the class set `self.config` only from `__init__`'s own parameter (`self.config = config`)?
    Anything else (`self.config = OmegaConf.load(...)`, `mine = load(); self.config = mine`, a set in
    another method) may replace verl's config by the program's own."""
    functions = [n for n in _descendants(cls.body) if type(n) is ast.FunctionDef or type(n) is ast.AsyncFunctionDef]
    for function in [*functions, cls]:
        body = function.body if function is not cls else [n for n in cls.body if not isinstance(
            n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        params = set(_params(function)) if function is not cls else set()
        nodes = _descendants(body)
        rebound = {t.id for n in nodes if type(n) is ast.Assign for t in n.targets if type(t) is ast.Name}
        for node in nodes:
            kind = type(node)
            targets = node.targets if kind is ast.Assign else [node.target] if kind is ast.AnnAssign or \
                kind is ast.AugAssign else []
            for target in targets:
                if _dotted(target) != ["self", "config"]:
                    continue
                plain = kind is ast.Assign and isinstance(node.value, ast.Name) and \
                    getattr(function, "name", None) == "__init__" and node.value.id in params and \
                    node.value.id not in rebound
                if not plain:
                    return False
    return True


def _descendants(body: list) -> list:
    """Every node under the statements of `body`, nested functions and classes included (no expression
    contexts: no test here reads them)."""
    nodes = list(body)
    at = 0
    while at < len(nodes):
        nodes.extend(child_nodes(nodes[at]))
        at += 1
    return nodes


def _imported_names(nodes: dict[type, list]) -> dict[str, str]:
    """Local name -> the dotted name it is bound to, for every import in the file; a name bound to two
    different things is dropped."""
    found: dict[str, str | None] = {}

    def bind(local: str, target: str) -> None:
        found[local] = target if found.get(local, target) == target else None

    for node in (*nodes.get(ast.Import, ()), *nodes.get(ast.ImportFrom, ())):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    bind(alias.asname, alias.name)
                else:
                    bind(alias.name.split(".")[0], alias.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                if alias.name != "*":
                    bind(alias.asname or alias.name, f"{node.module}.{alias.name}")
    return {k: v for k, v in found.items() if v is not None}


def _keyword_string(call: ast.Call, name: str) -> str | None:
    value = next((k.value for k in call.keywords if k.arg == name), None)
    return value.value if isinstance(value, ast.Constant) and isinstance(value.value, str) else None


def _dotted(node) -> list[str] | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return parts[::-1]
