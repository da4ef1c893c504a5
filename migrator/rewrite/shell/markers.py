"""Manual steps that leave a trace: a removed argument whose meaning has no replacement (`data.prompt_key`
when sft_trainer reads only multi-turn data) leaves one comment line in the script,

    # verl-migrate: VM111 removed data.prompt_key (verl #5382): convert the parquet to a messages column ...

naming the finding's code, the key, the PRs and what to do. The next run and `lint` (VM009) report each
marker again as an open manual step, until a person deletes the line.

The line goes just before the line where the command (or array) starts, in the script's line ending and
that line's indentation: there a comment is a comment. Where that line continues a `\\` line, or the command
sits inside a string or a command substitution, no marker is legal and the argument stays (reported).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MARKER_TOKEN = "# verl-migrate:"  # what every marker holds, as the prefilter matches a whole token
MARKER = re.compile(rb"^[ \t]*# verl-migrate: (?P<code>VM\d{3}) removed (?P<key>[^\s:]+)"
                    rb"(?: \(verl (?P<prs>#\d+(?:, #\d+)*)\))?: (?P<note>[^\r\n]*)", re.M)
# Where a line of its own is not a comment bash skips: inside these, the command is text or a nested parse.
_NO_LINE_OF_ITS_OWN = frozenset({"string", "raw_string", "ansi_c_string", "command_substitution",
                                 "process_substitution", "heredoc_body", "heredoc_content", "arithmetic_expansion"})


@dataclass(frozen=True)
class Marker:
    offset: int  # where the comment's `#` is
    code: str
    key: str
    prs: tuple[int, ...]
    note: str


def marker_line(code: str, key: str, prs: tuple[int, ...], note: str) -> bytes:
    """The marker's text, without indentation or line ending; one line whatever the note holds."""
    cited = f" (verl {', '.join(f'#{pr}' for pr in prs)})" if prs else ""
    flat = " ".join(note.split())
    return f"# verl-migrate: {code} removed {key}{cited}: {flat}".encode()


def marker_place(src: bytes, first_node) -> tuple[int, bytes, bytes] | None:
    """(offset, indentation, line ending) for a marker line before the command or array whose first
    argument node is `first_node`, or None where no comment line is legal there."""
    node = first_node.parent
    while node is not None:
        if node.type in _NO_LINE_OF_ITS_OWN:
            return None
        node = node.parent
    line_start = src.rfind(b"\n", 0, first_node.start_byte) + 1
    at = line_start - 1  # the newline ending the line before
    if at > 0 and src[at - 1:at] == b"\r":
        at -= 1
    while at > 0 and src[at - 1] in b" \t":
        at -= 1
    if at > 0 and src[at - 1:at] == b"\\":
        return None  # the line continues the one before: a comment line would end that command
    line = src[line_start:first_node.start_byte]
    indent = line[:len(line) - len(line.lstrip(b" \t"))]
    nl = src.find(b"\n", first_node.start_byte)
    ending = b"\r\n" if nl > 0 and src[nl - 1:nl] == b"\r" else b"\n"
    return line_start, indent, ending


def marker_at(src: bytes, start: int, end: int) -> Marker | None:
    """The marker a comment node src[start:end] is, or None."""
    m = MARKER.match(src, src.rfind(b"\n", 0, start) + 1, end)
    if m is None or m.start() + m.group(0).index(b"#") != start:
        return None
    return Marker(start, m.group("code").decode(), m.group("key").decode("ascii", "replace"),
                  tuple(int(p) for p in re.findall(rb"\d+", m.group("prs") or b"")),
                  m.group("note").decode("utf-8", "replace"))


def open_step_message(marker: Marker) -> str:
    """What the rewrite and lint say about a marker still in a script."""
    return f"open manual step (marked by an earlier migration): removed {marker.key}: {marker.note}"


OPEN_STEP_HINT = "make the change, then delete this comment"
