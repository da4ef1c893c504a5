"""Planning edits for key entries: renames, warnings, `+` drops, value changes; removed arguments go to
`removals`, the config each key belongs to comes from `launches`."""

from __future__ import annotations

import re

from migrator.edits import Edit, Finding
from migrator.rewrite.launch_gate import rename_not_read
from migrator.rewrite.shell.launches import Launches
from migrator.rewrite.shell.plan import ScriptPlan
from migrator.rewrite.shell.removals import ArgumentRemovals, first_note
from migrator.rewrite.shell.syntax import glued_by_continuation
from migrator.rewrite.values import literal_tail, override_value_edits, removal_finding, value_at


class KeyEdits:
    """Each key occurrence the walker meets, judged in the config of the launch around it."""

    def __init__(self, plan: ScriptPlan, launches: Launches, removals: ArgumentRemovals):
        self.src = plan.src
        self.maps = plan.maps
        self.edits = plan.edits
        self.findings = plan.findings
        self.launches = launches
        self.removals = removals
        self.pending: list[tuple[bytes, Edit, str, object]] = []  # renames in `X=key=v`: (X, edit, key, change)

    def key_occurrence(self, key: str, start: int, end: int, container, limit: int | None = None,
                       reads: bool | bytes = True) -> None:
        """`container` is (sibling argument nodes, index) when the key's argument can be deleted;
        `limit` is where the override's value must end; `reads`: does Hydra read the occurrence (the
        walker's `reads`: True, False, or the variable whose plain value it is)."""
        fork = self.launches.fork_at(start)
        if fork is not None:  # a fork's entry point composes its own config: verl's table does not apply
            if self.maps.key(key, self.launches.context_at(start)) is not None:
                self.launches.leave_to_fork(fork, key)
            return
        if limit is not None and self.src[end:end + 1] == b"=" and self.value_occurrence(key, start, end, container,
                                                                                           limit):
            return
        context = self.launches.context_at(start)
        self.launches.note_key(key, context)
        change = self.maps.key(key, context)
        if change is None:
            if self.src[start - 1:start] == b"+" and self.src[start - 2:start - 1] != b"+" and \
                    self.maps.declared_at_target(key, context):
                # Hydra's own advice for `+key=` on a key that exists; the review keeps it only where
                # Hydra, judging the launch, agrees.
                self.edits.append(Edit(start - 1, start, b"", PLUS_KIND,
                                       drop_plus_message(key, self.maps.to_release)))
            elif self.src[start - 1:start] != b"+" and self.maps.open_at_target(key, context):
                self.edits.append(Edit(start, start, b"+", PLUS_ADDED_KIND,
                                       f"{key} -> +{key} (verl {self.maps.to_release} declares it no more, under a "
                                       "free-form node: Hydra takes it only as an addition and passes it on)"))
            return
        if change.action == "rename":
            new = change.new.encode()
            if change.add and self.src[start - 1:start] != b"+":
                new = b"+" + new  # not a key of the new config: Hydra needs `+` to add it
            elif self.src[start - 1:start] == b"+" and self.src[start - 2:start - 1] != b"+" and (
                    change.exists or self.maps.declared_at_target(change.new, context)):
                start -= 1  # the new config has the key: `+key=` would fail to append over it
            edit = Edit(start, end, new, "key-rename", f"{key} -> {change.new}", change.prs)
            if reads is True:
                self.edits.append(edit)
            elif reads is False:
                self.rename_by_hand(key, edit, change)
            else:  # decided once the walk knows which variables go into verl commands
                self.pending.append((reads, edit, key, change))
        elif change.action == "warn":
            self.findings.append(Finding(start, "key-warn", f"{key}: {first_note(change)}", change.hint,
                                         change.prs, severity="warning"))
        elif container is not None and not glued_by_continuation(
                self.src, container[0][container[1]].start_byte, container[0][container[1]].end_byte):
            self.removals.add(*container, key, change, start)
        else:
            self.removals.by_hand(key, start, change)

    def rename_by_hand(self, key: str, edit: Edit, change) -> None:
        """A rename where Hydra does not read the text (`echo`, `grep`, a user's tool, a variable no verl
        command expands)."""
        self.findings.append(rename_not_read(edit.start, key, change.new, edit.replacement, change.prs))

    def plan_renames(self, read: set[bytes]) -> None:
        """The renames in plain variable values: made where the variable goes into a verl command (`read`)."""
        for name, edit, key, change in self.pending:
            if name in read:
                self.edits.append(edit)
            else:
                self.rename_by_hand(key, edit, change)
        self.pending = []

    def value_occurrence(self, key: str, start: int, end: int, container, limit: int) -> bool:
        """Edits or findings for the value of `key=value`; True when they dealt with the key as well."""
        token = value_at(self.src, end + 1, limit)
        if token is not None and token.variable is not None:
            tail = literal_tail(self.maps, key, self.src, token)
            if tail is None:
                self.variable_value(key, token.variable)
                return False
            token = tail
        edits, findings, change = override_value_edits(self.maps, key, start, end, token)
        self.edits.extend(edits)
        self.findings.extend(findings)
        if change is None:
            return False
        if change.action == "remove":
            if container is not None:
                self.removals.add(*container, f"{key}={change.value}", change, start)
            self.findings.append(removal_finding(start, change, removed=container is not None))
            return True
        return change.new_key is not None

    def variable_value(self, key: str, name: str) -> None:
        """`key=$NAME`: when the script assigns NAME a literal old value, report it at the assignment."""
        for start, end in assignments_of(self.src, name.encode()):
            token = value_at(self.src, end, len(self.src))
            if token is None or token.variable is not None:
                continue
            change = self.maps.value(key, token.text)
            if change is not None:
                # A removal that only reports (`warn`): the value is rejected, its fix is in the hint.
                new = f"write {change.new_key or key}={change.new} by hand" if change.new is not None else \
                    "rejected now" if change.action == "warn" else "drop it by hand"
                severity = "warning" if new == "rejected now" else "manual"
                self.findings.append(Finding(start, "value-variable", f"{name}={token.text} is passed as {key}: "
                                             f"{new}", getattr(change.entries[-1], "hint", None), change.prs,
                                             severity=severity, code=change.entries[-1].unit.code(severity)))


_ASSIGNMENT_PREFIX = re.compile(rb"[ \t]*(?:export[ \t]+)?")


def assignments_of(src: bytes, name: bytes):
    """(line start, end of `NAME=`) of each line that assigns `name`, `^[ \\t]*(?:export[ \\t]+)?NAME=` per
    line, in order. Found from the occurrences of `NAME=` (a `^` tried at every byte of the script cost a
    quarter of the rewriter's time on verl's scripts, which pass most keys a variable)."""
    needle = name + b"="
    at = src.find(needle)
    while at != -1:
        line = src.rfind(b"\n", 0, at) + 1
        if _ASSIGNMENT_PREFIX.fullmatch(src, line, at):
            yield line, at + len(needle)
        at = src.find(needle, at + 1)


PLUS_KIND = "plus-dropped"  # the edit that drops a `+` the target refuses
PLUS_ADDED_KIND = "plus-added"  # the edit that adds the `+` the target needs for a key it no longer declares


def drop_plus_message(key: str, release: str) -> str:
    return f"+{key} -> {key} (verl {release} has `{key}`: Hydra overrides it without `+`)"
