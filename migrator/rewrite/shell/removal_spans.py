"""Which bytes to delete so that an argument, or a line, disappears cleanly from a script."""

from __future__ import annotations


def _line_bounds(src: bytes, start: int, end: int) -> tuple[int, int]:
    """[line start, index of the newline ending the line holding `end`) (len(src) without one)."""
    line_start = src.rfind(b"\n", 0, start) + 1
    nl = src.find(b"\n", end)
    return line_start, (len(src) if nl == -1 else nl)


def alone_on_its_line(src: bytes, start: int, end: int) -> bool:
    line_start, line_end = _line_bounds(src, start, end)
    if b"\n" in src[start:end]:
        return False
    after = src[end:line_end].rstrip(b"\r")
    return not src[line_start:start].strip() and (not after.strip() or after.lstrip().startswith(b"#"))


def argument_removal_span(src: bytes, start: int, end: int) -> tuple[int, int]:
    """The bytes to delete so that an argument disappears cleanly from its command or array.

    Looks only at the blanks around the argument and the line ends next to it (never a whole line:
    a command of 20,000 arguments on one line must not cost 20,000 line scans)."""
    begin = start
    while begin > 0 and src[begin - 1] in b" \t":
        begin -= 1
    line_start = begin
    while line_start > 0 and src[line_start - 1] in b"\r\x0b\x0c \t":  # what bytes.strip() drops
        line_start -= 1
    if line_start and src[line_start - 1] != 0x0A:
        return begin, end  # shares the line with earlier words: drop the blanks before it and the argument
    stop = end
    while stop < len(src) and src[stop] in b" \t":
        stop += 1
    tail = end
    while tail < len(src) and src[tail] in b" \t\r":
        tail += 1
    continued = False
    if tail < len(src) and src[tail] != 0x0A:  # not only blanks up to the line's end: a `\\` tail?
        tail = stop + 1
        if src[tail:tail + 1] == b"\r":
            tail += 1
        continued = src[stop:stop + 1] == b"\\" and (tail == len(src) or src[tail] == 0x0A)
        if not continued:
            return start, stop  # first on its line, followed by more arguments: drop it and its blanks
    line_end = tail  # the newline ending the line, or len(src)
    if continued or line_end == len(src) or not _prev_line_continues(src, line_start):
        # The argument owns the whole line (`    key=v \\`, or an array element): drop the line.
        return line_start, min(line_end + 1, len(src))
    # Last argument of a `\\`-continued command: drop it with the `\\` that led to it.
    content_end = line_end - (1 if src[line_end - 1:line_end] == b"\r" else 0)
    return _prev_line_continues(src, line_start), content_end


def _prev_line_continues(src: bytes, line_start: int) -> int:
    """If the line before `line_start` ends in a `\\` continuation, where its trailing `[ \\t]*\\` starts."""
    if line_start == 0:
        return 0
    at = line_start - 1  # the newline ending the previous line
    if at and src[at - 1] == 0x0D:
        at -= 1
    if not at or src[at - 1] != 0x5C:
        return 0
    at -= 1
    while at and src[at - 1] in b" \t":
        at -= 1
    return at
