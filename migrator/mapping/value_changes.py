"""Composing value entries across releases: what becomes of one literal value of one key.

A value entry names its key as the key was called in the entry's release, so the walk follows the
key through the key renames of each release and asks every release's value entries about both the
name before and the name after that release's rename (`custom_reward_function.path` at v0.6.0 still
applies when the script already writes `reward.custom_reward_function.path`). What one entry does to
the value in hand is the entry's own (`ValueEntry.apply`, migrator/mapping/kinds/value.py).
"""

from __future__ import annotations

from migrator.mapping.changes import ValueChange
from migrator.mapping.kind import Role
from migrator.mapping.kinds.value import VALUE


def compose_value(steps, rename_steps, key: str, value: str, siblings: dict | None = None,
                  final_name=lambda k: k) -> ValueChange | None:
    """`steps`: every release's `ReleaseStep` in order; `rename_steps`: those whose key renames apply to
    `key`; `final_name(k)`: k's name at the target release (a script may already use the new key name)."""
    current_key, current, chain, args = key, value, [], []
    new_key = None
    for step in steps:
        names = {current_key}
        after = current_key
        if step in rename_steps:
            found = step.key_entry(current_key)
            if found is not None and found[0].unit.role is Role.MOVE:
                after = found[1]
                names.add(after)
        for entry in step.value_entries:
            entry_key = entry.value_key
            if entry_key is not None and entry_key not in names and final_name(entry_key) in names:
                entry_key = current_key
            if entry_key is not None and entry_key not in names:
                continue
            outcome = entry.apply(current, value, siblings)
            if outcome is None:
                continue
            chain.append(entry)
            if outcome.value is None:
                return ValueChange(key, value, outcome.new_key or new_key, None, outcome.action, outcome.hint,
                                   tuple(args), tuple(chain))
            current = outcome.value
            args.extend(outcome.args)
            if outcome.new_key is not None:
                after = new_key = outcome.new_key
        current_key = after
    if not chain or (current == value and new_key is None):
        return None
    if new_key is not None:
        new_key = current_key
    return ValueChange(key, value, new_key, current, "rename", None, tuple(args), tuple(chain))


def defaults(entries) -> list:
    """The value-default entries among `entries`, in order."""
    return [e for e in entries if e.unit.family is VALUE and e.unit.role is Role.DEFAULT]


class ValueChanges:
    """`MappingSet.value`: the composed change of one literal value, memoized per (key, value)."""

    def __init__(self, steps, keys):
        self.steps = steps  # the ReleaseRange
        self.keys = keys  # the KeyChanges: the walk follows the key's renames
        self.any = any(s.value_entries for s in steps.steps)
        self._memo: dict = {}
        # The names keyed entries apply to (as written and at the target), and the values entries that name no
        # key can apply to (None: some such entry may apply to any value).
        entries = [e for step in steps.steps for e in step.value_entries]
        names = {e.value_key for e in entries if e.value_key is not None}
        self._entry_names = frozenset(names | {keys.final_name(n) for n in names})
        keyless = [e.only_values for e in entries if e.value_key is None]
        self._keyless_values = None if None in keyless else frozenset().union(*keyless)
        self._key_applies: dict[str, bool] = {}

    def value(self, key: str, value: str, siblings: dict | None = None) -> ValueChange | None:
        if not self.any or not self._may_apply(key, value):
            return None
        memo = self._memo if not siblings else {}  # asked per override; siblings make it the file's own
        if (key, value) not in memo:
            memo[key, value] = compose_value(self.steps.steps, self.steps.for_name(key, "key"), key, value,
                                             siblings, self.keys.final_name)
        return memo[key, value]

    def _may_apply(self, key: str, value: str) -> bool:
        """Whether some value entry could apply: one names (as written or at the target) a name the key has
        at some release, or names no key and can apply to `value`. Until an entry applies, the walk
        follows the key's renames alone, so when neither holds the value stays. A YAML file asks for each
        of its values with its siblings, which the memo of `value` does not cover; this check is per key."""
        if self._keyless_values is None or value in self._keyless_values:
            return True
        known = self._key_applies.get(key)
        if known is None:
            known = self._key_applies[key] = not self._entry_names.isdisjoint(self._names_of(key))
        return known

    def _names_of(self, key: str) -> set[str]:
        """Every name `key` has along the releases, by the key renames alone."""
        names, current = {key}, key
        rename_steps = self.steps.for_name(key, "key")
        for step in self.steps.steps:
            if step in rename_steps:
                found = step.key_entry(current)
                if found is not None and found[0].unit.role is Role.MOVE:
                    current = found[1]
                    names.add(current)
        return names
