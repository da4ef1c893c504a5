"""VM002 lost line continuation: a `\\` that does not continue the line, or an override that bash
runs as a command because the line before it does not end in `\\`.

`key=v \\  # comment` and `key=v \\ ` (spaces after the backslash) escape a space instead of the
newline: the command ends on that line, and the next line starts a new command. bash then runs
`trainer.nnodes=1` as a program ("command not found") and the job starts without those overrides.
"""

from __future__ import annotations

import re

from migrator.lint.registry import Problem, check

# An unescaped `\` followed by blanks, optionally a comment, then the end of the line.
_BROKEN_TAIL = re.compile(rb"(?<!\\)(?:\\\\)*(\\)[ \t]+(?:#[^\n]*)?\r?$", re.M)
_OVERRIDE_COMMAND = re.compile(r"(?:\+\+|\+|~)?[A-Za-z_][\w-]*(?:\.[\w-]+)+(?:=|$)")
_NOT_CODE = frozenset({"comment", "string", "raw_string", "ansi_c_string", "heredoc_body", "heredoc_content"})


@check("VM002", "lost-continuation")
def lost_continuation(script):
    broken_lines = set()
    for m in _BROKEN_TAIL.finditer(script.src):
        offset = m.start(1)
        node = script.tree.root_node.descendant_for_byte_range(offset, offset + 1)
        if node is None or any(n.type in _NOT_CODE for n in (node, *script.ancestors(node))):
            continue
        line = script.line_col(offset)[0]
        broken_lines.add(line)
        tail = m.group(0)[m.end(1) - m.start(0):].strip()
        what = "a comment" if tail.startswith(b"#") else "spaces"
        yield Problem(offset, f"`\\` followed by {what} does not continue the line: the command ends here "
                              "and the next line runs as a separate command",
                      "put the comment on its own line above, and end the line with `\\` alone")
    for node, words in script.commands:
        if not words or not _OVERRIDE_COMMAND.match(words[0]):
            continue
        name = node.child_by_field_name("name") or node.children[0]
        line = script.line_col(name.start_byte)[0]
        if line - 1 in broken_lines:
            continue  # the broken `\\` above is the finding
        yield Problem(name.start_byte, f"`{words[0].split('=')[0]}=...` starts a command: the line before does "
                                       "not end with `\\`, so bash runs the override as a program and the "
                                       "entry point never sees it",
                      "end the previous line with `\\`")
