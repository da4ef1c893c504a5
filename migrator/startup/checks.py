"""verl's start-up checks as data (mappings/verl/startup-checks.yaml): load, validate, evaluate.

Hydra accepting a launch is not the end of it: verl then checks the composed config itself (batch sizes
against the GPU count, micro-batch settings, sampling temperature, rollout mode, LoRA rank) and stops, in
older releases after `ray.init`, in the workers after the job has its GPUs. The table says, per release,
which function runs which check in which order, the condition over config keys (migrator/startup/expr.py),
verl's message and the PRs behind it; `evaluate` judges one effective config (verdict/effective.py)
with them. A check whose inputs only run time knows is `unknown`, never guessed.

A check that `converts` a node is verl's `omega_conf_to_dataclass` on it (`_convert`): Hydra builds each
node under it that has a `_target_`, inner nodes first, so a key the class does not declare (the extracted
facts/config-dataclasses/<release>.yaml) stops verl, and so does a `__post_init__` check of the table's
`dataclasses` section, which reads the node's own keys as `self.key`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache
from pathlib import Path

from migrator.startup.conversion import HYDRA_KEYS, dataclasses_at
from migrator.startup.expr import ABSENT, UNKNOWN, Expression, ExpressionError, parse

TABLE = "startup-checks.yaml"
PHASES = ("main", "task-runner", "trainer-init", "worker")  # where verl runs a validator (see the table's header)
_FIELD = re.compile(r"\{([A-Za-z_][\w.]*)\}")


class ChecksError(ValueError):
    """A broken start-up checks table; str() names the file and line."""

    def __init__(self, file: str, line: int | None, message: str):
        super().__init__(f"{file}:{line}: {message}" if line else f"{file}: {message}")


@dataclass(frozen=True)
class Binding:
    name: str
    releases: frozenset[str]
    value: Expression
    line: int = 0


@dataclass(frozen=True)
class Fix:
    text: str | None = None
    key: str | None = None  # ... whose nearest passing values are `multiple_of` apart
    multiple_of: Expression | None = None


@dataclass(frozen=True)
class Check:
    id: str
    validator: str
    source: str  # verl file:function that runs it
    phases: Mapping[str, str]  # release -> phase
    releases: frozenset[str]
    fails: Expression
    message: str  # verl's message, `{name}` fields filled in when reported ("" for a bare assert)
    error: str  # the exception verl raises (DeprecationWarning: it only warns)
    severity: str = "error"  # "warning": verl starts anyway and ignores the value
    when: Expression | None = None
    let: tuple[tuple[str, Expression], ...] = ()
    fix: Fix = field(default_factory=Fix)
    prs: tuple[tuple[int, str], ...] = ()  # (PR, the release it reached)
    entry_points: tuple[str, ...] = ()
    configs: tuple[str, ...] = ()
    line: int = 0
    messages: Mapping[str, str] = field(default_factory=dict)  # release -> its own wording of `message`
    converts: str | None = None  # the node verl turns into its dataclass (conversion.py); `fails` is unused
    dataclass: str | None = None  # a `__post_init__` check: the class (module.Name) whose nodes it reads as self.*

    def message_at(self, release: str) -> str:
        return self.messages.get(release, self.message)

    def names(self) -> frozenset[str]:
        """The bindings it uses (its own `let` names included)."""
        return self._names

    @cached_property  # asked for on every evaluation of the check
    def _names(self) -> frozenset[str]:
        out = set(_FIELD.findall(self.message))
        for expression in (self.when, self.fails, *(e for _, e in self.let)):
            if expression is not None:
                out |= expression.names()
        if self.converts is not None:
            out -= {"class", "key"}  # the conversion's own: the class that refused the key, and the key
        return frozenset(n for n in out if "." not in n)


@dataclass(frozen=True)
class Outcome:
    check: Check
    status: str  # "fails" | "passes" | "unknown" | "skipped" (its guard is false)
    values: Mapping[str, object]  # the config keys and names it read, with their values
    message: str = ""
    hint: str | None = None


@dataclass(frozen=True)
class StartupChecks:
    releases: tuple[str, ...]
    bindings: tuple[Binding, ...]
    checks: tuple[Check, ...]
    post_init: tuple[Check, ...] = ()  # the `dataclasses` section: checks of a class, on each node built as it

    def post_init_at(self, release: str, dataclass: str) -> list[Check]:
        """The `__post_init__` checks of `dataclass` (module.Name) at `release`, in verl's order."""
        return [c for c in self.post_init if c.dataclass == dataclass and release in c.releases]

    def at(self, release: str) -> list[Check]:
        """The checks verl runs at `release`, in its order."""
        return [c for c in self.checks if release in c.releases]

    def bindings_at(self, release: str) -> list[Binding]:
        return [b for b in self.bindings if release in b.releases]


# -- loading -----------------------------------------------------------------------------------------

def builtin_path() -> Path:
    from migrator.builtin_tables import builtin_mappings_dir

    return builtin_mappings_dir() / "verl" / TABLE


@lru_cache(maxsize=4)
def load_checks(path: Path | None = None, releases: tuple[str, ...] | None = None) -> StartupChecks:
    """The table at `path` (default: the shipped one), validated; raises ChecksError."""
    from migrator.config import known_releases
    from migrator.mapping.load import TableError, yaml_nodes, yaml_values

    path = path or builtin_path()
    display = f"mappings/verl/{TABLE}" if path == builtin_path() else str(path)
    order = tuple(releases or known_releases())
    try:
        raw = yaml_values(yaml_nodes(path.read_text(encoding="utf-8")), display)
    except (OSError, UnicodeDecodeError) as exc:
        raise ChecksError(display, None, f"unreadable: {exc}") from None
    except TableError as exc:
        raise ChecksError(display, exc.line, exc.message) from None
    except Exception as exc:  # yaml's own errors carry their mark
        mark = getattr(exc, "problem_mark", None)
        raise ChecksError(display, mark.line + 1 if mark else None, f"invalid YAML: {exc}") from None
    return _Loader(display, order).table(raw)


class _Loader:
    def __init__(self, file: str, releases: tuple[str, ...]):
        self.file, self.order = file, releases

    def fail(self, node, message: str, key: str | None = None):
        line = node.get("__lines__", {}).get(key, node.get("__line__")) if isinstance(node, dict) else None
        raise ChecksError(self.file, line, message)

    def table(self, raw) -> StartupChecks:
        if not isinstance(raw, dict):
            raise ChecksError(self.file, None, "the table is not a mapping")
        self.fields(raw, {"bindings", "validators", "dataclasses"}, {"bindings", "validators"})
        bindings = tuple(self.binding(b) for b in self.items(raw, "bindings"))
        names = {b.name for b in bindings}
        checks: list[Check] = []
        for validator in self.items(raw, "validators"):
            checks.extend(self.validator(validator, names))
        post_init: list[Check] = []
        for node in self.items(raw, "dataclasses") if "dataclasses" in raw else []:
            post_init.extend(self.dataclass(node))
        seen: dict[tuple[str, str], int] = {}
        for check in (*checks, *post_init):
            for release in check.releases:
                if (check.id, release) in seen:
                    raise ChecksError(self.file, check.line, f"check `{check.id}` is given twice for {release} "
                                                             f"(also line {seen[(check.id, release)]})")
                seen[(check.id, release)] = check.line
        for item in (*bindings, *checks, *post_init):  # a name must be bound at every release that uses it
            for name in (item.value.names() if isinstance(item, Binding) else item.names() - {n for n, _ in item.let}):
                covered = set().union(*(b.releases for b in bindings if b.name == name))
                if not item.releases <= covered:
                    missing = sorted(item.releases - covered, key=self.order.index)
                    raise ChecksError(self.file, item.line, f"`{name}` is not bound at {', '.join(missing)}")
        return StartupChecks(self.order, bindings, tuple(checks), tuple(post_init))

    def items(self, raw: dict, key: str) -> list:
        items = raw.get(key)
        if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
            self.fail(raw, f"`{key}` must be a list of mappings", key)
        return items

    def fields(self, node: dict, allowed: set[str], required: set[str]) -> None:
        keys = {k for k in node if k not in ("__line__", "__lines__")}
        for key in sorted(keys - allowed):
            self.fail(node, f"unknown field `{key}` (known: {', '.join(sorted(allowed))})", key)
        for key in sorted(required - keys):
            self.fail(node, f"missing field `{key}`")

    def releases(self, node: dict, text, key: str = "releases") -> frozenset[str]:
        if not isinstance(text, str) or ".." not in text:
            self.fail(node, f"`{key}` must be `first..last` (releases.yaml names)", key)
        first, last = text.split("..", 1)
        for name in (first, last):
            if name not in self.order:
                self.fail(node, f"unknown release `{name}` in `{key}`", key)
        lo, hi = self.order.index(first), self.order.index(last)
        if lo > hi:
            self.fail(node, f"`{key}`: {first} is after {last}", key)
        return frozenset(self.order[lo:hi + 1])

    def expression(self, node: dict, key: str, names) -> Expression:
        text = node.get(key)
        try:
            return parse(text if isinstance(text, str) else "", names)
        except ExpressionError as exc:
            self.fail(node, f"`{key}`: {exc} (column {exc.col + 1} of `{text}`)", key)

    def binding(self, node: dict) -> Binding:
        self.fields(node, {"name", "releases", "value"}, {"name", "releases", "value"})
        if not isinstance(node["name"], str) or not node["name"].isidentifier() or "." in node["name"]:
            self.fail(node, "`name` must be a plain identifier", "name")
        value = self.expression(node, "value", _ANY_NAME)
        return Binding(node["name"], self.releases(node, node["releases"]), value, node["__line__"])

    def validator(self, node: dict, names: set[str]) -> list[Check]:
        allowed = {"name", "releases", "source", "phase", "phases", "entry_points", "configs", "checks"}
        self.fields(node, allowed, allowed - {"phases"})
        releases = self.releases(node, node["releases"])
        if node["phase"] not in PHASES:
            self.fail(node, f"unknown phase `{node['phase']}` (known: {', '.join(PHASES)})", "phase")
        phases = {release: node["phase"] for release in releases}
        overrides = node.get("phases") or {}
        if not isinstance(overrides, dict):
            self.fail(node, "`phases` maps a release to a phase", "phases")
        for release, phase in overrides.items():
            if release in ("__line__", "__lines__"):
                continue
            if release not in releases or phase not in PHASES:
                self.fail(node, f"`phases`: {release}: {phase} is not a release of this validator and a phase", "phases")
            phases[release] = phase
        source = node["source"]
        if not isinstance(source, str) or not re.fullmatch(r"[\w/.-]+\.py:[\w.]+", source):
            self.fail(node, "`source` must be `path/to/file.py:function`", "source")
        checks = []
        for raw in self.items(node, "checks"):
            checks.append(self.check(raw, node, releases, phases, names))
        return checks

    def dataclass(self, node: dict) -> list[Check]:
        """A class's `__post_init__` checks: over its own keys (`self.x`), run wherever Hydra builds one."""
        allowed = {"class", "releases", "source", "checks"}
        self.fields(node, allowed, allowed)
        if not isinstance(node["class"], str) or not re.fullmatch(r"[\w.]+\.[A-Za-z_]\w*", node["class"]):
            self.fail(node, "`class` must be the dotted module and class name that defines it", "class")
        releases = self.releases(node, node["releases"])
        if not isinstance(node["source"], str) or not re.fullmatch(r"[\w/.-]+\.py:[\w.]+", node["source"]):
            self.fail(node, "`source` must be `path/to/file.py:function`", "source")
        name = node["class"].rpartition(".")[2] + ".__post_init__"
        validator = {"name": name, "source": node["source"], "entry_points": (), "configs": ()}
        out = []
        for raw in self.items(node, "checks"):
            check = self.check(raw, validator, releases, {}, {"node"}, dataclass=node["class"])
            outside = sorted(k for e in (check.when, check.fails, *(x for _, x in check.let)) if e is not None
                             for k in e.keys() if not k.startswith("self."))
            if outside:
                self.fail(raw, f"a dataclass check reads only its node's keys (`self.x`), not `{outside[0]}`")
            out.append(check)
        return out

    def check(self, node: dict, validator: dict, releases, phases, names: set[str],
              dataclass: str | None = None) -> Check:
        allowed = {"id", "releases", "prs", "when", "fails", "let", "error", "message", "messages", "fix", "severity",
                   "converts"}
        converts = node.get("converts")
        self.fields(node, allowed, {"id", "error", "message"} | ({"fails"} if converts is None else set()))
        if converts is not None:
            if dataclass is not None or not (isinstance(converts, str) and re.fullmatch(r"[\w.]+", converts)):
                self.fail(node, "`converts` names a config node (a dotted key) in a validator's check", "converts")
            if "fails" in node:
                self.fail(node, "a `converts` check fails where verl's conversion does: it takes no `fails`", "fails")
            names = set(names) | {"class", "key"}  # the class that refused the key, and the key
        if not isinstance(node["id"], str) or not re.fullmatch(r"[a-z0-9-]+", node["id"]):
            self.fail(node, "`id` must be lower-case words joined by `-`", "id")
        own = self.releases(node, node["releases"]) if "releases" in node else releases
        if not own <= releases:
            self.fail(node, "the check's releases must lie within its validator's", "releases")
        bound = {b for b in names}
        let = []
        raw_let = node.get("let") or {}
        if not isinstance(raw_let, dict):
            self.fail(node, "`let` maps names to expressions", "let")
        for name in raw_let:
            if name in ("__line__", "__lines__"):
                continue
            if not name.isidentifier():
                self.fail(raw_let, f"`{name}` is not an identifier", name)
            let.append((name, self.expression(raw_let, name, bound)))
            bound.add(name)
        when = self.expression(node, "when", bound) if "when" in node else None
        fails = self.expression(node, "fails", bound) if converts is None else parse("False")
        severity = node.get("severity", "error")
        if severity not in ("error", "warning"):
            self.fail(node, "`severity` is error or warning", "severity")
        message = node["message"]
        if not isinstance(message, str):
            self.fail(node, "`message` must be a string (\"\" for a bare assert)", "message")
        self.template(node, "message", message, bound)
        worded = {}
        for item in node.get("messages") or []:  # [{releases: a..b, message: ...}]: verl's wording changed
            if not (isinstance(item, dict) and isinstance(item.get("message"), str)):
                self.fail(node, "`messages` items are {releases: first..last, message: text}", "messages")
            self.template(item, "message", item["message"], bound)
            worded.update(dict.fromkeys(self.releases(item, item.get("releases")) & own, item["message"]))
        fix = self.fix(node, bound)
        prs = []
        for item in node.get("prs") or []:
            if not (isinstance(item, dict) and isinstance(item.get("pr"), int) and item.get("release") in self.order):
                self.fail(node, "`prs` items are {pr: N, release: R}", "prs")
            prs.append((item["pr"], item["release"]))
        return Check(node["id"], validator["name"], validator["source"], phases, own, fails, message,
                     str(node["error"]), severity, when, tuple(let), fix, tuple(prs),
                     tuple(validator["entry_points"]), tuple(validator["configs"]), node["__line__"], worded,
                     converts, dataclass)

    def template(self, node: dict, key: str, text: str, names: set[str]) -> None:
        for m in _FIELD.finditer(text):
            if "." not in m.group(1) and m.group(1) not in names:
                self.fail(node, f"`{key}` names `{{{m.group(1)}}}`, neither a dotted key nor a bound name", key)

    def fix(self, node: dict, names: set[str]) -> Fix:
        raw = node.get("fix")
        if raw is None:
            return Fix()
        if not isinstance(raw, dict):
            self.fail(node, "`fix` is a mapping: text, key, multiple_of", "fix")
        self.fields(raw, {"text", "key", "multiple_of"}, set())
        if ("key" in raw) != ("multiple_of" in raw):
            self.fail(raw, "`fix`: `key` and `multiple_of` go together")
        text = raw.get("text")
        if text is not None:
            self.template(raw, "text", text, names)
        step = self.expression(raw, "multiple_of", names) if "multiple_of" in raw else None
        return Fix(text, raw.get("key"), step)


class _AnyName(frozenset):
    """Bindings may use each other (checked once all are read)."""

    def __contains__(self, item) -> bool:
        return True


_ANY_NAME = _AnyName()


# -- evaluating --------------------------------------------------------------------------------------

def evaluate(table: StartupChecks, release: str, lookup: Callable[[str], object],
             checks: list[Check] | None = None,
             children: Callable[[str], list[str] | None] | None = None) -> list[Outcome]:
    """Every check of `release` on one config, in verl's order. `lookup(key)`: the key's value, ABSENT
    when the config has no such key, UNKNOWN when only run time knows it; `children(key)`: a node's keys
    in the config's order (None for a leaf), for the checks that convert a node (without it: unknown)."""

    values: dict[str, object] = {}

    def read(key: str) -> object:
        value = lookup(key)
        values[key] = value
        return value

    bindings: dict[str, object] = {}
    inputs: dict[str, dict[str, object]] = {}  # binding -> the keys it read
    for binding in table.bindings_at(release):
        values.clear()
        bindings[binding.name] = binding.value.evaluate(read, bindings)
        inputs[binding.name] = dict(values)
        for name in binding.value.names():
            inputs[binding.name].update(inputs.get(name, {}))
    out = []
    for check in checks if checks is not None else table.at(release):
        values.clear()
        names = dict(bindings)
        for name, expression in check.let:
            names[name] = expression.evaluate(read, names)
        guard = check.when.evaluate(read, names) if check.when is not None else True
        if check.converts is not None:
            if not guard and guard is not UNKNOWN:
                out.append(Outcome(check, "skipped", {k: v for k, v in values.items() if v is not ABSENT}))
            else:
                out.append(_convert(table, release, check, read, children, names, guard is UNKNOWN))
            continue
        verdict = check.fails.evaluate(read, names) if guard or guard is UNKNOWN else False
        seen = {}
        for name in sorted(check.names()):
            seen.update(inputs.get(name, {}))
        seen.update(values)
        seen = {k: v for k, v in seen.items() if v is not ABSENT}
        seen.update((name, names[name]) for name in sorted(check.names()) if name in names)
        if not guard and guard is not UNKNOWN:
            out.append(Outcome(check, "skipped", seen))
        elif verdict is False or verdict is not UNKNOWN and not verdict:
            out.append(Outcome(check, "passes", seen))
        elif guard is UNKNOWN or verdict is UNKNOWN:
            out.append(Outcome(check, "unknown", seen))
        else:
            out.append(Outcome(check, "fails", seen, fill(check.message_at(release), read, names),
                               _hint(check, read, names)))
    return out


def _convert(table, release: str, check, lookup: Callable[[str], object],
            children: Callable[[str], list[str] | None] | None, names: Mapping[str, object], unsure: bool = False):
    """The Outcome of verl's conversion of `check.converts`: the first refusal, "passes", or "unknown" where
    a value that decides it (a `_target_`, a `__post_init__` input) is the shell's, or `unsure` (its guard)."""
    classes = dataclasses_at(release)
    seen: dict[str, object] = {}
    state = {"unknown": unsure}

    def read(key: str) -> object:
        value = lookup(key)
        if value is not ABSENT:
            seen[key] = value
        return value

    def refused(node: str, keys: list[str], name: str, fields: frozenset[str]):
        for key in keys:
            if key not in HYDRA_KEYS and key not in fields:
                full = f"{node}.{key}"
                values = {full: _node_value(lookup, children, full)}
                bound = {**names, "class": name, "key": key}
                message = fill(check.message_at(release), lookup, bound)
                return Outcome(check, "fails", values, message, _hint(check, lookup, {**bound, "key": full}))
        return None

    def post_init(node: str, dataclass: str):
        own = table.post_init_at(release, dataclass)
        if not own:
            return None

        def relative(key: str) -> object:
            return read(node + key[4:]) if key.startswith("self.") else read(key)

        for outcome in evaluate(table, release, relative, own):
            if outcome.status == "unknown":
                state["unknown"] = True
            elif outcome.status == "fails" and outcome.check.severity == "error":
                values = {(node + k[4:] if k.startswith("self.") else k): v for k, v in outcome.values.items()}
                bound = {**names, "node": node}
                as_run = replace(outcome.check, validator=check.validator, phases=check.phases,
                                 entry_points=check.entry_points, configs=check.configs)
                return Outcome(as_run, "fails", values, outcome.message,
                               _hint(outcome.check, relative, bound))
        return None

    def walk(node: str, depth: int = 0):
        keys = children(node) or []
        for key in keys:
            child = f"{node}.{key}"
            if key in HYDRA_KEYS or depth > 32:
                continue
            if children(child) is None:  # a leaf; `${other.node}` is that node, built here again
                child = getattr(children, "alias", lambda _: None)(child)
            if child is not None and children(child) is not None:
                failure = walk(child, depth + 1)
                if failure is not None:
                    return failure
        if "_target_" not in keys:
            return None
        target = read(f"{node}._target_")
        if target is UNKNOWN:
            state["unknown"] = True
            return None
        known = classes.get(target) if isinstance(target, str) else None
        if known is None:
            return None  # not a dataclass the facts know: its keys are not judged
        dataclass, name, fields = known
        return refused(node, keys, name, fields) or post_init(node, dataclass)

    if children is None or children(check.converts) is None:
        return Outcome(check, "unknown" if children is None else "passes", {})
    failure = walk(check.converts)
    if state["unknown"]:
        return Outcome(check, "unknown", dict(failure.values) if failure is not None else {})
    return failure or Outcome(check, "passes", {})


def _node_value(lookup, children, key: str) -> object:
    value = lookup(key)
    if value is ABSENT and children(key) is not None:
        return {k: _node_value(lookup, children, f"{key}.{k}") for k in children(key)}
    return value


def first_stop(outcomes: list[Outcome]) -> Outcome | None:
    """The check verl stops at: the first error-severity failure (an unknown check before it may stop
    verl earlier: the job fails either way, with another message)."""
    return next((o for o in outcomes if o.status == "fails" and o.check.severity == "error"), None)


def run_as_verl(outcomes: list[Outcome]) -> tuple[Outcome | None, list[Outcome]]:
    """(the failure verl stops at, the warnings it printed before): what one validator's run shows."""
    stop = first_stop(outcomes)
    before = outcomes[:outcomes.index(stop)] if stop is not None else outcomes
    return stop, [o for o in before if o.status == "fails" and o.check.severity == "warning"]


def fill(template: str, lookup: Callable[[str], object], names: Mapping[str, object]) -> str:
    """`{name}` and `{dotted.key}` replaced by their values, as verl's f-strings print them."""

    def value(m: re.Match) -> str:
        name = m.group(1)
        v = names.get(name, UNKNOWN) if "." not in name else lookup(name)
        return "?" if v is UNKNOWN or v is ABSENT else str(v)

    return _FIELD.sub(value, template)


def _hint(check: Check, lookup, names) -> str | None:
    parts = []
    if check.fix.key is not None:
        step = check.fix.multiple_of.evaluate(lookup, names)
        current = lookup(check.fix.key)
        if isinstance(step, int) and step > 0 and isinstance(current, int) and not isinstance(current, bool):
            lower, upper = current // step * step, (current // step + 1) * step
            choices = [str(v) for v in (lower, upper) if v > 0 and v != current]
            parts.append(f"set {check.fix.key} to {' or '.join(choices)} (a multiple of {step})")
    if check.fix.text:
        parts.append(fill(check.fix.text, lookup, names))
    return "; ".join(parts) or None
