"""Parsing and classifying a script's bytes: the tree-sitter parser and what its nodes mean here.

The tree only says what bytes are (argument, string, comment, heredoc, assignment); every edit the
planners make is a byte span of the original source.
"""

from __future__ import annotations

import re
from functools import lru_cache

from migrator.rewrite import scan

# Commands that run the script given as their first non-option argument.
SCRIPT_RUNNERS = frozenset({b"bash", b"sh", b"zsh", b"dash", b"source", b".", b"exec", b"nohup", b"time", b"srun"})
# Node types whose bytes are literal text the script passes on (after quote removal).
LITERAL_TYPES = frozenset({"word", "string_content", "raw_string", "heredoc_body", "number", "ansi_c_string"})
ARGUMENT_TYPES = frozenset({"word", "string", "raw_string", "concatenation", "number", "ansi_c_string"})
# A word starts a new shell word after these bytes (inside strings too: "a.b=1 c.d=2").
WORD_BOUNDARY = b" \t\n\r;|&()"


def command_arguments(command) -> list:
    """A `command` node's name and argument words, in order (not its redirections or `$@`-style expansions)."""
    return [c for c in command.children if c.type in ARGUMENT_TYPES or c.type == "command_name"]


@lru_cache(maxsize=1)
def _parser():
    import tree_sitter
    import tree_sitter_bash

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


_LAST: list = []  # [(source, tree)], newest first: the locator, the review and the validity proof read the
# original and the edited bytes in turn


def parse(source: bytes):
    """tree-sitter's tree of `source`; the last two are kept (nothing here edits a tree)."""
    for i, (known, tree) in enumerate(_LAST):
        if known == source:
            if i:
                _LAST.insert(0, _LAST.pop(i))
            return tree
    tree = _parser().parse(source)
    _LAST[:] = [(source, tree), *_LAST[:1]]
    return tree


_CONTINUATION = re.compile(rb"\\\r?\n")
# Bytes that end a shell word on either side (a `\r` only before its `\n`).
_WORD_ENDS = b" \t\r\n;&|()<>"


def glued_by_continuation(src: bytes, start: int, end: int) -> bool:
    """Does bash read src[start:end] as part of a longer word, joined across `\\`+newline
    continuations (`key=\\<newline>auto` is the one word `key=auto`)? tree-sitter splits it there."""
    at = end
    while (m := _CONTINUATION.match(src, at)):
        at = m.end()
    if at != end and at < len(src) and src[at] not in _WORD_ENDS:
        return True
    at = start
    while at >= 2 and src[at - 1] == 0x0A:
        backslash = at - 3 if src[at - 2] == 0x0D else at - 2
        if backslash < 0 or src[backslash] != 0x5C or (backslash and src[backslash - 1] == 0x5C):
            break
        at = backslash
    return at != start and at > 0 and src[at - 1] not in _WORD_ENDS


def text_glued_after(piece, at: int, src: bytes) -> bool:
    """Does bash read more of the same word after `at`, a position inside the literal `piece`
    (`x.sh'.orig'`, `x.sh$EXT`, `"x.sh${EXT}"`, `x.sh\\.orig`, `x.sh\\<newline>.orig`)?"""
    content_end = literal_span(piece, src)[1]
    if at < content_end:
        # Inside the piece the caller's scan already stopped at a boundary; an escape or an expansion
        # the parser left in the text (`x.sh\\.orig`, `'x.sh$EXT'`, a heredoc's `x.sh$EXT`) is not one.
        return src[at:at + 1] in (b"\\", b"$", b"`") and not _CONTINUATION.match(src, at)
    node = piece
    if piece.type == "string_content":
        node = piece.parent
        if node is None or piece.end_byte != node.end_byte - 1:
            return True  # the string goes on with an expansion: "x.sh${EXT}"
    elif piece.type == "heredoc_body":
        return False
    while node.parent is not None and node.parent.type in ("concatenation", "string"):
        if node.parent.children[-1].start_byte != node.start_byte:
            return True  # x.sh"$EXT", "x.sh"'.orig'
        node = node.parent
    return glued_by_continuation(src, node.end_byte, node.end_byte)


def text_glued_before(piece, at: int, src: bytes) -> bool:
    """Does bash read more of the same word before `at`, the start of the literal `piece`'s text, with
    no `/` between (`"my"examples/x.sh`, `${X}examples/x.sh`, `x\\<newline>examples/x.sh`)?"""
    node = piece
    if piece.type == "string_content":
        node = piece.parent
        if node is None or piece.start_byte != node.start_byte + 1:
            return src[at - 1:at] != b"/"  # "${ROOT}examples/x.sh"
    elif piece.type == "heredoc_body":
        return False
    while node.parent is not None and node.parent.type in ("concatenation", "string"):
        if node.parent.children[0].start_byte != node.start_byte:
            before = src[node.start_byte - 1:node.start_byte]
            if before in (b'"', b"'") and node.prev_sibling is not None and \
                    node.prev_sibling.type in ("string", "raw_string"):
                before = src[node.start_byte - 2:node.start_byte - 1]  # the text inside the quotes
            return before != b"/"
        node = node.parent
    return glued_by_continuation(src, node.start_byte, node.start_byte)


def is_override_word(word: bytes) -> bool:
    m = scan.OVERRIDE_AT_START.match(word.lstrip(b"\"'"))
    return m is not None and scan.is_override(m)


def script_position(words: list[bytes]) -> int:
    """Which word of a command is the script it runs: the command itself, or the first operand
    after a chain of runners and their options (`nohup bash -x run.sh`)."""
    i = 0
    while i < len(words) and words[i].rsplit(b"/", 1)[-1] in SCRIPT_RUNNERS:
        i += 1
        while i < len(words) and words[i].startswith(b"-"):
            i += 1
    return i if i < len(words) else 0


def literal_pieces(node) -> list:
    """The literal text nodes of an argument, in order (not those inside `$(...)` or `${...}`)."""
    if node.type in ("word", "raw_string", "number", "ansi_c_string"):
        return [node]
    out = []
    for child in node.children:
        if child.type in ("word", "raw_string", "string_content", "number", "ansi_c_string"):
            out.append(child)
        elif child.type == "string":
            out.extend(literal_pieces(child))
    return out


def content_start(node) -> int:
    """Where an argument's text starts once its opening quote is removed."""
    while node.type == "concatenation" and node.children:
        node = node.children[0]
    if node.type in ("string", "raw_string"):
        return node.start_byte + 1
    if node.type == "ansi_c_string":
        return node.start_byte + 2
    return node.start_byte


def literal_span(piece, src: bytes) -> tuple[int, int]:
    if piece.type == "raw_string":
        return piece.start_byte + 1, max(piece.start_byte + 1, piece.end_byte - 1)
    if piece.type == "ansi_c_string":
        return piece.start_byte + 2, max(piece.start_byte + 2, piece.end_byte - 1)
    return piece.start_byte, piece.end_byte


def word_starts_at(piece, src: bytes) -> bool:
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


def literal_value(node, src: bytes) -> str | None:
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
