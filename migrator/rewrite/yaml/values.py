"""Value entries in a Hydra config: the value of a nested key (`rollout: {name: sglang_async}`) and
class paths under one node (`critic.model._target_`, a Megatron actor's `checkpoint._target_`).

Only plain or quoted one-line scalars are edited, in place; a value map (the key changes too), a
removal, or a value given by an interpolation is reported. Each edit is also recorded as a data
operation (`("value", raw, path, new)`) that validation replays on the loaded data.
"""

from __future__ import annotations

import yaml

from migrator.edits import Edit, Finding
from migrator.rewrite import literal
from migrator.rewrite.values import target_change


def plan_values(planner, mapping) -> None:
    """Walk a `BlockMapping` tree (built by `Planner.build`) and plan each key's value change."""
    _report_in_sequences(planner, mapping.node, mapping.path, False)
    stack = [(mapping, {})]
    while stack:
        current, inherited = stack.pop()
        # A `when:` sibling may sit beside the node's parent (`actor.strategy` for `actor.checkpoint._target_`).
        siblings = {**inherited, **{".".join(k.local): k.value.value for k in current.keys
                                    if isinstance(k.value, yaml.ScalarNode)}}
        for key in current.keys:
            if key.children is not None:
                stack.append((key.children, siblings))
            elif isinstance(key.value, yaml.ScalarNode) and key.value.style in (None, "", "'", '"') \
                    and key.value.start_mark.line == key.value.end_mark.line:
                _plan_value(planner, key, siblings)


def _plan_value(planner, key, siblings: dict) -> None:
    node, dotted = key.value, ".".join(key.path)
    text = node.value
    if "${" in text:
        return
    change = planner.maps.value(dotted, text, siblings)
    if change is None:
        return
    offset = planner.lines.byte(key.key.start_mark)
    if change.action == "warn":
        planner.findings.append(Finding(offset, "value-removal", f"{dotted}: {text} is rejected now", change.hint,
                                        change.prs, severity="warning"))
        return
    if change.action == "remove" or change.new_key is not None:
        new = "drop it" if change.new is None else f"write {change.new_key or dotted}: {change.new}"
        planner.findings.append(Finding(offset, change.entries[-1].KIND, f"{dotted}: {text}: {new} by hand",
                                        getattr(change.entries[-1], "hint", None), change.prs))
        return
    if change.args:
        planner.findings.append(Finding(offset, "value-rename", f"{dotted}: {text} -> {change.new} also needs "
                                        f"{' '.join(change.args)}", None, change.prs))
        return
    start, end = planner.lines.byte(node.start_mark), planner.lines.byte(node.end_mark)
    if node.style in ("'", '"'):
        start, end = start + 1, end - 1
    if planner.src[start:end].decode("utf-8", "replace") != text:
        return  # escapes or folding: the written text is not the value
    data = text.encode("utf-8")
    if literal.text_edits(data, 0, len(data), planner.maps, whole_key=True)[0]:
        return  # the string pass changes it (a class path that moved everywhere, a moved path)
    new = change.new
    if not node.style and yaml.safe_load(new) != new and target_change(planner.maps, text) is None:
        return  # the new value would load as another type
    planner.edits.append(Edit(start, end, new.encode(), change.entries[-1].KIND, change.describe(), change.prs))
    planner.ops.append(("value", key.raw, key.path, new))


def _report_in_sequences(planner, node, path: tuple[str, ...], in_sequence: bool) -> None:
    """Values inside lists (a tool config's `tools: [{class_name: ...}]`): reported, never edited, since
    validation replays edits by key path. Keys count without list indices (`tools.class_name`)."""
    if isinstance(node, yaml.SequenceNode):
        for item in node.value:
            _report_in_sequences(planner, item, path, True)
    elif isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            if isinstance(k, yaml.ScalarNode):
                key_path = path + tuple(k.value.split("."))
                if in_sequence and isinstance(v, yaml.ScalarNode):
                    _report(planner, k, ".".join(key_path), v.value)
                else:
                    _report_in_sequences(planner, v, key_path, in_sequence)


def _report(planner, key_node, dotted: str, text: str) -> None:
    if "${" in text:
        return
    change = planner.maps.value(dotted, text)
    if change is None or all(e.moves_class_path and e.value_key is None for e in change.entries):
        return  # unchanged, or a class path the string pass renames wherever it is
    offset = planner.lines.byte(key_node.start_mark)
    hint = getattr(change.entries[-1], "hint", None)
    if change.action == "warn":
        planner.findings.append(Finding(offset, "value-removal", f"{dotted}: {text} is rejected now", hint,
                                        change.prs, severity="warning"))
    else:
        new = "drop it" if change.new is None else f"write {change.new_key or dotted}: {change.new}"
        planner.findings.append(Finding(offset, change.entries[-1].KIND, f"{dotted}: {text}: {new} by hand "
                                        "(inside a list)", hint, change.prs))
