"""Planning edits for environment variables (renames, removals) and shell variables (renames)."""

from __future__ import annotations

from migrator.edits import Edit, Finding
from migrator.rewrite.shell.removal_spans import _alone_on_its_line
from migrator.rewrite.shell.syntax import _literal_value


class VariableEdits:
    """Assignments and variable names in a `_ShellLocator`, which walks the tree and provides these attributes."""

    src: bytes
    edits: list[Edit]
    findings: list[Finding]
    env_rules: list
    var_rules: dict
    env_ref_renames: dict

    def env_assignment(self, node, value) -> None:
        """`NAME=value` (its `value` node or None) judged by the env rules."""
        name_node = node.child_by_field_name("name") or (node.children[0] if node.children else None)
        if name_node is None or name_node.type != "variable_name":
            return
        name = self.src[name_node.start_byte:name_node.end_byte]
        literal = _literal_value(value, self.src) if value is not None else None
        for rule in self.env_rules:
            if rule.old.encode() != name or (rule.value is not None and rule.value != literal):
                continue
            prs = (rule.entry.pr,)
            if rule.new is not None:
                if rule.value is not None:  # a value-specific rename: references keep the old name
                    self.edits.append(Edit(name_node.start_byte, name_node.end_byte, rule.new.encode(),
                                           "env-rename", f"{rule.old} -> {rule.new}", prs))
                return  # value-less renames are done by variable_name() for every occurrence
            self.env_removal(node, rule)
            return

    def env_removal(self, assignment, rule) -> None:
        prs = (rule.entry.pr,)
        label = f"{rule.old}={rule.value}" if rule.value is not None else rule.old
        statement = assignment.parent
        if statement is not None and statement.type == "command":
            # `NAME=v cmd ...`: drop the prefix assignment and the blank after it.
            end = assignment.end_byte
            while end < len(self.src) and self.src[end:end + 1] in (b" ", b"\t"):
                end += 1
            self.edits.append(Edit(assignment.start_byte, end, b"", "env-removal", f"removed {label}", prs))
            return
        if statement is not None and statement.type == "declaration_command":
            assignments = [c for c in statement.children if c.type in ("variable_assignment", "variable_name")]
            if len(assignments) != 1:
                statement = None
        else:
            statement = assignment
        if statement is not None and _alone_on_its_line(self.src, statement.start_byte, statement.end_byte):
            marker = f"# verl-migrate: removed (verl#{rule.entry.pr}): ".encode()
            self.edits.append(Edit(statement.start_byte, statement.start_byte, marker, "env-removal",
                                   f"commented out {label}", prs))
            if rule.entry.note or getattr(rule.entry, "hint", None):
                self.findings.append(Finding(assignment.start_byte, "env-removal", f"commented out {label}",
                                             getattr(rule.entry, "hint", None) or rule.entry.note, prs, "info"))
            return
        self.findings.append(Finding(assignment.start_byte, "env-removal",
                                     f"{label} is no longer used; remove it by hand",
                                     getattr(rule.entry, "hint", None), prs))

    def variable_name(self, node) -> None:
        name = self.src[node.start_byte:node.end_byte]
        rule = self.var_rules.get(name) or self.env_ref_renames.get(name)
        if rule is not None:
            kind = "var-rename" if name in self.var_rules else "env-rename"
            self.edits.append(Edit(node.start_byte, node.end_byte, rule.new.encode(), kind,
                                   f"{rule.old} -> {rule.new}", (rule.entry.pr,)))
