"""`config-objects.yaml`: verl's Python objects that carry its Hydra config (the callables that take it,
the classes whose `self.config` holds a node of it, the config dataclasses), as data the Python
rewriter's provenance rule reads (migrator/rewrite/python/provenance.py). `load.py` reads the file."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*\Z")
_CLASS = re.compile(r"[A-Za-z_]\w*\Z")
_NODE = re.compile(r"(?:[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)?\Z")  # "" is the whole config


@dataclass(frozen=True)
class ConfigObjects:
    takers: frozenset[str] = frozenset()
    holders: dict[str, tuple[str, ...]] = field(default_factory=dict)  # qualified class -> node
    classes: dict[str, tuple[str, ...]] = field(default_factory=dict)  # class name -> node


class ConfigObjectsError(ValueError):
    def __init__(self, line: int | None, message: str):
        self.line, self.message = line, message
        super().__init__(message)


def config_objects_from(data) -> ConfigObjects:
    """From the file's values (mappings carrying `__lines__`, as `load.yaml_values` gives them); raises
    ConfigObjectsError with the line of the first problem."""
    if not isinstance(data, dict) or set(data) - {"takers", "holders", "classes", "__line__", "__lines__"}:
        raise ConfigObjectsError(1, "expected the mapping keys takers, holders and classes")
    lines = data["__lines__"]
    takers = data.get("takers") or []
    if not isinstance(takers, list) or not all(isinstance(t, str) and _DOTTED.match(t) for t in takers):
        raise ConfigObjectsError(lines.get("takers"), "takers: a list of dotted names (module.function)")
    return ConfigObjects(frozenset(takers), _nodes(data, "holders", _DOTTED), _nodes(data, "classes", _CLASS))


def _nodes(data: dict, name_of_field: str, name_pattern: re.Pattern) -> dict[str, tuple[str, ...]]:
    value = data.get(name_of_field) or {}
    if not isinstance(value, dict):
        raise ConfigObjectsError(data["__lines__"].get(name_of_field),
                                 f"{name_of_field}: a mapping of name to config node")
    out = {}
    for name, node in value.items():
        if name in ("__line__", "__lines__"):
            continue
        if not isinstance(name, str) or not name_pattern.match(name) or not isinstance(node, str) \
                or not _NODE.match(node):
            raise ConfigObjectsError(value["__lines__"].get(name),
                                     f"{name_of_field}: {name!r}: {node!r} is not a name and a dotted config node")
        out[name] = tuple(node.split(".")) if node else ()
    return out
