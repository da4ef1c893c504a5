"""Composing value entries across releases: what becomes of one literal value of one key.

A value entry names its key as the key was called in the entry's release, so the walk follows the
key through the key renames of each release and asks every release's value entries about both the
name before and the name after that release's rename (`custom_reward_function.path` at v0.6.0 still
applies when the script already writes `reward.custom_reward_function.path`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from migrator.mapping.entries import Entry, KeyRename
from migrator.mapping.values import TargetMove, ValueDefault, ValueMap, ValueRemoval, ValueRename


@dataclass(frozen=True)
class ValueChange:
    """What becomes of `key=value`. `new_key` is set when a value map renames the key too; `new` is None
    for a removal (`action` "remove": delete the override; "warn": report it)."""

    key: str
    value: str
    new_key: str | None
    new: str | None
    action: str  # "rename" | "remove" | "warn"
    hint: str | None
    args: tuple[str, ...]
    entries: tuple[Entry, ...]

    @property
    def prs(self) -> tuple[int, ...]:
        return tuple(dict.fromkeys(e.pr for e in self.entries))

    def describe(self) -> str:
        new = f"{self.new_key or self.key}={self.new}"
        return f"{self.key}={self.value} -> {new}"


def value_entries(entries) -> list[Entry]:
    return [e for e in entries if isinstance(e, (ValueRename, ValueRemoval, ValueMap, TargetMove))]


def _entry_key(entry: Entry) -> str | None:
    return getattr(entry, "old_key", None) if isinstance(entry, ValueMap) else getattr(entry, "key", None)


def compose_value(steps, rename_steps, key: str, value: str, siblings: dict | None = None,
                  final_name=lambda k: k) -> ValueChange | None:
    """`steps`: every release's `_Step` in order; `rename_steps`: those whose key renames apply to `key`;
    `final_name(k)`: k's name at the target release (a script may already use the new key name)."""
    current_key, current, chain, args = key, value, [], []
    new_key = None
    for step in steps:
        names = {current_key}
        after = current_key
        if step in rename_steps:
            found = step.key_entry(current_key)
            if found is not None and isinstance(found[0], KeyRename):
                after = found[1]
                names.add(after)
        for entry in step.value_entries:
            entry_key = _entry_key(entry)
            if entry_key is not None and entry_key not in names and final_name(entry_key) in names:
                entry_key = current_key
            if isinstance(entry, TargetMove):
                if (entry_key is not None and entry_key not in names) or current != entry.old:
                    continue
                if entry.when and not _sibling_match(entry.when, siblings):
                    continue
                chain.append(entry)
                current = entry.new
                continue
            if entry_key not in names:
                continue
            if isinstance(entry, ValueRename):
                renamed = None if entry.optional else entry.renamed(current)
                if renamed is not None:
                    chain.append(entry)
                    current = renamed
                    args.extend(entry.args)
            elif isinstance(entry, ValueRemoval) and entry.matches(current):
                chain.append(entry)
                return ValueChange(key, value, new_key, None, entry.action or "warn", entry.hint, tuple(args),
                                   tuple(chain))
            elif isinstance(entry, ValueMap):
                listed, mapped = entry.mapped(current)
                if not listed:
                    continue  # the key entry of the same release reports it
                chain.append(entry)
                if mapped is None:
                    return ValueChange(key, value, entry.new_key, None, "remove",
                                       f"{value} is the default of {entry.new_key}", tuple(args), tuple(chain))
                current, after = mapped, entry.new_key
                new_key = entry.new_key
        current_key = after
    if not chain or (current == value and new_key is None):
        return None
    if new_key is not None:
        new_key = current_key
    return ValueChange(key, value, new_key, current, "rename", None, tuple(args), tuple(chain))


def _sibling_match(when, siblings: dict | None) -> bool:
    return siblings is not None and all(siblings.get(k) == v for k, v in when)


def defaults(entries) -> list[ValueDefault]:
    return [e for e in entries if isinstance(e, ValueDefault)]


def value_tokens(entries) -> set[str]:
    """A literal each value entry needs in a file. Short, common values (`hf`, `sync`) and generic key
    names (`name`, `mode`, `_target_`) would let nearly every file through, so a value is looked for as
    `last=value` (shell, Python, Markdown) and `last: value` (YAML), and alone only when it is a path,
    a class path or an identifier with `_`."""
    out = set()
    for e in entries:
        if isinstance(e, TargetMove):
            out.add(e.old)
            continue
        if isinstance(e, ValueDefault):
            continue  # inserted only when --from is given (MappingSet adds its token)
        key = e.old_key if isinstance(e, ValueMap) else e.key
        last = key.rpartition(".")[2].lstrip("-")
        old = getattr(e, "old", None)
        pattern = getattr(e, "old_pattern", None)
        values = [old] if isinstance(old, str) and old else \
            sorted(_pattern_literals(pattern.pattern)) if pattern is not None else []
        if isinstance(e, ValueMap) or not values:
            # The old key itself (use_policy_gradient, rollout_is); every spelling, dotted or nested, holds
            # each component whole, so the longest stands for it (`reward_manager`, not `name`).
            out.add(max(key.lstrip("+~-").split("."), key=len))
        for value in values:
            out.update({f"{last}={value}", f"{last}: {value}"})
            if any(c in value for c in "./_"):
                out.add(value)  # also inside lists and longer strings
    return out


def _pattern_literals(pattern: str) -> set[str]:
    """Literals one of which every match contains: the alternatives of a plain alternation
    (`prime|batch`), the literal before a group of alternatives (`dummy_(dtensor|hf)` -> `dummy_`), or
    the longest literal run (`(.*/)?verl/utils/reward_score/math\\.py`); empty when unsure."""
    text = pattern.replace("\\.", "\0")
    if "|" in text and "(" not in text:
        pieces = text.split("|")
    elif "|" in text:
        pieces = [text[:text.index("(")]]
    else:
        pieces = [max(re.split(r"\(\.\*/\)\?|[()|?*+\[\]^$.]", text), key=len)]
    literals = {p.replace("\0", ".") for p in pieces}
    return literals if all(len(p) >= 4 and "\\" not in p for p in literals) else set()
