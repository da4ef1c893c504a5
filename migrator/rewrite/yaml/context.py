"""Which entry point's config a YAML file's keys belong to: a file whose `defaults:` list names a config
outside main_ppo's family (`- sft_trainer`, `- generation`) is judged as that config; any other file
as main_ppo's."""

from __future__ import annotations

from dataclasses import replace

import yaml

from migrator.mapping import MappingSet


def defaults_config(documents: list, maps: MappingSet) -> str | None:
    """The one non-PPO config a top-level `defaults:` list names, or None."""
    named = set()
    for document in documents:
        if not isinstance(document, yaml.MappingNode):
            continue
        for key, value in document.value:
            if key.value == "defaults" and isinstance(value, yaml.SequenceNode):
                named.update(item.value for item in value.value
                             if isinstance(item, yaml.ScalarNode) and isinstance(item.value, str))
    configs = {name for name in named if not maps.is_ppo_config(name)}
    return configs.pop() if len(configs) == 1 else None


class ContextualMappings:
    """A `MappingSet` whose key queries are judged in one entry point's config (the rest delegates)."""

    def __init__(self, maps: MappingSet, config: str):
        self._maps = maps
        self._context = maps.context(None, config)

    def key(self, key: str, context=None):
        change = self._maps.key(key, context or self._context)
        if change is not None and change.manual:
            # A config file is edited by a person anyway: keep the key and say what to do.
            return replace(change, action="warn", manual=False)
        return change

    def __getattr__(self, name: str):
        return getattr(self._maps, name)


def in_file_context(documents: list, maps: MappingSet):
    """`maps`, or a view of it judging keys in the config the file's `defaults:` extends."""
    config = defaults_config(documents, maps)
    return maps if config is None or isinstance(maps, ContextualMappings) else ContextualMappings(maps, config)
