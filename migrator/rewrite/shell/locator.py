"""The walker that plans a script's edits: one pass over the tree, handing each node to the planner of its
entry kinds (`keys`, `moves`, `variables`, `launches`, `defaults`, `removals`), which share one `ScriptPlan`."""

from __future__ import annotations

import bisect
import re

from migrator.codes import RULES
from migrator.edits import Edit, Finding, LocateResult
from migrator.mapping import MappingSet
from migrator.rewrite import scan
from migrator.rewrite.shell.defaults import DefaultEdits
from migrator.rewrite.shell.entry_points import expanded_names, is_override_list, may_start_launch, verl_entry_index
from migrator.rewrite.shell.entrypoint import CONFIG_NAME_FLAG, config_option, find_launch
from migrator.rewrite.shell.keys import KeyEdits
from migrator.rewrite.shell.launches import Launches
from migrator.rewrite.shell.markers import OPEN_STEP_HINT, marker_at, open_step_message
from migrator.rewrite.shell.moves import MoveEdits
from migrator.rewrite.shell.plan import ScriptPlan
from migrator.rewrite.shell.removals import ArgumentRemovals
from migrator.rewrite.shell.syntax import (
    ARGUMENT_TYPES,
    LITERAL_TYPES,
    WORD_BOUNDARY,
    command_arguments,
    content_start,
    is_override_word,
    literal_pieces,
    literal_span,
    parse,
    script_position,
    text_glued_after,
    text_glued_before,
    word_starts_at,
)
from migrator.rewrite.shell.variables import VariableEdits

_EXPANSION = re.compile(rb"\$\{?([A-Za-z_][A-Za-z0-9_]*)")
# The caller's arguments in a function body: `"$@"`, `$*`, `${@}`, `${*}`.
_CALLERS_ARGUMENTS = re.compile(rb"\$\{?[@*]")
# The words of running text: the runs between WORD_BOUNDARY bytes.
_TEXT_WORD = re.compile(rb"[^" + re.escape(WORD_BOUNDARY) + rb"]+")


def _overrides_at_word_starts(src: bytes, start: int, end: int):
    """`OVERRIDE_IN_TEXT` tried at each word start of src[start:end] (and at `start`): the only places the
    scan keeps a match. Trying it at every byte (`finditer`) re-read a run of letters from each of its
    bytes, quadratic in the run's length."""
    for word in _TEXT_WORD.finditer(src, start, end):
        m = scan.OVERRIDE_IN_TEXT.match(src, word.start(), end)
        if m is not None:
            yield m


def locate(source: bytes, mappings: MappingSet, path: str = "") -> LocateResult:
    tree = parse(source)
    plan = ScriptPlan(source, mappings)
    if mappings.only_defaults and b"<<" not in source:
        # No old token but value defaults' (the prefilter's word): no key, path, module or variable entry
        # applies, so the launches of main_ppo are all there is to plan. A heredoc may hold a Python
        # program, which goes to the Python rewriter: the walk.
        DefaultEdits(plan).plan_alone(tree.root_node)
        blocks = ()
    else:
        walker = ScriptWalker(plan, tree.root_node)
        walker.walk()
        blocks = tuple(walker.blocks)
    if plan.findings and not plan.edits and tree.root_node.has_error:
        # Nothing to validate, and tree-sitter's recovery decided what the steps are about: a script bash
        # cannot parse is said to be that, as one with edits is (validity.validate).
        from migrator.rewrite.shell.validity import unparsed_by_bash

        unparsed_by_bash(source)
    return LocateResult(tuple(plan.edits), tuple(plan.findings), blocks)


class ScriptWalker:
    """One walk over a script's tree. `keys` judges each key occurrence (`KeyEdits` unless a read-only
    view records them instead); without `read_comments` and `plan_defaults` comments and missing
    defaults are not looked at."""

    def __init__(self, plan: ScriptPlan, root, keys=None, read_comments: bool = True, plan_defaults: bool = True):
        self.root = root
        self.src = plan.src
        self.maps = plan.maps
        self.edits = plan.edits
        self.findings = plan.findings
        self.removals = ArgumentRemovals(plan)
        self.launches = Launches(plan, self.removals, root)
        self.keys = keys if keys is not None else KeyEdits(plan, self.launches, self.removals)
        self.moves = MoveEdits(plan, self.launches)
        self.variables = VariableEdits(plan)
        self.defaults = DefaultEdits(plan) if plan_defaults else None
        self.read_comments = read_comments
        self.handled_literals: set[int] = set()
        self.comment_spans: list[tuple[int, int]] = []  # in source order
        self.comment_command = None  # (end, context) of a commented-out command continued by `\`
        # Where the key occurrence at hand is: True where Hydra reads it (a verl command's arguments, a
        # string or heredoc that holds a launch), False in the arguments of a command that runs no verl
        # entry point (`echo`, `grep`, a user's tool), or the name of the variable whose plain value it is
        # (`X=key=v`: read only where `$X` goes into a verl command). A rename obeys it like a removal.
        self.reads: bool | bytes = True
        self.launch_variables: set[bytes] = set()  # names assigned text that holds a verl launch
        self.read_expanded: set[bytes] = set()  # names expanded after such a variable (`$LAUNCH $ARGS`)
        self.launch_functions: set[bytes] = set()  # functions that hand their arguments to a verl launch
        self.blocks: list[tuple[int, int, str]] = []  # Python programs of heredocs (LocateResult.blocks)

    # -- traversal ---------------------------------------------------------------------------
    def walk(self) -> None:
        stack = [self.root]
        while stack:
            node = stack.pop()
            kind = node.type
            if kind == "comment":
                self.comment_spans.append((node.start_byte, node.end_byte))
                if self.read_comments:
                    self.comment(node)
                continue
            if kind == "function_definition":
                self._note_function(node)
            if kind == "command":
                self.command(node)
            elif kind == "variable_assignment":
                self.assignment(node)
            elif kind == "variable_name":
                self.variables.variable_name(node)
            elif kind in LITERAL_TYPES and node.start_byte not in self.handled_literals:
                self.literal(node)
            stack.extend(reversed(node.children))
        self.removals.plan_edits()
        self.keys.plan_renames(self.removals.verl_expanded | self.read_expanded)
        self.variables.plan_var_renames(self.root, self.in_comment)
        self.launches.plan_appends()
        self.launches.report_forks()

    def in_comment(self, offset: int) -> bool:
        at = bisect.bisect_right(self.comment_spans, (offset, len(self.src) + 1)) - 1
        return at >= 0 and self.comment_spans[at][0] <= offset < self.comment_spans[at][1]

    # -- node handlers ---------------------------------------------------------------------------
    def command(self, node) -> None:
        self.launches.plan_command(node)
        args = command_arguments(node)
        words = [self.src[a.start_byte:a.end_byte] for a in args]
        script_index = script_position(words)
        # Only a verl entry point reads Hydra overrides: elsewhere a removed key is reported, not deleted.
        entry = verl_entry_index(words)
        if entry is not None:  # every node after it: `$ARGS` and `${ARGS[@]}` are expansions, not words
            self.removals.note_expanded(expanded_names(self.src[args[entry].end_byte:node.end_byte]))
        elif args and self._reads_in_other_command(words[:1]):  # `$LAUNCH $ARGS`: LAUNCH holds a verl launch
            self.read_expanded |= expanded_names(self.src[args[0].end_byte:node.end_byte])
        # A "command" named by an override (`data.x=1 \` after a line that lost its `\`) is not one
        # anyone runs: rename inside it, but removing any word would make another word its name.
        named_by_override = len(args) > 1 and is_override_word(words[0])
        others_read = entry is not None or named_by_override or self._reads_in_other_command(words)
        for i, arg in enumerate(args):
            target = arg.children[0] if arg.type == "command_name" and arg.children else arg
            if i > 0 and words[i - 1] == b"-m" and target.type == "word":
                self.moves.module_word(target)
                self.handled_literals.add(target.start_byte)
                continue
            # Removing the command name or the script a runner runs would promote the next word
            # into its place (`key= A=B` -> `A=B`, `nohup key= x.sh` -> `nohup x.sh`).
            in_command_slot = (i == 0 or i == script_index) and i < len(args) - 1
            removable = entry is not None and i > entry and not in_command_slot and not named_by_override
            self.reads = others_read or i == 0
            self.argument(target, command=node, runs_script=i == script_index,
                          container=(args, i) if removable else None)
            self.reads = True
        if len(args) > 1 and self.defaults is not None:
            self.defaults.value_defaults(node, args, words)

    def _note_function(self, node) -> None:
        """A function whose body runs a verl launch with the caller's arguments (`"$@"`, `$*`): a call of it
        hands its arguments to Hydra."""
        name = node.child_by_field_name("name")
        body = self.src[node.start_byte:node.end_byte]
        if name is not None and _CALLERS_ARGUMENTS.search(body) and holds_launch(body):
            self.launch_functions.add(self.src[name.start_byte:name.end_byte])

    def _reads_in_other_command(self, words: list[bytes]) -> bool:
        """Does Hydra read the arguments of a command that runs no verl entry point? Only where one of its
        words holds a verl launch (`sbatch --wrap "python3 -m verl..."`, `bash -c "..."`) or its name is a
        variable assigned one (`$BASE_CMD key=v`)."""
        if any(holds_launch(word) for word in words):
            return True
        if words and words[0] in self.launch_functions:  # `train key=v` after `train() { python3 -m verl... "$@"; }`
            return True
        # `$BASE_CMD key=v`, `eval "$CMD key=v"`: a word expands a variable that holds a launch
        return any(m.group(1) in self.launch_variables for word in words for m in _EXPANSION.finditer(word))

    def argument(self, node, command, runs_script: bool, container=None) -> None:
        """An argument word: an override (`key=v`, `+key=v`, `~key`), a path, or other scan."""
        pieces = literal_pieces(node)
        for piece in pieces:
            self.handled_literals.add(piece.start_byte)
        if not pieces:
            return
        first = pieces[0]
        starts_word = first.start_byte == content_start(node)
        if starts_word:
            self.override_at(first, container, node.end_byte)
        for piece in pieces:
            self.scan_text(piece, start_handled=piece is first and starts_word,
                           path_context=(command, node, runs_script))

    def override_at(self, piece, container, argument_end: int) -> bool:
        """Handle `[+|++|~]key=...` at the start of `piece`; True when it is an override."""
        content_start, content_end = literal_span(piece, self.src)
        m = scan.OVERRIDE_AT_START.match(self.src, content_start, content_end)
        if not m or not scan.is_override(m):
            return False
        key = m.group("key").decode("ascii")
        # An unquoted word's value may go on in a quoted piece (`key="v"`); a string's ends with it.
        limit = argument_end if piece.type == "word" else content_end
        self.keys.key_occurrence(key, m.start("key"), m.end("key"), container, limit, reads=self.reads)
        return True

    def scan_text(self, piece, start_handled: bool, path_context=None) -> None:
        """Keys at word starts, paths, and `-m module` inside one literal piece."""
        start, end = literal_span(piece, self.src)
        for m in _overrides_at_word_starts(self.src, start, end):
            if not scan.is_override(m):
                continue
            if m.start() == start:
                if start_handled or not word_starts_at(piece, self.src):
                    continue
            elif self.src[m.start() - 1:m.start()] not in WORD_BOUNDARY:
                continue
            key = m.group("key").decode("ascii")
            self.keys.key_occurrence(key, m.start("key"), m.end("key"), None, end, reads=self.reads)
        for m in scan.MODULE_AFTER_DASH_M.finditer(self.src, start, end):
            self.moves.module_span(m.start("module"), m.end("module"))
        for old_start, old_end, change in scan.find_paths(self.src, start, end, self.maps):
            if change.new is not None and (text_glued_after(piece, old_end, self.src) or (
                    old_start == start and text_glued_before(piece, old_start, self.src))):
                self.findings.append(Finding(old_start, "path-move", f"{change.old} moved to {change.new}; not "
                                             "edited: bash reads more text glued to it as one word", None,
                                             change.prs))
                continue
            self.moves.path_occurrence(old_start, old_end, change, path_context, in_comment=False)

    def comment(self, node) -> None:
        start, end = node.start_byte, node.end_byte
        if start == 0 and self.src.startswith(b"#!"):
            return
        marker = marker_at(self.src, start, end)
        if marker is not None:  # an open manual step an earlier run marked: reported until it is deleted
            code = marker.code if marker.code in RULES else None
            self.findings.append(Finding(start, "key-removal", open_step_message(marker), OPEN_STEP_HINT,
                                         marker.prs, code=code))
            return
        context = self.commented_context(start, end)
        for key_start, key_end, change in scan.find_keys_in_prose(self.src, start, end, self.maps, context):
            if change.action == "rename":
                self.edits.append(Edit(key_start, key_end, change.new.encode(), "key-rename",
                                       f"{change.old} -> {change.new} (in a comment)", change.prs, True))
        for m in scan.MODULE_AFTER_DASH_M.finditer(self.src, start, end):
            self.moves.module_span(m.start("module"), m.end("module"), in_comment=True)
        for old_start, old_end, change in scan.find_paths(self.src, start, end, self.maps):
            if change.new is not None and not change.env and not change.args:
                self.moves.path_occurrence(old_start, old_end, change, None, in_comment=True)

    def commented_context(self, start: int, end: int):
        """The entry point a commented-out command runs (`# python -m X \\` and the `#` lines it continues
        into), else the file's when that is not main_ppo's: its keys are that config's."""
        text = self.src[start:end].lstrip(b"#")
        words = [w for w in text.split() if w != b"\\"]
        launch = find_launch(words)
        if launch is not None:
            option = config_option(words, CONFIG_NAME_FLAG, launch.index + 1)
            context = self.maps.context(launch.module, option[2].decode("ascii", "replace") if option else None)
        elif self.comment_command is not None and not self.src[self.comment_command[0]:start].strip():
            context = self.comment_command[1]
        else:
            file_context = self.launches.file_context
            context = file_context if file_context is not None and \
                not self.maps.is_ppo_config(file_context.config) else None
        continued = text.rstrip().endswith(b"\\") and (launch is not None or self.comment_command is not None)
        self.comment_command = (end, context) if continued else None
        return context

    def literal(self, node) -> None:
        """Text outside argument lists: assignment values, heredoc bodies, `${x:-default}` words."""
        self.handled_literals.add(node.start_byte)
        if node.type == "heredoc_body" and python_heredoc(self.src, node):
            # `python3 - <<'PY'`: the body is a Python program (a quoted delimiter: bash hands it over as
            # written), a block for the Python rewriter, which the caller runs (LocateResult.blocks).
            self.blocks.append((node.start_byte, node.end_byte, "python"))
            return
        self.reads = self._reads_in_value(node)
        self.scan_text(node, start_handled=False, path_context=None)
        self.reads = True

    def _reads_in_value(self, node) -> bool | bytes:
        """An assignment's value is read where its variable goes into a verl command, unless the value
        holds a launch itself (`BASE_CMD="python3 -m verl... key=v"`); other literals where they are."""
        parent = node.parent
        while parent is not None and parent.type not in ("variable_assignment", "command", "heredoc_body"):
            parent = parent.parent
        if parent is None or parent.type != "variable_assignment":
            return True
        name = parent.child_by_field_name("name")
        value = parent.child_by_field_name("value")
        if name is None or value is None or value.type == "array":
            return True
        name_text = self.src[name.start_byte:name.end_byte]
        return True if name_text in self.launch_variables else name_text

    def assignment(self, node) -> None:
        value = node.child_by_field_name("value")
        name = node.child_by_field_name("name")
        name_text = self.src[name.start_byte:name.end_byte] if name is not None else b""
        if value is not None and name is not None and holds_launch(self.src[value.start_byte:value.end_byte]):
            self.launch_variables.add(name_text)  # `CMD="python3 -m verl..."`, `CMD=(python3 -m verl ...)`
        if value is not None and value.type == "array":
            elements = [c for c in value.children if c.type in ARGUMENT_TYPES]
            overrides_only = is_override_list([self.src[e.start_byte:e.end_byte] for e in elements])
            if elements:
                self.removals.note_array(elements[0].start_byte, name_text, overrides_only)
            # Like a removal, a rename in an array of words that are not all overrides waits for the array
            # to go into a verl command (`"${ARGS[@]}"`); verl's style (`(a.b=1 +c.d=2)`) is read as it is.
            self.reads = True if overrides_only or name_text in self.launch_variables else name_text
            for index, element in enumerate(elements):
                self.argument(element, command=value, runs_script=False, container=(elements, index))
            self.reads = True
        self.variables.env_assignment(node, value)


# What separates a command's words inside a string, an array or a function body, for `holds_launch`.
_NOT_IN_WORDS = bytes.maketrans(b"\"'()`;&|{}", b" " * 10)


def holds_launch(text: bytes) -> bool:
    """Does `text` (a word, a string, an array, a function's body) spell a command that runs a verl entry point
    (`entry_points.verl_entry_index` from one of its words on)? A path that merely names verl
    (`/data/verl/gsm8k`, `--ckpt verl/out`) does not."""
    from migrator.layout import verl_layout

    if not any(marker in text for marker in verl_layout().launch_markers):
        return False
    words = text.translate(_NOT_IN_WORDS).split()
    return any(verl_entry_index(words[i:]) is not None for i, word in enumerate(words) if may_start_launch(word))


def python_heredoc(src: bytes, body) -> bool:
    """Is this heredoc's body the program a Python interpreter reads (`python3 - <<'PY'`, `python <<"EOF"`),
    its delimiter quoted so that bash expands nothing in it?"""
    redirect = body.parent
    statement = redirect.parent if redirect is not None else None
    if statement is None or statement.type != "redirected_statement":
        return False
    start = next((c for c in redirect.children if c.type == "heredoc_start"), None)
    if start is None or src[start.start_byte:start.start_byte + 1] not in (b"'", b'"', b"\\"):
        return False
    command = statement.child_by_field_name("body") or (statement.children[0] if statement.children else None)
    if command is None or command.type != "command":
        return False
    name = command.child_by_field_name("name")
    word = src[name.start_byte:name.end_byte].rsplit(b"/", 1)[-1] if name is not None else b""
    return re.fullmatch(rb"python(?:3(?:\.\d+)?)?", word) is not None


def python_heredocs(src: bytes, root):
    """Every heredoc body of the tree that a Python interpreter reads as its program (`python_heredoc`)."""
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "heredoc_body" and python_heredoc(src, node):
            yield node
        stack.extend(node.children)
