"""Shell scripts (bash): locate old Hydra keys, script paths, modules, env and shell variables.

Parsed with tree-sitter-bash, which parses verl's scripts (arrays, `$(( ))`, `case`) where bashlex
fails, and keeps parse errors local. The tree is only used to *classify* bytes (argument, string,
comment, heredoc, assignment); every edit is a byte span of the original source.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import threading
from functools import lru_cache

from migrator.edits import Edit, Finding, LocateResult, SourceNotParsed
from migrator.mapping import MappingSet
from migrator.rewrite import scan

KIND = "shell"
BASH_N_TIMEOUT = 60  # seconds

# Commands that run the script given as their first non-option argument.
SCRIPT_RUNNERS = frozenset({b"bash", b"sh", b"zsh", b"dash", b"source", b".", b"exec", b"nohup", b"time", b"srun"})
# Node types whose bytes are literal text the script passes on (after quote removal).
LITERAL_TYPES = frozenset({"word", "string_content", "raw_string", "heredoc_body", "number", "ansi_c_string"})
ARGUMENT_TYPES = frozenset({"word", "string", "raw_string", "concatenation", "number", "ansi_c_string"})
# A word starts a new shell word after these bytes (inside strings too: "a.b=1 c.d=2").
WORD_BOUNDARY = b" \t\n\r;|&()"


@lru_cache(maxsize=1)
def _parser():
    import tree_sitter
    import tree_sitter_bash

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


def parse(source: bytes):
    return _parser().parse(source)


def locate(source: bytes, mappings: MappingSet, path: str = "") -> LocateResult:
    tree = parse(source)
    locator = _ShellLocator(source, mappings)
    locator.visit(tree.root_node)
    return LocateResult(tuple(locator.edits), tuple(locator.findings))


class _ShellLocator:
    def __init__(self, source: bytes, mappings: MappingSet):
        self.src = source
        self.maps = mappings
        self.edits: list[Edit] = []
        self.findings: list[Finding] = []
        self.var_rules = {r.old.encode(): r for r in mappings.var_rules if r.applies_to(source)}
        self.env_rules = [r for r in mappings.env_rules if r.applies_to(source)]
        # Env renames without a value condition rename references ($OLD, ${OLD}) too.
        self.env_ref_renames = {r.old.encode(): r for r in self.env_rules if r.new and r.value is None}
        self.handled_literals: set[int] = set()
        # Removed arguments per command or array: (siblings, [(index, key, change)]), planned together
        # so that a run of removed arguments at the end of a `\` list leaves no dangling `\`.
        self.removals: dict[int, tuple[list, list]] = {}

    # -- traversal ---------------------------------------------------------------------------
    def visit(self, root) -> None:
        stack = [root]
        while stack:
            node = stack.pop()
            kind = node.type
            if kind == "comment":
                self.comment(node)
                continue
            if kind == "command":
                self.command(node)
            elif kind == "variable_assignment":
                self.assignment(node)
            elif kind == "variable_name":
                self.variable_name(node)
            elif kind in LITERAL_TYPES and node.start_byte not in self.handled_literals:
                self.literal(node)
            stack.extend(reversed(node.children))
        self.plan_removals()

    # -- node handlers ---------------------------------------------------------------------------
    def command(self, node) -> None:
        args = [c for c in node.children if c.type in ARGUMENT_TYPES or c.type == "command_name"]
        words = [self.src[a.start_byte:a.end_byte] for a in args]
        script_index = _script_position(words)
        # A "command" named by an override (`data.x=1 \` after a line that lost its `\`) is not one
        # anyone runs: rename inside it, but removing any word would make another word its name.
        named_by_override = len(args) > 1 and _is_override_word(words[0])
        for i, arg in enumerate(args):
            target = arg.children[0] if arg.type == "command_name" and arg.children else arg
            if i > 0 and words[i - 1] == b"-m" and target.type == "word":
                self.module_word(target)
                self.handled_literals.add(target.start_byte)
                continue
            # Removing the command name or the script a runner runs would promote the next word
            # into its place (`key= A=B` -> `A=B`, `nohup key= x.sh` -> `nohup x.sh`).
            in_command_slot = (i == 0 or i == script_index) and i < len(args) - 1
            self.argument(target, command=node, runs_script=i == script_index,
                          container=None if in_command_slot or named_by_override else (args, i))

    def argument(self, node, command, runs_script: bool, container=None) -> None:
        """An argument word: an override (`key=v`, `+key=v`, `~key`), a path, or other scan."""
        pieces = _literal_pieces(node)
        for piece in pieces:
            self.handled_literals.add(piece.start_byte)
        if not pieces:
            return
        first = pieces[0]
        starts_word = first.start_byte == _content_start(node)
        if starts_word:
            self.override_at(first, container)
        for piece in pieces:
            self.scan_text(piece, start_handled=piece is first and starts_word,
                           path_context=(command, node, runs_script))

    def override_at(self, piece, container) -> bool:
        """Handle `[+|++|~]key=...` at the start of `piece`; True when it is an override."""
        content_start, content_end = _literal_span(piece, self.src)
        m = scan.OVERRIDE_AT_START.match(self.src, content_start, content_end)
        if not m or not scan.is_override(m):
            return False
        key = m.group("key").decode("ascii")
        self.key_occurrence(key, m.start("key"), m.end("key"), container)
        return True

    def key_occurrence(self, key: str, start: int, end: int, container) -> None:
        """`container` is (sibling argument nodes, index) when the key's argument can be deleted."""
        change = self.maps.key(key)
        if change is None:
            return
        if change.action == "rename":
            self.edits.append(Edit(start, end, change.new.encode(), "key-rename",
                                   f"{key} -> {change.new}", change.prs))
        elif change.action == "warn":
            self.findings.append(Finding(start, "key-warn", f"{key}: {_first_note(change)}", change.hint,
                                         change.prs, severity="warning"))
        elif container is not None:
            siblings, index = container
            self.removals.setdefault(siblings[0].start_byte, (siblings, []))[1].append((index, key, change))
            if change.hint:
                self.findings.append(Finding(start, "key-removal", f"removed {key}", change.hint, change.prs,
                                             severity="info"))
        else:
            self.findings.append(Finding(start, "key-removal", f"{key} was removed; delete it by hand",
                                         change.hint, change.prs))

    def plan_removals(self) -> None:
        for siblings, removed in self.removals.values():
            removed.sort(key=lambda item: item[0])
            removed_starts = {siblings[i].start_byte for i, _, _ in removed}
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
            planned: list[tuple[int, int, str, tuple]] = []
            for index, key, change in removed:
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
                    start, end, first_key, prs = planned.pop()
                    span, key, change_prs = (start, max(end, span[1])), f"{first_key}, {key}", prs
                else:
                    change_prs = change.prs
                planned.append((span[0], span[1], key, change_prs))
            for start, end, key, prs in planned:
                self.edits.append(Edit(start, end, b"", "key-removal", f"removed {key}", prs))

    def scan_text(self, piece, start_handled: bool, path_context=None) -> None:
        """Keys at word starts, paths, and `-m module` inside one literal piece."""
        start, end = _literal_span(piece, self.src)
        for m in scan.OVERRIDE_IN_TEXT.finditer(self.src, start, end):
            if not scan.is_override(m):
                continue
            if m.start() == start:
                if start_handled or not _word_starts_at(piece, self.src):
                    continue
            elif self.src[m.start() - 1:m.start()] not in WORD_BOUNDARY:
                continue
            key = m.group("key").decode("ascii")
            self.key_occurrence(key, m.start("key"), m.end("key"), None)
        for m in scan.MODULE_AFTER_DASH_M.finditer(self.src, start, end):
            self.module_span(m.start("module"), m.end("module"))
        for old_start, old_end, change in scan.find_paths(self.src, start, end, self.maps):
            self.path_occurrence(old_start, old_end, change, path_context, in_comment=False)

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

    def comment(self, node) -> None:
        start, end = node.start_byte, node.end_byte
        if start == 0 and self.src.startswith(b"#!"):
            return
        for key_start, key_end, change in scan.find_keys_in_prose(self.src, start, end, self.maps):
            if change.action == "rename":
                self.edits.append(Edit(key_start, key_end, change.new.encode(), "key-rename",
                                       f"{change.old} -> {change.new} (in a comment)", change.prs, True))
        for m in scan.MODULE_AFTER_DASH_M.finditer(self.src, start, end):
            self.module_span(m.start("module"), m.end("module"), in_comment=True)
        for old_start, old_end, change in scan.find_paths(self.src, start, end, self.maps):
            if change.new is not None and not change.env and not change.args:
                self.path_occurrence(old_start, old_end, change, None, in_comment=True)

    def literal(self, node) -> None:
        """Text outside argument lists: assignment values, heredoc bodies, `${x:-default}` words."""
        self.handled_literals.add(node.start_byte)
        self.scan_text(node, start_handled=False, path_context=None)

    def assignment(self, node) -> None:
        name_node = node.child_by_field_name("name") or (node.children[0] if node.children else None)
        value = node.child_by_field_name("value")
        if value is not None and value.type == "array":
            for element in value.children:
                if element.type in ARGUMENT_TYPES:
                    elements = [c for c in value.children if c.type in ARGUMENT_TYPES]
                    self.argument(element, command=value, runs_script=False,
                                  container=(elements, elements.index(element)))
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


# -- byte-level helpers ---------------------------------------------------------------------------

def _invocation(change, new: str) -> str:
    """How to run a moved script now: `DEVICE=npu bash new.sh extra=args`."""
    return " ".join([*(f"{k}={v}" for k, v in change.env), "bash", new, *change.args])


def _is_override_word(word: bytes) -> bool:
    m = scan.OVERRIDE_AT_START.match(word.lstrip(b"\"'"))
    return m is not None and scan.is_override(m)


def _script_position(words: list[bytes]) -> int:
    """Which word of a command is the script it runs: the command itself, or the first operand
    after a chain of runners and their options (`nohup bash -x run.sh`)."""
    i = 0
    while i < len(words) and words[i].rsplit(b"/", 1)[-1] in SCRIPT_RUNNERS:
        i += 1
        while i < len(words) and words[i].startswith(b"-"):
            i += 1
    return i if i < len(words) else 0


def _first_note(change) -> str:
    for entry in reversed(change.entries):
        if entry.note:
            return entry.note
    return "has no effect in this release"


def _literal_pieces(node) -> list:
    """The literal text nodes of an argument, in order (not those inside `$(...)` or `${...}`)."""
    if node.type in ("word", "raw_string", "number", "ansi_c_string"):
        return [node]
    out = []
    for child in node.children:
        if child.type in ("word", "raw_string", "string_content", "number", "ansi_c_string"):
            out.append(child)
        elif child.type == "string":
            out.extend(_literal_pieces(child))
    return out


def _content_start(node) -> int:
    """Where an argument's text starts once its opening quote is removed."""
    while node.type == "concatenation" and node.children:
        node = node.children[0]
    if node.type in ("string", "raw_string"):
        return node.start_byte + 1
    if node.type == "ansi_c_string":
        return node.start_byte + 2
    return node.start_byte


def _literal_span(piece, src: bytes) -> tuple[int, int]:
    if piece.type == "raw_string":
        return piece.start_byte + 1, max(piece.start_byte + 1, piece.end_byte - 1)
    if piece.type == "ansi_c_string":
        return piece.start_byte + 2, max(piece.start_byte + 2, piece.end_byte - 1)
    return piece.start_byte, piece.end_byte


def _word_starts_at(piece, src: bytes) -> bool:
    """Is the start of this literal piece also the start of a shell word?"""
    node = piece
    if piece.type == "string_content":
        string = piece.parent
        if string is None or string.start_byte + 1 != piece.start_byte:
            return False  # text after an expansion inside the string: "${prefix}key=..."
        node = string
    return _word_starts_at_node(node)


def _word_starts_at_node(node) -> bool:
    parent = node.parent
    if parent is not None and parent.type == "concatenation":
        return parent.children[0].start_byte == node.start_byte and _word_starts_at_node(parent)
    return True


def _literal_value(node, src: bytes) -> str | None:
    """The value of `NAME=value` when it is plain text (no expansions)."""
    if node.type in ("word", "number"):
        return src[node.start_byte:node.end_byte].decode("utf-8", "replace")
    if node.type == "raw_string":
        return src[node.start_byte + 1:node.end_byte - 1].decode("utf-8", "replace")
    if node.type == "string":
        inner = [c for c in node.children if c.type not in ('"',)]
        if not inner:
            return ""
        if all(c.type == "string_content" for c in inner):
            return b"".join(src[c.start_byte:c.end_byte] for c in inner).decode("utf-8", "replace")
    return None


def _line_bounds(src: bytes, start: int, end: int) -> tuple[int, int]:
    """[line start, index of the newline ending the line holding `end`) (len(src) without one)."""
    line_start = src.rfind(b"\n", 0, start) + 1
    nl = src.find(b"\n", end)
    return line_start, (len(src) if nl == -1 else nl)


def _alone_on_its_line(src: bytes, start: int, end: int) -> bool:
    line_start, line_end = _line_bounds(src, start, end)
    if b"\n" in src[start:end]:
        return False
    after = src[end:line_end].rstrip(b"\r")
    return not src[line_start:start].strip() and (not after.strip() or after.lstrip().startswith(b"#"))


_CONTINUATION_TAIL = re.compile(rb"[ \t]*\\\r?\Z")


def _argument_removal_span(src: bytes, start: int, end: int) -> tuple[int, int]:
    """The bytes to delete so that an argument disappears cleanly from its command or array."""
    line_start, line_end = _line_bounds(src, start, end)
    before = src[line_start:start]
    after = src[end:line_end]
    if not before.strip():
        if not after.strip(b" \t\r") or _CONTINUATION_TAIL.match(after):
            if _CONTINUATION_TAIL.match(after) or line_end == len(src) or not _prev_line_continues(src, line_start):
                # The argument owns the whole line (`    key=v \`, or an array element): drop the line.
                return line_start, min(line_end + 1, len(src))
            # Last argument of a `\`-continued command: drop it with the `\` that led to it.
            prev_tail = _prev_line_continues(src, line_start)
            content_end = line_end - (1 if src[line_end - 1:line_end] == b"\r" else 0)
            return prev_tail, content_end
        # First on its line, followed by more arguments: drop it and the blanks after it.
        stop = end
        while stop < line_end and src[stop:stop + 1] in (b" ", b"\t"):
            stop += 1
        return start, stop
    # Shares the line with earlier words: drop the blanks before it and the argument.
    begin = start
    while begin > line_start and src[begin - 1:begin] in (b" ", b"\t"):
        begin -= 1
    return begin, end


def _prev_line_continues(src: bytes, line_start: int) -> int:
    """If the line before `line_start` ends in a `\\` continuation, where its trailing `[ \\t]*\\` starts."""
    if line_start == 0:
        return 0
    prev_start = src.rfind(b"\n", 0, line_start - 1) + 1
    prev = src[prev_start:line_start - 1]
    m = re.search(rb"[ \t]*\\\r?\Z", prev)
    if not m:
        return 0
    return prev_start + m.start()


# -- validation -----------------------------------------------------------------------------------

# `bash -n` costs a process start (~3 ms) per changed script, more than finding the edits. It can be
# skipped when no edit can change what bash's parser sees; these are the ways a rename of plain name
# characters inside a word could, each found by tests/test_property_shell_neutral.py or bash's parse.y:
# a word becomes or stops being a reserved word, a `[[ ]]` operator, `time`'s `-p` or `--`, or a builtin
# after which `a=(x)` is legal (the declaration builtins, `alias`, `eval`, `let`); a name before `=`
# becomes or stops being an identifier (`a.b=(x)` is an error); a word runs into `(` (`f()`, `@(glob)`)
# or `[`; a word right before `<` or `>` becomes or stops being an fd number (`fi 2>x` is legal, `fi b>x`
# and `fi 99999999999>x` are not) or `{name}` (`{a}>x`); a word after `>&` or `<&` starts with `-`
# (`>&-1` closes the fd and leaves `1` as an argument); a word is joined to its neighbour by a `\`-newline
# continuation (`f\<newline>i` is `fi`); and a here-document delimiter changes. Removing a word can also
# change it when the word is not an argument: a redirection's target (`echo 2> k=1`), a command name,
# text inside quotes that only looks like a word (`"a k='x" b'`), a line after a `\` that a comment
# swallows (`( #c \<newline>k=1<newline>)` empties the subshell); when the word is glued to the one
# before by a continuation (`i\<newline>f`); and when a removed line's newline goes, so the next line
# joins the `\`-continued command (`x \<newline>k=1<newline>(y)` becomes `x (y)`).
_PLAIN_NAME = re.compile(rb"[A-Za-z0-9_./-]+\Z")
_RUN_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./:+,@%=-")
_PARSER_WORDS = frozenset({
    b"if", b"then", b"else", b"elif", b"fi", b"case", b"esac", b"for", b"select", b"while", b"until", b"do",
    b"done", b"in", b"function", b"time", b"coproc",
    b"declare", b"typeset", b"local", b"export", b"readonly", b"builtin", b"command", b"alias", b"eval", b"let",
})
_TEST_OPERATOR = re.compile(rb"-(?:[A-Za-z]{1,2}|-)\Z")  # also `time -p --`
_IDENTIFIER_BEFORE_EQUALS = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*\+?\Z")
_CONTINUATION = re.compile(rb"\\\r?\n")


def _run_context_is_special(source: bytes, start: int, end: int) -> bool:
    """Whether bash's parser reads the run `source[start:end]` of word bytes with what is around it."""
    before, after = source[max(0, start - 3):start], source[end:end + 1]
    if after in (b"(", b"[", b"<", b">", b"\\") or before[-1:] in (b"[", b"]", b"\\") or \
            before.endswith((b"\\\n", b"\\\r\n")):
        return True
    if after == b"}":  # `{name}>x`, also across continuations
        at = end + 1
        while (m := _CONTINUATION.match(source, at)):
            at = m.end()
        if source[at:at + 1] in (b"<", b">"):
            return True
    at = _back_over(source, start, blanks=True)  # the word after `>&` / `<&`
    return source[max(0, at - 2):at] in (b">&", b"<&")


def _back_over(text: bytes, at: int, blanks: bool) -> int:
    """`at` moved back over `\\` continuations, and over blanks too when asked."""
    while True:
        if blanks and at and text[at - 1] in b" \t":
            at -= 1
        elif text[max(0, at - 2):at] == b"\\\n":
            at -= 2
        elif text[max(0, at - 3):at] == b"\\\r\n":
            at -= 3
        else:
            return at


def edits_keep_validity(source: bytes, edits) -> bool:
    """True when `bash -n` must judge the edited script exactly as the original, and tree-sitter
    parses the original without error: then the engine need not run `bash -n`.

    Holds when every edit is either a rename of plain name characters inside one run of word
    characters that no other edit touches, where neither the old nor the new run is a word bash's
    parser treats specially (see `_PARSER_WORDS`), or the removal of whole plain arguments from the
    middle or end of a command (`_removal_keeps_validity`). Anything else (quotes, expansions,
    here-documents, a command's first word) goes to `bash -n`.
    """
    if not edits or b"<<" in source or source.count(b"\r") != source.count(b"\r\n"):
        return False  # CRLF is checked as LF (`validate`); a lone CR is a word byte to bash
    ordered = sorted(edits, key=lambda e: (e.start, e.end))
    pieces, landed, cursor, length = [], [], 0, 0
    for edit in ordered:
        if edit.start < cursor:
            return False
        pieces.append(source[cursor:edit.start])
        length += edit.start - cursor
        landed.append(length)
        pieces.append(edit.replacement)
        length += len(edit.replacement)
        cursor = edit.end
    pieces.append(source[cursor:])
    after = b"".join(pieces)
    runs_seen, tree = set(), None
    for edit, at in zip(ordered, landed):
        if not edit.replacement:
            tree = tree or parse(source)
            if not _removal_keeps_validity(source, edit.start, edit.end, after, at, tree.root_node):
                return False
            continue
        old = source[edit.start:edit.end]
        if not (_PLAIN_NAME.match(old) and _PLAIN_NAME.match(edit.replacement)):
            return False
        start, end = _run_around(source, edit.start, edit.end)
        new_start, new_end = _run_around(after, at, at + len(edit.replacement))
        if start in runs_seen:
            return False
        runs_seen.add(start)
        old_run = source[start:end]
        new_run = after[new_start:new_end]
        if _run_context_is_special(source, start, end) or _run_context_is_special(after, new_start, new_end):
            return False
        for run in (old_run, new_run):
            if run in _PARSER_WORDS or _TEST_OPERATOR.match(run):
                return False
        equals = old_run.find(b"=")
        if equals != -1 and edit.start < start + equals:
            new_equals = new_run.find(b"=")
            if bool(_IDENTIFIER_BEFORE_EQUALS.match(old_run[:equals])) != \
                    bool(_IDENTIFIER_BEFORE_EQUALS.match(new_run[:new_equals])):
                return False
    return not (tree or parse(source)).root_node.has_error


def _run_around(text: bytes, start: int, end: int) -> tuple[int, int]:
    while start > 0 and text[start - 1] in _RUN_BYTES:
        start -= 1
    while end < len(text) and text[end] in _RUN_BYTES:
        end += 1
    return start, end


# A removed argument bash reads as one plain word: `[+~]key[=value]`, the value made of plain bytes,
# '...' strings, "..." strings holding only plain text and `$NAME` / `${NAME}`, and `$NAME` / `${NAME}`.
_SIMPLE_EXPANSION = rb"\$(?:[A-Za-z_][A-Za-z0-9_]*|\{[A-Za-z_][A-Za-z0-9_]*\})"
_REMOVED_WORD = re.compile(
    rb"[+~]{0,2}[A-Za-z_][A-Za-z0-9_.@/:-]*(?:=(?:[A-Za-z0-9_.,:/@%+=\[\]-]|'[^'\n]*'"
    rb"|\"(?:[^\"\\`$\n]|" + _SIMPLE_EXPANSION + rb")*\"|" + _SIMPLE_EXPANSION + rb")*)?")
_BLANKS = re.compile(rb"(?:[ \t]|\\\r?\n)+")
# Bytes that end a word and start nothing: a junction at one of them keeps two words apart.
_SEPARATORS = frozenset(b" \t\r\n;&|()")  # `\r` only before `\n` (see `edits_keep_validity`)


def _removal_keeps_validity(source: bytes, start: int, end: int, after: bytes, at: int, root) -> bool:
    """Removing source[start:end] (now at `after[at]`) keeps bash's parse when it deletes only blanks,
    `\\` continuations, whole plain words (`_REMOVED_WORD`) and at most the newline ending a line it
    empties; when a word that stays (not a reserved word, not a `[[ ]]` operator) precedes the removal
    in the same command, so the command keeps its name and is not emptied; when what follows is the
    end of the command or another plain argument; and when the two sides stay apart. Each removed word
    must be an argument of a command or an array element to tree-sitter too (not a redirection's target,
    not text in quotes or a comment), and not be glued to the word before by a continuation. A removed
    newline must be followed by a blank line or the end, or the next line would join the command."""
    removed = source[start:end]
    if source[start - 1:start] == b"\\":
        return False  # the first byte removed is escaped (`a\ ` is one word): its backslash would escape the next
    if removed.endswith(b"\n") and not removed.endswith(b"\\\n") and not removed.endswith(b"\\\r\n"):
        if start and source[start - 1:start] != b"\n":
            return False
        rest = at
        while rest < len(after) and after[rest] in b" \t":
            rest += 1
        if after[rest:rest + 1] not in (b"", b"\n", b"\r"):  # `\r` only before `\n`
            return False  # the next line would join the command the removed line ended (`x \\` `k=1` `(y)`)
        removed = removed[:-2] if removed.endswith(b"\r\n") else removed[:-1]
    position, words = 0, 0
    while position < len(removed):
        blanks = _BLANKS.match(removed, position)
        if blanks:
            position = blanks.end()
            continue
        word = _REMOVED_WORD.match(removed, position)
        if word is None or word.end() == position:
            return False
        absolute_start, absolute_end = start + word.start(), start + word.end()
        before = _byte_before(source, absolute_start)  # through continuations: `i\\<newline>f` is `if`
        following = source[absolute_end] if absolute_end < len(source) else 0x0A
        if before not in b" \t\n" or following not in b" \t\r\n;&|)":
            return False  # part of a longer word (`x"y"`, `a\<newline>b`, `key=1#c`)
        node = root.descendant_for_byte_range(absolute_start, absolute_end)
        if node is None or (node.start_byte, node.end_byte) != (absolute_start, absolute_end) or \
                node.type not in ARGUMENT_TYPES or node.parent is None or node.parent.type not in ("command", "array"):
            return False  # not an argument to tree-sitter: inside quotes, a redirection's target, a command
        words += 1
        position = word.end()
    if not words:
        return False
    previous = _word_before(after, at)
    if previous is None or previous == _GLUED or previous in _PARSER_WORDS or _TEST_OPERATOR.match(previous) or \
            not re.search(rb"[A-Za-z0-9_$\"']", previous) or previous.startswith((b"{", b"}", b"!", b"[", b"]")):
        return False
    following_word = _word_after(after, at)
    if following_word is not None and (following_word == _GLUED or following_word in _PARSER_WORDS
                                       or _TEST_OPERATOR.match(following_word)
                                       or following_word.startswith((b"{", b"}", b"!", b"[", b"]", b"(", b"<<"))):
        return False
    left, right = _byte_before(after, at), _byte_after(after, at)
    return left in _SEPARATORS or right in _SEPARATORS


def _byte_before(text: bytes, at: int) -> int:
    """The byte before `at`, looking through `\\` continuations; a newline at the start."""
    at = _back_over(text, at, blanks=False)
    if at == 0:
        return 0x0A
    if text[at - 1] in b" \t" and at >= 2 and text[at - 2] == 0x5C:
        return 0x5C  # an escaped blank is part of a word
    return text[at - 1]


def _byte_after(text: bytes, at: int) -> int:
    while (m := _CONTINUATION.match(text, at)):
        at = m.end()
    return text[at] if at < len(text) else 0x0A


def _word_before(text: bytes, at: int) -> bytes | None:
    """The word before `at` in the same command (across blanks and continuations), or None when the
    command starts there."""
    at = end = _back_over(text, at, blanks=True)
    while at and text[at - 1] not in _SEPARATORS:
        at -= 1
    if _back_over(text, at, blanks=False) != at:
        return _GLUED  # the word goes on before a continuation: `i\<newline>f` is `if`
    return text[at:end] or None


def _word_after(text: bytes, at: int) -> bytes | None:
    """The word after `at` in the same command, or None when the command ends there (or a comment)."""
    m = _BLANKS.match(text, at)
    if m:
        at = m.end()
    end = at
    while end < len(text) and text[end] not in _SEPARATORS:
        end += 1
    word = text[at:end]
    if word.endswith(b"\\") and _CONTINUATION.match(text, end - 1):
        return _GLUED  # the word goes on after a continuation
    return None if not word or word.startswith(b"#") else word


# What `_word_before` / `_word_after` return for a word split by a `\\` continuation: bash reads it
# joined (`i\<newline>f` is the reserved word `if`), so the proof gives up.
_GLUED = b"\\\n"


def validate(before: bytes, after: bytes) -> str | None:
    """None when `after` is a valid script; else why not. CRLF is normalised only for checking."""
    bash = shutil.which("bash")
    if bash:
        error = _bash_n(bash, after)
        if error is None:
            return None
        if _bash_n(bash, before) is not None:
            raise SourceNotParsed(f"the script does not pass `bash -n` before any edit: {_bash_n(bash, before)}")
        return f"the edited script would not pass `bash -n`: {error}"
    # No bash on this machine: a re-parse must not add tree-sitter errors.
    if _error_count(after) > _error_count(before):
        return "the edited script would have new parse errors"
    return None


def _bash_n(bash: str, source: bytes) -> str | None:
    # A file argument, not a pipe: piping a 50 MB script through communicate() took 13 s, and bash
    # names lines only for files. The file is unnamed where the system has /dev/fd (it vanishes with
    # this process, even when killed: no copy of the user's script is left in the temp directory), else
    # a named temp file. Messages start with the script's name (`bash: ` for /dev/fd), dropped below.
    # stderr goes to a file and a timer kills a hung bash: `run(timeout=...)` waits by polling with
    # sleeps (~0.3 ms more per check), and a pipe could be held open by a child of a hung process.
    # No new session for the kill: it stops subprocess from using vfork, which doubled the cost.
    unnamed = os.path.isdir("/dev/fd")
    script_file = tempfile.TemporaryFile() if unnamed else \
        tempfile.NamedTemporaryFile(prefix="verl-migrate-check-", suffix=".sh")
    with script_file as script, tempfile.TemporaryFile() as errors:
        script.write(source.replace(b"\r\n", b"\n"))
        script.flush()
        script.seek(0)
        name = f"/dev/fd/{script.fileno()}" if unnamed else script.name
        proc = subprocess.Popen([bash, "-n", name], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=errors, env={"PATH": os.environ.get("PATH", ""), "LC_ALL": "C"},
                                pass_fds=(script.fileno(),) if unnamed else ())
        timed_out = threading.Event()

        def kill() -> None:
            timed_out.set()
            proc.kill()

        killer = threading.Timer(BASH_N_TIMEOUT, kill)
        killer.start()
        try:
            proc.wait()
        finally:
            killer.cancel()
        errors.seek(0)
        stderr = errors.read()
    if proc.returncode == 0:
        return None
    if timed_out.is_set():
        return f"`bash -n` did not finish within {BASH_N_TIMEOUT} s"
    message = stderr.decode("utf-8", "replace").strip().splitlines()
    first = message[0] if message else f"exit {proc.returncode}"
    for prefix in (f"{name}: ", f"{os.path.basename(bash)}: ", "bash: "):
        if first.startswith(prefix):
            return first[len(prefix):]
    return first


def _error_count(source: bytes) -> int:
    stack, count = [parse(source).root_node], 0
    while stack:
        node = stack.pop()
        if node.type == "ERROR" or node.is_missing:
            count += 1
        stack.extend(node.children)
    return count


# -- read-only views for other tools (lint) -------------------------------------------------------

def override_occurrences(source: bytes, tree=None) -> list[tuple[str, str, int, int]]:
    """Every Hydra override the rewriter would judge, as (prefix, key, start, end) byte spans of the key.

    The same traversal as `locate` (arguments, array elements, words inside strings, not comments),
    so the lint and the rewriter agree on what an override is.
    """
    collector = _OverrideCollector(source)
    collector.visit((tree or parse(source)).root_node)
    return collector.found


class _OverrideCollector(_ShellLocator):
    def __init__(self, source: bytes):
        from migrator.mapping.compose import MappingSet

        super().__init__(source, MappingSet("", "", ()))
        self.found: list[tuple[str, str, int, int]] = []

    def key_occurrence(self, key: str, start: int, end: int, removable_node) -> None:
        prefix = "++" if self.src[max(0, start - 2):start] == b"++" else \
            self.src[start - 1:start].decode("latin-1") if start and self.src[start - 1:start] in (b"+", b"~") else ""
        self.found.append((prefix, key, start, end))

    def comment(self, node) -> None:
        return
