"""Planning edits for script paths (moves, with env presets and arguments) and Python modules."""

from __future__ import annotations

from migrator.edits import Edit, Finding
from migrator.mapping import MappingSet
from migrator.rewrite import scan


class MoveEdits:
    """Path and module occurrences in a `_ShellLocator`, which walks the tree and provides these attributes."""

    src: bytes
    maps: MappingSet
    edits: list[Edit]
    findings: list[Finding]

    def path_occurrence(self, start: int, end: int, change, path_context, in_comment: bool) -> None:
        old = self.src[start:end].decode("ascii")
        if change.new is None:
            if not in_comment:
                self.findings.append(Finding(start, "path-removal", f"{old} was removed", change.hint, change.prs))
            return
        new = change.new
        presets = change.env or change.args
        if presets and not in_comment:
            command, node, runs_script = path_context or (None, None, False)
            if command is None or not runs_script:
                self.findings.append(Finding(
                    start, "path-move", f"{old} moved to {new}; run it as `{_invocation(change, new)}`"
                    " (edit by hand: not a script invocation here)", None, change.prs))
                return
            self.edits.append(Edit(start, end, new.encode(), "path-move", f"{old} -> {new}", change.prs))
            if change.env:
                prefix = "".join(f"{k}={v} " for k, v in change.env).encode()
                at = command.start_byte
                name = command.child_by_field_name("name")
                if name is not None and b"\n" in self.src[at:name.start_byte]:
                    # tree-sitter-bash reads `A=1 B=<newline>bash x.sh` as one command; bash runs
                    # the assignments alone, so the presets belong right before `bash`.
                    at = name.start_byte
                self.edits.append(Edit(at, at, prefix, "path-move", f"env presets for {new}", change.prs))
            if change.args:
                self.edits.append(Edit(node.end_byte, node.end_byte, (" " + " ".join(change.args)).encode(),
                                       "path-move", f"args for {new}", change.prs))
            return
        self.edits.append(Edit(start, end, new.encode(), "path-move", f"{old} -> {new}", change.prs, in_comment))

    def module_word(self, node) -> None:
        self.module_span(node.start_byte, node.end_byte)

    def module_span(self, start: int, end: int, in_comment: bool = False) -> None:
        name = self.src[start:end]
        if not scan.MODULE_RE.fullmatch(name):
            return
        change = self.maps.module(name.decode("ascii"))
        if change is None:
            return
        if change.new is None:
            if not in_comment:
                self.findings.append(Finding(start, "module-removal", f"{change.old} was removed", change.hint,
                                             change.prs))
            return
        self.edits.append(Edit(start, end, change.new.encode(), "module-move",
                               f"{change.old} -> {change.new}", change.prs, in_comment))


def _invocation(change, new: str) -> str:
    """How to run a moved script now: `DEVICE=npu bash new.sh extra=args`."""
    return " ".join([*(f"{k}={v}" for k, v in change.env), "bash", new, *change.args])
