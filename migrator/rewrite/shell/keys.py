"""Planning edits for key entries: renames, warnings, and removed arguments planned per command."""

from __future__ import annotations

import re

from migrator.edits import Edit, Finding
from migrator.mapping import KeyChange, MappingSet
from migrator.mapping.changes import ConfigChange
from migrator.mapping.kinds.entry_point import moved_by_entry_point
from migrator.rewrite.shell.removal_spans import _argument_removal_span
from migrator.rewrite.shell.syntax import _glued_by_continuation
from migrator.rewrite.values import override_value_edits, removal_finding, value_at


class KeyEdits:
    """Key occurrences in a `_ShellLocator`, which walks the tree and provides these attributes."""

    src: bytes
    maps: MappingSet
    edits: list[Edit]
    findings: list[Finding]
    removals: dict
    array_scopes: dict  # first element's start -> (array name, every element an override)
    verl_expanded: set  # names expanded into commands that run a verl entry point
    # Also provided by the walker (LaunchEdits): context_at(offset), note_key(key, context).

    def key_occurrence(self, key: str, start: int, end: int, container, limit: int | None = None) -> None:
        """`container` is (sibling argument nodes, index) when the key's argument can be deleted;
        `limit` is where the override's value must end."""
        if limit is not None and self.src[end:end + 1] == b"=" and self.value_occurrence(key, start, end, container,
                                                                                           limit):
            return
        context = self.context_at(start)
        self.note_key(key, context)
        change = self.maps.key(key, context)
        if change is None:
            if self.src[start - 1:start] == b"+" and self.src[start - 2:start - 1] != b"+" and \
                    self.maps.declared_at_target(key, context):
                # Hydra's own advice for `+key=` on a key that exists; the review keeps it only where
                # Hydra, judging the launch, agrees.
                self.edits.append(Edit(start - 1, start, b"", PLUS_KIND,
                                       drop_plus_message(key, self.maps.to_release)))
            return
        if change.action == "rename":
            new = change.new.encode()
            if change.add and self.src[start - 1:start] != b"+":
                new = b"+" + new  # not a key of the new config: Hydra needs `+` to add it
            elif self.src[start - 1:start] == b"+" and self.src[start - 2:start - 1] != b"+" and (
                    change.exists or self.maps.declared_at_target(change.new, context)):
                start -= 1  # the new config has the key: `+key=` would fail to append over it
            self.edits.append(Edit(start, end, new, "key-rename", f"{key} -> {change.new}", change.prs))
        elif change.action == "warn":
            self.findings.append(Finding(start, "key-warn", f"{key}: {_first_note(change)}", change.hint,
                                         change.prs, severity="warning"))
        elif container is not None and not _glued_by_continuation(
                self.src, container[0][container[1]].start_byte, container[0][container[1]].end_byte):
            siblings, index = container
            self.removals.setdefault(siblings[0].start_byte, (siblings, []))[1].append((index, key, change, start))
        else:
            self.removal_by_hand(key, start, change)

    def removal_by_hand(self, key: str, start: int, change) -> None:
        self.findings.append(Finding(start, "key-removal", f"{key} was removed; delete it by hand",
                                     change.hint, change.prs))

    def value_occurrence(self, key: str, start: int, end: int, container, limit: int) -> bool:
        """Edits or findings for the value of `key=value`; True when they dealt with the key as well."""
        token = value_at(self.src, end + 1, limit)
        if token is not None and token.variable is not None:
            self.variable_value(key, token.variable)
            return False
        edits, findings, change = override_value_edits(self.maps, key, start, end, token)
        self.edits.extend(edits)
        self.findings.extend(findings)
        if change is None:
            return False
        if change.action == "remove":
            if container is not None:
                siblings, index = container
                self.removals.setdefault(siblings[0].start_byte, (siblings, []))[1].append(
                    (index, f"{key}={change.value}", change, start))
            self.findings.append(removal_finding(start, change, removed=container is not None))
            return True
        return change.new_key is not None

    def variable_value(self, key: str, name: str) -> None:
        """`key=$NAME`: when the script assigns NAME a literal old value, report it at the assignment."""
        for m in re.finditer(rb"(?m)^[ \t]*(?:export[ \t]+)?" + re.escape(name.encode()) + rb"=", self.src):
            token = value_at(self.src, m.end(), len(self.src))
            if token is None or token.variable is not None:
                continue
            change = self.maps.value(key, token.text)
            if change is not None:
                # A removal that only reports (`warn`): the value is rejected, its fix is in the hint.
                new = f"write {change.new_key or key}={change.new} by hand" if change.new is not None else \
                    "rejected now" if change.action == "warn" else "drop it by hand"
                severity = "warning" if new == "rejected now" else "manual"
                self.findings.append(Finding(m.start(), "value-variable", f"{name}={token.text} is passed as {key}: "
                                             f"{new}", getattr(change.entries[-1], "hint", None), change.prs,
                                             severity=severity, code=change.entries[-1].unit.code(severity)))

    def plan_removals(self) -> None:
        for first, (siblings, removed) in self.removals.items():
            array = self.array_scopes.get(first)
            if array is not None and not (array[1] or array[0] in self.verl_expanded):
                # An array neither expanded into a verl command nor made of overrides alone: its
                # words may be anything (`FILES=(a.b=1 ...)`), so nothing is deleted from it.
                for _, key, change, start in removed:
                    self.removal_by_hand(key, start, change)
                continue
            for _, key, change, start in removed:
                if change.hint and isinstance(change, KeyChange):  # a value removal reported its own finding
                    message = f"removed {key}: {_first_note(change)}" if change.manual else f"removed {key}"
                    self.findings.append(Finding(start, "key-removal", message, change.hint, change.prs,
                                                 severity="manual" if change.manual else "info"))
            removed.sort(key=lambda item: item[0])
            removed_starts = {siblings[i].start_byte for i, _, _, _ in removed}
            # The run of removed arguments that ends the list, counted over *every* node between them
            # (an expansion like `${EXTRA:-}` or a comment is not an argument sibling, but must stay).
            run_start = None
            if siblings[-1].start_byte in removed_starts:
                first = siblings[-1]
                while first.prev_sibling is not None and first.prev_sibling.start_byte in removed_starts:
                    first = first.prev_sibling
                kept_before = first.prev_sibling
                if kept_before is not None and kept_before.is_named and any(
                        s.start_byte not in removed_starts for s in siblings):
                    run_start = (first.start_byte, kept_before.end_byte)
            planned: list[tuple[int, int, str, tuple, str]] = []
            for index, key, change, _ in removed:
                # A dropped `--config-name` is the config-name move's own edit, not a key's.
                kind = "config-name-move" if isinstance(change, ConfigChange) else "key-removal"
                node = siblings[index]
                if run_start is not None and node.start_byte >= run_start[0]:
                    if index != len(siblings) - 1:
                        continue  # inside the trailing run: covered by the span of the run's last argument
                    # The removed arguments end the list: cut from the node before the run, which takes
                    # the intervening `\` continuations with it.
                    span = (run_start[1], node.end_byte)
                else:
                    span = _argument_removal_span(self.src, node.start_byte, node.end_byte)
                if planned and span[0] < planned[-1][1]:
                    # Neighbours on one line (`(a=1 b=2)`, both removed) claim the blanks between them.
                    start, end, first_key, prs, first_kind = planned.pop()
                    span, key, change_prs = (start, max(end, span[1])), f"{first_key}, {key}", prs
                    kind = kind if kind == first_kind else "key-removal"
                else:
                    change_prs = change.prs
                planned.append((span[0], span[1], key, change_prs, kind))
            for start, end, key, prs, kind in planned:
                self.edits.append(Edit(start, end, b"", kind, f"removed {key}", prs))


PLUS_KIND = "key-append-prefix"  # the edit that drops a `+` the target refuses


def drop_plus_message(key: str, release: str) -> str:
    return f"+{key} -> {key} (verl {release} has `{key}`: Hydra overrides it without `+`)"


def _first_note(change) -> str:
    if change.note:
        return change.note
    last = change.entries[-1] if change.entries else None
    if last is not None and moved_by_entry_point((last,)):
        return f"{last.old} -> {last.new} has no place for it"  # the item's hint says what to do
    for entry in reversed(change.entries):
        if entry.note:
            return entry.note
    return "has no effect in this release"
