"""The facts and the config tree behind verl's `omega_conf_to_dataclass` on a node (checks.py `_convert` walks it).

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
from functools import lru_cache

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
        from migrator.verdict.effective import interpolated_key

        for _ in range(8):  # a leaf may name a leaf that names the node
            target = interpolated_key(key, self.leaves.get(key))
            if target is None or target in self.tree:
                return target
            key = target
        return None
