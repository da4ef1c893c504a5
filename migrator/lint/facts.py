"""The shipped facts the lint judges against: config key lists and file trees per verl release.

`config-keys/<rev>.<config>.keys` holds `dotted.key<TAB>type` per leaf of verl's generated config;
`dict` and `null` leaves take arbitrary sub-keys. `trees/<rev>.paths` lists verl's files.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

OPEN_TYPES = frozenset({"dict", "null"})


class FactsError(Exception):
    """The facts directory is missing or lacks the files a release needs."""


@dataclass
class KeySchema:
    """One config of one release: its leaves, the nodes above them, and the nodes open to any sub-key."""

    rev: str
    config: str
    leaves: dict[str, str]
    nodes: frozenset[str] = field(init=False)
    open_nodes: frozenset[str] = field(init=False)
    children: dict[str, list[str]] = field(init=False, repr=False)

    def __post_init__(self):
        nodes, children = set(), {}
        for key in self.leaves:
            parts = key.split(".")
            for n in range(1, len(parts)):
                nodes.add(".".join(parts[:n]))
            children.setdefault(".".join(parts[:-1]), []).append(parts[-1])
        for node in nodes:
            parent, _, leaf = node.rpartition(".")
            children.setdefault(parent, []).append(leaf)
        self.nodes = frozenset(nodes)
        self.open_nodes = frozenset(k for k, t in self.leaves.items() if t in OPEN_TYPES)
        self.children = {k: sorted(set(v)) for k, v in children.items()}

    def knows(self, key: str) -> bool:
        """A leaf, a whole node, or anything under an open node."""
        return key in self.leaves or key in self.nodes or self.under_open_node(key)

    def under_open_node(self, key: str) -> bool:
        parts = key.split(".")
        return any(".".join(parts[:n]) in self.open_nodes for n in range(1, len(parts)))

    def parent_is_closed_node(self, key: str) -> bool:
        parent = key.rpartition(".")[0]
        return parent in self.nodes and not self.under_open_node(key)


@dataclass
class Facts:
    directory: Path

    @property
    def keys_dir(self) -> Path:
        return self.directory / "config-keys"

    def configs(self, rev: str) -> list[str]:
        prefix = f"{rev}."
        return sorted(p.name[len(prefix):-len(".keys")] for p in self.keys_dir.glob(f"{rev}.*.keys")
                      if p.name[len(prefix):-len(".keys")].count(".") == 0)

    def schema(self, rev: str, config: str) -> KeySchema | None:
        return _schema(str(self.keys_dir), rev, config)

    def ever_known(self) -> dict[str, str]:
        """Every key of every shipped release and config -> the newest release that had it (by file order)."""
        return _ever_known(str(self.keys_dir))

    def tree(self, rev: str) -> "Tree | None":
        return _tree(str(self.directory / "trees"), rev)


@dataclass
class Tree:
    files: frozenset[str]
    dirs: frozenset[str]
    extensions: dict[str, frozenset[str]]  # top-level dir -> file extensions listed under it

    def exists(self, path: str) -> bool:
        path = path.rstrip("/")
        return path in self.files or path in self.dirs


def extension(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return name.rsplit(".", 1)[-1] if "." in name.strip(".") else ""


@lru_cache(maxsize=64)
def _schema(keys_dir: str, rev: str, config: str) -> KeySchema | None:
    path = os.path.join(keys_dir, f"{rev}.{config}.keys")
    if not os.path.isfile(path):
        return None
    return KeySchema(rev, config, _read_keys(path))


def _read_keys(path: str) -> dict[str, str]:
    leaves = {}
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            key, _, kind = line.rstrip("\n").partition("\t")
            if key:
                leaves[key] = kind or "str"
    return leaves


@lru_cache(maxsize=4)
def _ever_known(keys_dir: str) -> dict[str, str]:
    from migrator.mapping import load_builtin

    try:
        order = list(load_builtin().releases)
    except Exception:  # noqa: BLE001 - the order only refines a message
        order = []
    known: dict[str, str] = {}
    files = sorted(Path(keys_dir).glob("*.keys"),
                   key=lambda p: order.index(p.name.split(".ppo")[0]) if p.name.split(".ppo")[0] in order else -1)
    for path in files:
        rev = path.name.split(".ppo")[0]
        for key in _read_keys(str(path)):
            known[key] = rev
    return known


@lru_cache(maxsize=16)
def _tree(trees_dir: str, rev: str) -> Tree | None:
    path = os.path.join(trees_dir, f"{rev}.paths")
    if not os.path.isfile(path):
        return None
    with open(path, encoding="utf-8") as fh:
        files = frozenset(line.strip() for line in fh if line.strip())
    dirs, extensions = set(), {}
    for name in files:
        parts = name.split("/")
        for n in range(1, len(parts)):
            dirs.add("/".join(parts[:n]))
        extensions.setdefault(parts[0], set()).add(extension(name))
    return Tree(files, frozenset(dirs), {k: frozenset(v) for k, v in extensions.items()})


def builtin_facts_dir() -> Path:
    from migrator.mapping.load import builtin_mappings_dir

    return builtin_mappings_dir() / "verl" / "facts"


def load_facts(directory: str | os.PathLike | None = None) -> Facts:
    path = Path(directory) if directory else builtin_facts_dir()
    if not (path / "config-keys").is_dir():
        raise FactsError(f"{path}: no config-keys/ directory (the shipped verl facts are missing)")
    return Facts(path)
