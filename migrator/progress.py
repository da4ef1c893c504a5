"""A one-line progress display on stderr for long runs:
`\\r1234/5000 files (24%), 5 changed, 2100 files/s, ETA 2s`.

Shown only on a terminal, only once a run has taken about a second, and never with `-q` or JSON output;
plain ANSI (carriage return, erase to end of line), no dependency. The total comes from a second,
cheap discovery pass in a background thread (only when the line is shown): until it is known, the
line shows the count and the rate alone.
"""

from __future__ import annotations

import os
import threading
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
        self.total_drawn = False  # has a line with the total been drawn
        self.shown = False

    def update(self, result) -> None:
        self.done += 1
        self.changed += result.status == "changed"
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self.start < self.delay:
            return
        # The first update after the total is known draws at once: a short run may not last another redraw.
        news = self.total is not None and not self.total_drawn
        if now - self.last_draw < REDRAW_SECONDS and not news:
            return
        self.last_draw = now
        self.total_drawn = self.total is not None
        self.draw(now)

    def count_in_background(self, candidates) -> None:
        """Set `total` from `candidates()` (an iterable of every file the run will report) in a thread."""
        if not self.enabled:
            return

        def count() -> None:
            try:
                self.total = sum(1 for _ in candidates())
            except Exception:  # noqa: BLE001 - a progress total is never worth failing a run for
                pass

        threading.Thread(target=count, name="progress-total", daemon=True).start()

    def draw(self, now: float) -> None:
        self.stream.write(ERASE_LINE + progress_line(self.done, self.total, self.changed, self.verb, now - self.start))
        self.stream.flush()
        self.shown = True

    def clear(self) -> None:
        """Erase the line before other output is printed; the next update draws it again."""
        if self.shown:
            self.stream.write(ERASE_LINE)
            self.stream.flush()
            self.shown = False
            self.last_draw = 0.0


def progress_line(done: int, total: int | None, changed: int, verb: str, elapsed: float) -> str:
    """`1234/5000 files (24%), 5 changed, 2100 files/s, ETA 2s`; without a total, count and rate only."""
    rate = done / max(elapsed, 1e-6)
    if not total:
        return f"{done} files, {changed} {verb}, {rate:.0f} files/s"
    total = max(total, done)  # files created during the run
    eta = format_seconds((total - done) / rate) if rate > 0 else "?"
    return f"{done}/{total} files ({100 * done // total}%), {changed} {verb}, {rate:.0f} files/s, ETA {eta}"


def format_seconds(seconds: float) -> str:
    seconds = int(seconds + 0.5)
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
