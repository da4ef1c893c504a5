"""Is the edited script still valid bash: the proof that lets the engine skip `bash -n`, and `bash -n`."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import threading

from migrator.edits import SourceNotParsed, apply_edits
from migrator.rewrite.shell.syntax import ARGUMENT_TYPES, parse

BASH_N_TIMEOUT = 60  # seconds

# `bash -n` costs a process start (~3 ms) per changed script, more than finding the edits. It can be
# skipped when no edit can change what bash's parser sees; these are the ways a rename of plain name
# characters inside a word could, each found by tests/unit/rewrite/shell/test_property_neutral.py or bash's parse.y:
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
    middle or end of a command (`_removal_keeps_validity`), or the insertion of text whose removal from
    the edited script that proof accepts (`_insertions_keep_validity`). Anything else (quotes,
    expansions, here-documents, a command's first word) goes to `bash -n`.
    """
    if not edits or b"<<" in source or source.count(b"\r") != source.count(b"\r\n"):
        return False  # CRLF is checked as LF (`validate`); a lone CR is a word byte to bash
    if any(e.start == e.end and e.replacement for e in edits):
        return _insertions_keep_validity(source, edits)
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


def _insertions_keep_validity(source: bytes, edits) -> bool:
    """Edits that insert text (a value default appended to a launch: ` \\<newline>    key=value`), with
    or without others. `bash -n`'s verdict on two scripts is the same whichever is called the original,
    so an insertion keeps it when taking the inserted text out again is a removal
    `_removal_keeps_validity` proves. The other edits are proven first, on the original; then each
    insertion in order, on the script with everything before it in place."""
    insertions = list(dict.fromkeys(e for e in edits if e.start == e.end and e.replacement))
    others = [e for e in edits if not (e.start == e.end and e.replacement)]
    if any(o.start < i.start < o.end for o in others for i in insertions):
        return False  # inside another edit's span
    if others and not edits_keep_validity(source, others):
        return False
    if not others and parse(source).root_node.has_error:
        return False
    text, _, _ = apply_edits(source, others)  # proven above, so none overlaps
    added = 0
    for insertion in sorted(insertions, key=lambda e: e.start):
        # Where it lands: after every other edit that ends at or before it, and after the insertions before it.
        at = insertion.start + added + sum(len(o.replacement) - (o.end - o.start) for o in others
                                           if o.end <= insertion.start)
        longer = text[:at] + insertion.replacement + text[at:]
        tree = parse(longer)
        if tree.root_node.has_error or not _removal_keeps_validity(
                longer, at, at + len(insertion.replacement), text, at, tree.root_node):
            return False
        text, added = longer, added + len(insertion.replacement)
    return True


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
        if node.parent.type == "command" and _named_by_parser_word(source, node.parent):
            return False  # a "command" named `then` is no command to bash (`time if a; then [[ $x == y ]]; fi`)
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


def _named_by_parser_word(source: bytes, command) -> bool:
    """tree-sitter does not know `time` as the start of a pipeline: `time if a; then [[ $x == y ]]; fi`
    is to it three commands, `time`, `then` and `fi`, and the words of the `[[ ]]` are `then`'s arguments."""
    name = command.child_by_field_name("name")
    return name is None or source[name.start_byte:name.end_byte] in _PARSER_WORDS


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


def validate(before: bytes, after: bytes, mappings=None) -> str | None:
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


def unparsed_by_bash(source: bytes) -> None:
    """Raise SourceNotParsed when bash -n refuses the script as it is (nothing when bash is missing)."""
    bash = shutil.which("bash")
    error = _bash_n(bash, source) if bash else None
    if error is not None:
        raise SourceNotParsed(f"the script does not pass `bash -n` before any edit: {error}")


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
