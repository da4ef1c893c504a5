"""VM003 and VM112 in a Hydra YAML config of the user's own: a config whose `defaults:` list extends one of
verl's trainer configs (`- ppo_trainer`, `- /ppo_megatron_trainer`, with `_self_`) is checked key by key
against the config it extends at the target release. Hydra merges a key the base does not have without a
word, so a typo, a renamed or a removed key is added and nothing reads it (VM003). A key the config has (or
takes, under a free-form node) that the tables mark warn-only, or remove while the target still accepts
it, gets VM112, as the same key given as an override does.

Not judged: a `defaults:` list that also chooses groups (`- override model_engine: megatron`: the config
it extends is another then), keys under `hydra:`, and, for VM003, keys under a node verl leaves free-form
(`{}`, `null`: it takes any sub-key).
"""

from __future__ import annotations

import yaml

from migrator.lint import LintFinding
from migrator.lint.facts import Facts
from migrator.lint.ineffective import ineffective_message
from migrator.lint.keys import did_you_mean
from migrator.mapping import MappingSet
from migrator.rewrite.yaml.document import compose_all

CODE = "VM003"
INEFFECTIVE_CODE = "VM112"
CODES = (CODE, INEFFECTIVE_CODE)
_NOT_SETTINGS = frozenset({"defaults", "hydra"})


def lint_yaml(src: bytes, path: str, facts: Facts, mappings: MappingSet, rev: str) -> list[LintFinding]:
    if b"defaults" not in src:
        return []
    try:
        text = src.decode("utf-8")
        try:  # libyaml, with the pure-Python loader's marks
            documents = compose_all(text)
        except yaml.YAMLError:  # what libyaml refuses, the pure-Python loader decides
            documents = list(yaml.compose_all(text, Loader=yaml.SafeLoader))
    except (yaml.YAMLError, UnicodeDecodeError, ValueError):  # not YAML: not a config
        return []
    root = documents[0] if len(documents) == 1 else None  # several documents: not a config either
    if not isinstance(root, yaml.MappingNode):
        return []
    base = extended_config(root, facts.configs(rev))
    schema = facts.schema(rev, base) if base else None
    if schema is None:
        return []
    out: list[LintFinding] = []

    def walk(node: yaml.MappingNode, prefix: str) -> None:
        for key_node, value in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                continue
            key = f"{prefix}{key_node.value}"
            if not prefix and key in _NOT_SETTINGS:
                continue
            free = schema.under_open_node(key)  # any sub-key goes: only the tables can say it does nothing
            if not free and not schema.knows(key):
                out.append(_finding(path, key_node, key, base, schema, mappings, facts, rev))
                continue
            change = mappings.key(key)
            if change is not None and change.action in ("warn", "remove"):
                mark = key_node.start_mark
                out.append(LintFinding(path, mark.line + 1, mark.column + 1, INEFFECTIVE_CODE,
                                       *ineffective_message(key, change), "warning", key=key))
            if isinstance(value, yaml.MappingNode) and (free or key in schema.open_nodes or key not in schema.leaves):
                walk(value, key + ".")

    walk(root, "")
    return out


def extended_config(root: yaml.MappingNode, configs: list[str]) -> str | None:
    """The verl config a `defaults:` list of plain names extends, or None (none, or a group choice too)."""
    defaults = next((v for k, v in root.value if isinstance(k, yaml.ScalarNode) and k.value == "defaults"), None)
    if not isinstance(defaults, yaml.SequenceNode):
        return None
    names = []
    for item in defaults.value:
        if not isinstance(item, yaml.ScalarNode):
            return None  # a group choice: the config it extends is not the named one alone
        names.append(item.value.strip().lstrip("/").removesuffix(".yaml"))
    extended = [name for name in names if name in configs]
    return extended[0] if len(extended) == 1 else None


def _finding(path, key_node, key, base, schema, mappings, facts, rev) -> LintFinding:
    message = (f"`{key}` is not in verl {rev}'s {base}, which this config extends: Hydra merges it in and "
               "nothing reads it")
    change = mappings.key(key)
    if change is not None and change.action == "rename" and change.new:
        hint = f"renamed to `{change.new}`: run `verl-migrate --to {rev}` on this file"
    elif change is not None and change.action in ("remove", "warn"):
        hint = change.hint or "removed: delete it"
    else:
        hint = did_you_mean(schema, key)
        before, after = facts.around(key, rev) if hint is None else (None, None)
        if before:
            hint = f"it was in verl {before}: delete it, or set what replaced it"
        elif after:
            hint = f"it is first in verl {after}: was the config written for a newer verl?"
    mark = key_node.start_mark
    return LintFinding(path, mark.line + 1, mark.column + 1, CODE, message, hint, "error", key=key)
