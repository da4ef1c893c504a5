"""Planning edits for environment variables (renames, removals) and shell variables (renames)."""

from __future__ import annotations

from migrator.edits import Edit, Finding
from migrator.rewrite.shell.plan import ScriptPlan
from migrator.rewrite.shell.removal_spans import alone_on_its_line
from migrator.rewrite.shell.syntax import literal_value
from migrator.rewrite.shell.variable_uses import is_variable_use, name_pattern, names_a_function


class VariableEdits:
    """Assignments and variable names, judged by the environment-variable and shell-variable entries."""

    def __init__(self, plan: ScriptPlan):
        self.plan = plan
        self.src = source = plan.src
        self.edits = plan.edits
        self.findings = plan.findings
        self.var_rules = {r.old.encode(): r for r in plan.maps.var_rules if r.applies_to(source)}
        self.env_rules = [r for r in plan.maps.env_rules if r.applies_to(source)]
        # Env renames without a value condition rename references ($OLD, ${OLD}) too.
        self.env_ref_renames = {r.old.encode(): r for r in self.env_rules if r.new and r.value is None}
        self.var_renamed: dict[bytes, set[int]] = {}  # name -> starts of its `variable_name` nodes

    def env_assignment(self, node, value) -> None:
        """`NAME=value` (its `value` node or None) judged by the env rules."""
        name_node = node.child_by_field_name("name") or (node.children[0] if node.children else None)
        if name_node is None or name_node.type != "variable_name":
            return
        name = self.src[name_node.start_byte:name_node.end_byte]
        literal = literal_value(value, self.src) if value is not None else None
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
        if statement is not None and alone_on_its_line(self.src, statement.start_byte, statement.end_byte):
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
        if name in self.var_rules:
            if not names_a_function(node, self.src):
                self.var_renamed.setdefault(name, set()).add(node.start_byte)
            return
        rule = self.env_ref_renames.get(name)
        if rule is not None:
            self.edits.append(Edit(node.start_byte, node.end_byte, rule.new.encode(), "env-rename",
                                   f"{rule.old} -> {rule.new}", (rule.entry.pr,)))

    def plan_var_renames(self, root, in_comment) -> None:
        """Each shell-variable rename covers every spelling of the name outside comments (`in_comment(offset)`),
        or none: a name that is neither a `variable_name` nor a use `variable_uses` knows makes it manual."""
        if not self.var_rules:
            return
        associative: dict[bytes, bool] = {}
        for name, rule in self.var_rules.items():
            starts = set(self.var_renamed.get(name, ()))
            unsure = []
            for m in name_pattern(name).finditer(self.src):
                if m.start() in starts or in_comment(m.start()):
                    continue
                if is_variable_use(root, m.start(), m.end(), self.src, associative):
                    starts.add(m.start())
                else:
                    unsure.append(m.start())
            if not starts and not unsure:
                continue
            prs = (rule.entry.pr,)
            if unsure:
                lines = sorted({self.plan.line_of(at) for at in starts | set(unsure)})
                first_unsure = self.plan.line_of(unsure[0])
                self.findings.append(Finding(
                    min(starts | set(unsure)), "var-rename",
                    f"{rule.old} -> {rule.new}: rename every use by hand, on lines {', '.join(map(str, lines))} "
                    f"(line {first_unsure} spells the name where it may not be the variable)", None, prs))
                continue
            for start in sorted(starts):
                self.edits.append(Edit(start, start + len(name), rule.new.encode(), "var-rename",
                                       f"{rule.old} -> {rule.new}", prs))
