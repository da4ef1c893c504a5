"""Removed arguments, planned per command or array once the walk is done: a run of removed arguments at
the end of a `\\` list leaves no dangling `\\`, and an array no verl launch expands keeps its words."""

from __future__ import annotations

from migrator.edits import Edit, Finding
from migrator.mapping import KeyChange
from migrator.mapping.changes import ConfigChange
from migrator.mapping.kinds import finding_code
from migrator.mapping.kinds.entry_point import moved_by_entry_point
from migrator.rewrite.shell.markers import marker_line, marker_place
from migrator.rewrite.shell.plan import ScriptPlan
from migrator.rewrite.shell.removal_spans import argument_removal_span

KEY_REMOVAL = "key-removal"
MARKER_KIND = KEY_REMOVAL  # the marker is part of the removal's edit: counted and listed with it


def leaves_trace(change) -> bool:
    """A removed key whose meaning has no replacement: a manual step the script must keep a trace of."""
    return isinstance(change, KeyChange) and bool(change.hint) and change.manual


class ArgumentRemovals:
    def __init__(self, plan: ScriptPlan):
        self.plan = plan
        # first sibling's start -> (sibling argument nodes, [(index, label, change, key start)])
        self.by_list: dict[int, tuple[list, list]] = {}
        self.array_scopes: dict[int, tuple[bytes, bool]] = {}  # first element's start -> (name, all overrides)
        self.verl_expanded: set[bytes] = set()  # names expanded into commands that run a verl entry point

    def add(self, siblings: list, index: int, label: str, change, start: int) -> None:
        self.by_list.setdefault(siblings[0].start_byte, (siblings, []))[1].append((index, label, change, start))

    def note_array(self, first_element_start: int, name: bytes, overrides_only: bool) -> None:
        self.array_scopes[first_element_start] = (name, overrides_only)

    def note_expanded(self, names: set[bytes]) -> None:
        self.verl_expanded |= names

    def removed_starts(self) -> set[int]:
        """Where every argument planned for removal starts."""
        return {siblings[i].start_byte for siblings, items in self.by_list.values() for i, *_ in items}

    def by_hand(self, key: str, start: int, change) -> None:
        self.plan.findings.append(Finding(start, "key-removal", f"{key} was removed; delete it by hand",
                                          change.hint, change.prs))

    def leave_traces(self, siblings: list, removed: list) -> list:
        """A marker line (`markers.py`) before the command for each removal that is a manual step; where none is
        legal, those arguments stay and are reported. Returns the removals still to make."""
        manual = [item for item in removed if leaves_trace(item[2])]
        if not manual:
            return removed
        src = self.plan.src
        place = marker_place(src, siblings[0])
        if place is None:
            for _, key, change, start in manual:
                self.by_hand(key, start, change)
            return [item for item in removed if item not in manual]
        at, indent, ending = place
        lines = [marker_line(finding_code(KEY_REMOVAL, "manual"), key, change.prs, change.hint)
                 for _, key, change, _ in sorted(manual, key=lambda item: item[0])]
        text = b"".join(indent + line + ending for line in dict.fromkeys(lines) if line not in src)
        if text:  # a second run finds its marker in place
            prs = tuple(dict.fromkeys(pr for *_, change, _ in manual for pr in change.prs))
            self.plan.edits.append(Edit(at, at, text, MARKER_KIND, "marked the manual step: removed "
                                        + ", ".join(key for _, key, _, _ in manual), prs, True))
        return removed

    def plan_edits(self) -> None:
        src, findings = self.plan.src, self.plan.findings
        for first, (siblings, removed) in self.by_list.items():
            array = self.array_scopes.get(first)
            if array is not None and not (array[1] or array[0] in self.verl_expanded):
                # An array neither expanded into a verl command nor made of overrides alone: its
                # words may be anything (`FILES=(a.b=1 ...)`), so nothing is deleted from it.
                for _, key, change, start in removed:
                    self.by_hand(key, start, change)
                continue
            removed = self.leave_traces(siblings, removed)
            self.by_list[first] = (siblings, removed)  # an argument kept for want of a marker is no removal
            if not removed:
                continue
            for _, key, change, start in removed:
                if change.hint and isinstance(change, KeyChange):  # a value removal reported its own finding
                    message = f"removed {key}: {first_note(change)}" if change.manual else f"removed {key}"
                    findings.append(Finding(start, "key-removal", message, change.hint, change.prs,
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
                    span = argument_removal_span(src, node.start_byte, node.end_byte)
                if planned and span[0] < planned[-1][1]:
                    # Neighbours on one line (`(a=1 b=2)`, both removed) claim the blanks between them.
                    start, end, first_key, prs, first_kind = planned.pop()
                    span, key, change_prs = (start, max(end, span[1])), f"{first_key}, {key}", prs
                    kind = kind if kind == first_kind else "key-removal"
                else:
                    change_prs = change.prs
                planned.append((span[0], span[1], key, change_prs, kind))
            for start, end, key, prs, kind in planned:
                self.plan.edits.append(Edit(start, end, b"", kind, f"removed {key}", prs))


def first_note(change) -> str:
    """What a key change's finding says happened to it."""
    if change.note:
        return change.note
    last = change.entries[-1] if change.entries else None
    if last is not None and moved_by_entry_point((last,)):
        return f"{last.old} -> {last.new} has no place for it"  # the item's hint says what to do
    for entry in reversed(change.entries):
        if entry.note:
            return entry.note
    return "has no effect in this release"
