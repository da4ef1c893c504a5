"""A one-line progress display on stderr for long runs (the rewrite and `lint`):
`\\r1234/5000 files (24%), 5 changed, 2100 files/s, ETA 2s`.

Shown only on a terminal, only once a run has taken about a second, and never with `-q` or JSON output;
plain ANSI (carriage return, erase to end of line), no dependency. The total comes from a second,
cheap discovery pass in a background thread (only when the line is shown): until it is known, the
line shows the count and the rate alone.

The rate behind the ETA is measured from the first files done, not from the start:
the start-up (tables, workers, a cold cache) is paid once and says nothing about the files left. Until
`RateEstimate` has seen enough of the run (`MIN_SECONDS` of results, or `MIN_FRACTION` of the files), no
ETA is shown.
"""

from __future__ import annotations

import os
import threading
import time
from collections import deque

DELAY_SECONDS = 1.0
REDRAW_SECONDS = 0.1
ERASE_LINE = "\r\x1b[K"
MIN_SECONDS = 2.0  # of results before an ETA, unless MIN_FRACTION of the files is done by then
MIN_FRACTION = 0.05
WINDOW_SECONDS = 30.0  # the rate follows the last this many seconds, so a run that slows down is seen


def wanted(stream, quiet: bool, as_json: bool) -> bool:
    """A progress line goes to `stream` only if a person is watching it."""
    if quiet or as_json or os.environ.get("TERM") == "dumb":
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


class RateEstimate:
    """Files a second over a sliding window that starts at the first files done; None until the run has
    shown enough of itself to predict from.

    Results come in bursts (a pool answers a chunk at once, and the chunks that waited behind it with it),
    so they are counted in buckets of `SAMPLE_SECONDS`, and the rate runs from the end of the first bucket
    to the end of the last closed one: a burst that has only begun would count its time but not its files."""

    SAMPLE_SECONDS = 0.05

    def __init__(self):
        self.first: float | None = None  # when the first file was done
        self.buckets: deque[list] = deque()  # [first update, last update, files done by then], oldest first

    def observe(self, now: float, done: int) -> None:
        if self.first is None:
            self.first = now
        if self.buckets and now - self.buckets[-1][0] < self.SAMPLE_SECONDS:
            self.buckets[-1][1:] = (now, done)
        else:
            self.buckets.append([now, now, done])
        while len(self.buckets) > 3 and now - self.buckets[1][1] >= WINDOW_SECONDS:
            self.buckets.popleft()

    def rate(self, now: float, total: int | None) -> float | None:
        if len(self.buckets) < 3:  # the first bucket, a closed one after it, and the open one
            return None
        (_, since, done_then), (_, until, done) = self.buckets[0][:3], self.buckets[-2][:3]
        seconds, files = until - since, done - done_then
        if seconds <= 0 or files <= 0:
            return None
        if now - self.first < MIN_SECONDS and not (total and done >= MIN_FRACTION * total):
            return None
        return files / seconds


class Progress:
    def __init__(self, stream, enabled: bool, verb: str = "changed", total: int | None = None,
                 clock=time.monotonic):
        self.stream, self.enabled, self.verb, self.total = stream, enabled, verb, total
        self.clock = clock
        self.done = self.changed = 0
        self.start = clock()
        self.delay = float(os.environ.get("VERL_MIGRATE_PROGRESS_DELAY", DELAY_SECONDS))
        self.last_draw = 0.0
        self.total_drawn = False  # has a line with the total been drawn
        self.shown = False
        self.estimate = RateEstimate()

    def update(self, counted: bool = False) -> None:
        """One more file done; `counted`: one the line counts (changed, with findings)."""
        self.done += 1
        self.changed += counted
        if not self.enabled:
            return
        now = self.clock()
        self.estimate.observe(now, self.done)
        if now - self.start < self.delay:
            return
        # The first update after the total is known draws at once: a short run may not last another redraw.
        news = self.total is not None and not self.total_drawn
        if now - self.last_draw < REDRAW_SECONDS and not news:
            return
        self.last_draw = now
        self.total_drawn = self.total is not None
        self.draw(now)

    def counting(self, candidates):
        """`candidates`, passed on; once they run out their number is the total, if the count in the
        background has not set it yet (under load it may still be walking when the run's own walk ends)."""
        seen = 0
        for candidate in candidates:
            seen += 1
            yield candidate
        if self.total is None:
            self.total = seen

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

    def line(self, now: float) -> str:
        rate = self.estimate.rate(now, self.total)
        elapsed = now - self.start
        shown_rate = rate if rate is not None else self.done / max(elapsed, 1e-6)
        return progress_line(self.done, self.total, self.changed, self.verb, elapsed, shown_rate, eta=rate is not None)

    def draw(self, now: float) -> None:
        self.stream.write(ERASE_LINE + self.line(now))
        self.stream.flush()
        self.shown = True

    def clear(self) -> None:
        """Erase the line before other output is printed; the next update draws it again."""
        if self.shown:
            self.stream.write(ERASE_LINE)
            self.stream.flush()
            self.shown = False
            self.last_draw = 0.0


def progress_line(done: int, total: int | None, changed: int, verb: str, elapsed: float,
                  rate: float | None = None, eta: bool = True) -> str:
    """`1234/5000 files (24%), 5 changed, 2100 files/s, ETA 2s`; without a total, count and rate only.
    `rate`: files a second (default: done / elapsed); `eta`: whether the rate is good enough for one."""
    if rate is None:
        rate = done / max(elapsed, 1e-6)
    if not total:
        return f"{done} files, {changed} {verb}, {rate:.0f} files/s"
    total = max(total, done)  # files created during the run
    line = f"{done}/{total} files ({100 * done // total}%), {changed} {verb}, {rate:.0f} files/s"
    if not eta:
        return line
    return line + f", ETA {format_seconds((total - done) / rate) if rate > 0 else '?'}"


def format_seconds(seconds: float) -> str:
    seconds = int(seconds + 0.5)
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
