"""Which bytes to delete so that an argument, or a line, disappears cleanly from a script."""

from __future__ import annotations

import re


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
