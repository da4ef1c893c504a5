"""A primary config's `defaults:` list naming a config verl renamed: the item gets the new name.

`- ppo_megatron_trainer` becomes `- ppo_trainer` followed by the config-name move's `args` as overrides
(`- override model_engine: megatron`, as verl's own deprecated ppo_megatron_trainer.yaml writes it);
`- sft_trainer` becomes `- sft_trainer_engine` (an entry-point move's old-config/new-config, whose key
items the file's keys already follow: context.py). A leading `/`, an `@package` suffix and the quoting stay.

Only where the name is provably verl's config: the file's first `hydra.searchpath` entry is verl's config
directory and no `<name>.yaml` sits beside the file (Hydra looks in the primary config's directory first).
Elsewhere, and for items whose args cannot be written as overrides, an info finding says what verl renamed.
"""

from __future__ import annotations

import os
import re

import yaml

from migrator.edits import Edit, Finding
from migrator.layout import verl_layout
from migrator.mapping import MappingSet
from migrator.mapping.kinds.entry_point import moved_by_entry_point

GROUP_CHOICE = re.compile(r"([A-Za-z_][\w-]*(?:/[A-Za-z_][\w-]*)*)=([\w.-]+)\Z")  # `model_engine=megatron`


def defaults_items(documents: list):
    """The top-level `defaults:` sequence node of a one-document config, or None."""
    if len(documents) != 1 or not isinstance(documents[0], yaml.MappingNode):
        return None
    for key, value in documents[0].value:
        if isinstance(key, yaml.ScalarNode) and key.value == "defaults" and isinstance(value, yaml.SequenceNode):
            return value
    return None


def searches_verl_first(documents: list) -> bool:
    """The file's `hydra.searchpath` starts with verl's config directory (`pkg://verl.trainer.config`,
    `file://.../verl/trainer/config`)."""
    hydra = next((v for k, v in documents[0].value if isinstance(k, yaml.ScalarNode) and k.value == "hydra"), None)
    if not isinstance(hydra, yaml.MappingNode):
        return False
    paths = next((v for k, v in hydra.value if isinstance(k, yaml.ScalarNode) and k.value == "searchpath"), None)
    if not isinstance(paths, yaml.SequenceNode) or not paths.value or not isinstance(paths.value[0], yaml.ScalarNode):
        return False
    first = str(paths.value[0].value).rstrip("/")
    layout = verl_layout()
    return first == f"pkg://{layout.config_package}" or (first.startswith("file://") and first.endswith(layout.config_dir))


def config_part(value: str) -> tuple[int, str]:
    """(offset, name) of the config an item names: `/name@package` -> (1, "name")."""
    start = 1 if value.startswith("/") else 0
    return start, value[start:].partition("@")[0]


def overrides(args: tuple[str, ...]) -> list[tuple[str, str]] | None:
    """The move's args as `override group: option` items, or None when one is not a group choice."""
    out = []
    for arg in args:
        m = GROUP_CHOICE.match(arg)
        if m is None:
            return None
        out.append((m.group(1), m.group(2)))
    return out


def renames(documents: list, maps: MappingSet):
    """(item node, ConfigChange, overrides) for each scalar item of `defaults:` naming a renamed config."""
    items = defaults_items(documents)
    listed = items.value if items is not None else []
    for index, node in enumerate(listed):
        if isinstance(node, yaml.ScalarNode) and node.tag == "tag:yaml.org,2002:str":
            name = config_part(node.value)[1]
            change = maps.renamed_config(name)
            if change is None or change.new is None:
                continue
            # Keys follow an entry-point move only for a file whose item is the bare name (context.py).
            follows_keys = not moved_by_entry_point(change.entries) or node.value == name
            groups = overrides(change.args) if follows_keys else None
            if groups and not _room_for_overrides(listed, index, groups):
                groups = None
            yield node, change, groups


def _overridden_group(node) -> str | None:
    """`override model_engine` of an item `- override model_engine: megatron`, else None."""
    if isinstance(node, yaml.MappingNode) and len(node.value) == 1:
        key = node.value[0][0]
        if isinstance(key, yaml.ScalarNode) and key.value.startswith("override "):
            return key.value[len("override "):].strip()
    return None


def _room_for_overrides(listed: list, index: int, groups: list) -> bool:
    """Whether `- override group: option` lines may follow item `index`: Hydra wants every override after
    every other item (`_self_` aside), and the first override of a group wins, so the list must not
    already override one of `groups`."""
    later_ok = all(_overridden_group(n) is not None or (isinstance(n, yaml.ScalarNode) and n.value == "_self_")
                   for n in listed[index + 1:])
    taken = {_overridden_group(n) for n in listed}
    return later_ok and not any(group in taken for group, _ in groups)


def provable(documents: list, maps: MappingSet, path: str) -> bool:
    """Every renamed item names verl's config: verl's directory is searched first after the file's own,
    and the file's own directory (a real one) holds none of the names."""
    if not searches_verl_first(documents) or not path or not os.path.isfile(path):
        return False
    here = os.path.dirname(os.path.abspath(path))
    return not any(os.path.exists(os.path.join(here, config_part(node.value)[1] + ".yaml"))
                   for node, _, _ in renames(documents, maps))


def plan_defaults(planner, documents: list, path: str) -> None:
    """Edits for the renamed configs of the file's `defaults:` list, all of them or none (validation
    expects one or the other); info findings where they cannot all be made."""
    found = list(renames(documents, planner.maps))
    if not found:
        return
    planned = [_item_edits(planner, node, change, groups) for node, change, groups in found] \
        if provable(documents, planner.maps, path) else [None]
    if all(edits is not None for edits in planned):
        planner.edits.extend(edit for edits in planned for edit in edits)
        return
    for node, change, _ in found:
        args = f" with {' '.join(change.args)}" if change.args else ""
        planner.findings.append(Finding(
            planner.lines.byte(node.start_mark), "config-name-move", f"verl's config {change.old} is now "
            f"{change.new}{args}; if this defaults list means verl's config (not a file of yours), make the same "
            "change", None, change.prs, severity="info"))


def renamed(value: str, new: str) -> str:
    offset, name = config_part(value)
    return value[:offset] + new + value[offset + len(name):]


def _item_edits(planner, node, change, groups) -> list[Edit] | None:
    """The rename in place and the override lines after the item's line; None where the item's
    bytes are not its value (escapes) or its line is not `<indent>- item` (flow lists, nested dashes)."""
    start, end = planner.lines.byte(node.start_mark), planner.lines.byte(node.end_mark)
    quoted = node.style in ("'", '"')
    inner = planner.src[start + quoted:end - quoted]
    if groups is None or inner != node.value.encode("utf-8"):
        return None
    offset, name = config_part(node.value)
    at = start + quoted + offset
    edits = [Edit(at, at + len(name.encode()), change.new.encode(), "config-name-move",
                  f"{change.old} -> {change.new}", change.prs)]
    if not groups:
        return edits
    line = node.start_mark.line
    before = planner.lines.raw[line][:planner.lines.byte(node.start_mark) - planner.lines.starts[line]]
    dash = before.rstrip(b" ")
    if node.end_mark.line != line or not dash.endswith(b"-") or dash[:-1].strip(b" "):
        return None
    text = b"".join(dash[:-1] + b"- override " + f"{group}: {option}".encode() + planner.lines.newline
                    for group, option in groups)
    after = planner.lines.after(line)
    if not planner.lines.raw[line].endswith((b"\n", b"\r")):
        text = planner.lines.newline + text[:-len(planner.lines.newline)]
    edits.append(Edit(after, after, text, "config-name-move", f"{' '.join(change.args)} for {change.new}",
                      change.prs))
    return edits
