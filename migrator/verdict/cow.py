"""A copy-on-write view of a composed base config, so that each command gets "its own copy" cheaply.

Hydra's apply (`OmegaConf.update` and `del`) only writes along the path of the key it is given. Before an
override is applied, the nodes on that path are replaced by private copies (containers shallowly: their
child table is copied, the children stay shared; the node at the key itself deeply); everything else is
shared with the base and only read. Unpickling a whole PPO config per command costs ~10-50 ms; this costs
microseconds per override. The base is never written: its own nodes are never on a path that gets written.
"""

from __future__ import annotations

import copy

from omegaconf import Container, DictConfig


def private_root(base: DictConfig) -> DictConfig:
    return _shallow(base, None)


def privatize(root: DictConfig, key: str) -> None:
    """Give `root` private copies of the nodes on `key`'s path (those that exist)."""
    node = root
    segments = key.split(".")
    for i, segment in enumerate(segments):
        content = node.__dict__.get("_content")
        if not isinstance(node, DictConfig) or not isinstance(content, dict):
            return  # a list, `None`, `???` or an interpolation: Hydra's apply fails or stops here
        child = content.get(segment)
        if child is None:
            return
        last = i == len(segments) - 1
        if not last and isinstance(child, DictConfig) and isinstance(child.__dict__.get("_content"), dict):
            clone = _shallow(child, node)
        else:  # a value is set in place (`_set_value`): a copy of the node object will do; a container merges
            clone = copy.deepcopy(child) if isinstance(child, Container) else copy.copy(child)
            clone._set_parent(node)
        content[segment] = clone
        node = clone


def _shallow(node: DictConfig, parent) -> DictConfig:
    clone = DictConfig.__new__(DictConfig)
    clone.__dict__.update(node.__dict__)
    metadata = copy.copy(node.__dict__["_metadata"])
    metadata.flags = dict(metadata.flags) if metadata.flags is not None else None
    clone.__dict__["_metadata"] = metadata
    clone.__dict__["_content"] = dict(node.__dict__["_content"])
    clone.__dict__["_parent"] = parent
    clone.__dict__["_flags_cache"] = None
    return clone


def plain_path(root: DictConfig, override) -> bool:
    """Does the key's path run through mappings only (no interpolation, `None` or value on the way, nor
    an interpolation at a `+`/`~` key, which Hydra resolves)? Then writes elsewhere cannot change its verdict."""
    node = root
    segments = override.key_or_group.split(".")
    for segment in segments[:-1]:
        content = node.__dict__.get("_content")
        if not isinstance(node, DictConfig) or not isinstance(content, dict):
            return False
        node = content.get(segment)
        if node is None:
            return True  # the rest does not exist: only writes on this very path matter
    content = node.__dict__.get("_content")
    if not isinstance(node, DictConfig) or not isinstance(content, dict):
        return False
    leaf = content.get(segments[-1])
    if leaf is None or not (override.is_add() or override.is_delete()):
        return True
    return not leaf._is_interpolation()
