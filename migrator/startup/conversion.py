"""verl's `omega_conf_to_dataclass` on a config node, as data: which key or `__post_init__` check stops it.

verl turns a node into its config dataclass with Hydra's `instantiate(node, _convert_="partial")`: every
node under it that has a `_target_` is built, inner nodes first and in the node's key order, with the
node's keys as keyword arguments, then the class's `__post_init__` runs. So the first node (in that order)
with a key its class does not declare stops verl with a TypeError ("PolicyLossConfig.__init__() got an
unexpected keyword argument 'tau_pos'"), or the first of its class's `__post_init__` checks that fails (the
table's `dataclasses` section, over the node's own keys as `self.key`). The classes' keyword arguments are
facts extracted from verl's source (facts/config-dataclasses/<release>.yaml,
scripts/extract_config_dataclasses.py); a `_target_` the facts do not know as a dataclass is not judged.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from functools import lru_cache

from migrator.startup.expr import ABSENT, UNKNOWN

FACTS = "config-dataclasses"
# The keys Hydra's instantiate reads itself: never a keyword argument of the class.
HYDRA_KEYS = frozenset({"_target_", "_recursive_", "_convert_", "_partial_", "_args_"})


@lru_cache(maxsize=16)
def dataclasses_at(release: str) -> Mapping[str, tuple[str, str, frozenset[str]]]:
    """`_target_` -> (the class as module.Name where verl defines it, its name, its keyword arguments);
    empty for a release without the facts (verl converted no node at start-up then)."""
    import yaml

    from migrator.builtin_tables import builtin_mappings_dir

    path = builtin_mappings_dir() / "verl" / "facts" / FACTS / f"{release}.yaml"
    if not path.is_file():
        return {}
    facts = yaml.safe_load(path.read_text(encoding="utf-8"))
    out = {}
    for target, entry in (facts.get("dataclasses") or {}).items():
        module = entry["defined_in"].rpartition(":")[0].removesuffix(".py").replace("/", ".")
        out[target] = (f"{module}.{entry['class']}", entry["class"], frozenset(entry["fields"]))
    return out


def convert(table, release: str, check, lookup: Callable[[str], object],
            children: Callable[[str], list[str] | None] | None, names: Mapping[str, object], unsure: bool = False):
    """The Outcome of verl's conversion of `check.converts`: the first refusal, "passes", or "unknown" where
    a value that decides it (a `_target_`, a `__post_init__` input) is the shell's, or `unsure` (its guard)."""
    from migrator.startup.checks import Outcome, _hint, evaluate, fill

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
                values = {full: _value(lookup, children, full)}
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


def _value(lookup, children, key: str) -> object:
    value = lookup(key)
    if value is ABSENT and children(key) is not None:
        return {k: _value(lookup, children, f"{key}.{k}") for k in children(key)}
    return value


def node_children(leaves: Mapping[str, object], added: tuple[str, ...] = ()) -> Callable[[str], list[str] | None]:
    """`children(key)` over a config's flat leaves: a node's keys in the config's order (None for a leaf).
    `leaves` lists them as effective.py's walk does (the last key first); `added` were appended by the
    command, and come last under their node, as OmegaConf adds them."""
    tree: dict[str, dict[str, None]] = {}
    late = set(added)
    for key in [*(k for k in reversed(list(leaves)) if k not in late), *added]:
        parts = key.split(".")
        for n in range(1, len(parts)):
            tree.setdefault(".".join(parts[:n]), {})[parts[n]] = None
        tree.setdefault("", {})[parts[0]] = None
        if isinstance(leaves.get(key), dict):  # an empty mapping is a node without keys
            tree.setdefault(key, {})

    return _Nodes(tree, leaves)


class _Nodes:
    """`nodes(key)`: a node's keys in order (None for a leaf); `nodes.alias(key)`: the node a leaf's whole
    interpolation names (`${oc.select:a.b,null}`, `${a.b}`, `${..b}`), which Hydra builds in its place."""

    def __init__(self, tree: dict[str, dict[str, None]], leaves: Mapping[str, object]):
        self.tree, self.leaves = tree, leaves

    def __call__(self, key: str) -> list[str] | None:
        node = self.tree.get(key)
        return list(node) if node is not None else None

    def alias(self, key: str) -> str | None:
        from migrator.verdict.effective import _WHOLE, _absolute, _split_args

        for _ in range(8):  # a leaf may name a leaf that names the node
            raw = self.leaves.get(key)
            m = _WHOLE.match(raw.strip()) if isinstance(raw, str) else None
            if m is None:
                return None
            body = m.group("body").strip()
            if body.startswith("oc.select:"):
                args = _split_args(body[len("oc.select:"):])
                reference = args[0].strip() if args else ""
            elif ":" in body.split(".", 1)[0]:
                return None  # another resolver
            else:
                reference = body
            target = _absolute(key, reference)
            if target is None:
                return None
            if target in self.tree:
                return target
            key = target
        return None
