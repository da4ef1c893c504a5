"""A one-line progress display on stderr for long runs: `\\r1234 files, 5 changed, 2100 files/s`.

Shown only on a terminal, only once a run has taken about a second, and never with `-q` or JSON output;
plain ANSI (carriage return, erase to end of line), no dependency.
"""

from __future__ import annotations

import os
import time

DELAY_SECONDS = 1.0
REDRAW_SECONDS = 0.1
ERASE_LINE = "\r\x1b[K"


def wanted(stream, quiet: bool, as_json: bool) -> bool:
    """A progress line goes to `stream` only if a person is watching it."""
    if quiet or as_json or os.environ.get("TERM") == "dumb":
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


class Progress:
    def __init__(self, stream, enabled: bool, verb: str = "changed", total: int | None = None):
        self.stream, self.enabled, self.verb, self.total = stream, enabled, verb, total
        self.done = self.changed = 0
        self.start = time.monotonic()
        self.delay = float(os.environ.get("VERL_MIGRATE_PROGRESS_DELAY", DELAY_SECONDS))
        self.last_draw = 0.0
        self.shown = False

    def update(self, result) -> None:
        self.done += 1
        self.changed += result.status == "changed"
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self.start < self.delay or now - self.last_draw < REDRAW_SECONDS:
            return
        self.last_draw = now
        self.draw(now)

    def draw(self, now: float) -> None:
        elapsed = max(now - self.start, 1e-6)
        done = f"{self.done}/{self.total}" if self.total else str(self.done)
        self.stream.write(f"{ERASE_LINE}{done} files, {self.changed} {self.verb}, {self.done / elapsed:.0f} files/s")
        self.stream.flush()
        self.shown = True

    def clear(self) -> None:
        """Erase the line before other output is printed; the next update draws it again."""
        if self.shown:
            self.stream.write(ERASE_LINE)
            self.stream.flush()
            self.shown = False
            self.last_draw = 0.0
