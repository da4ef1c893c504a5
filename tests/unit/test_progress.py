"""The progress line on a terminal carries the total, the percentage, the rate and an ETA."""

from __future__ import annotations

import pytest

from migrator.progress import Progress, format_seconds, progress_line


def test_line_with_a_total():
    assert progress_line(1000, 4000, 7, "changed", 2.0) == \
        "1000/4000 files (25%), 7 changed, 500 files/s, ETA 6s"


def test_line_before_the_total_is_known():
    assert progress_line(1000, None, 7, "would change", 2.0) == "1000 files, 7 would change, 500 files/s"


def test_line_never_shows_more_done_than_total():
    assert progress_line(12, 10, 0, "changed", 1.0).startswith("12/12 files (100%)")


@pytest.mark.parametrize(("seconds", "shown"), [(0.2, "0s"), (59.4, "59s"), (61, "1m01s"), (3599, "59m59s"),
                                                (3720, "1h02m")])
def test_format_seconds(seconds, shown):
    assert format_seconds(seconds) == shown


def test_the_first_update_after_the_total_is_known_draws_at_once(monkeypatch):
    # A short run may end before another redraw period: the total must not wait for one.
    import io

    from migrator.progress import Progress

    monkeypatch.setenv("VERL_MIGRATE_PROGRESS_DELAY", "0")
    stream = io.StringIO()
    progress = Progress(stream, True, "would change")

    progress.update(False)  # drawn: the first line, total unknown
    progress.update(False)  # within the redraw period: not drawn
    assert stream.getvalue().count("\r\x1b[K") == 1 and "/10" not in stream.getvalue()
    progress.total = 10
    progress.update(False)  # the total just arrived: drawn at once
    assert "3/10 files (30%)" in stream.getvalue()


class FakeClock:
    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _seconds(text: str) -> float:
    import re

    h, m, sec = re.fullmatch(r"(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?", text).groups()
    return 3600 * int(h or 0) + 60 * int(m or 0) + int(sec or 0)


def _run(monkeypatch, total, arrivals):
    """Drive a Progress on a fake clock; `arrivals` yields the time each file is done. -> [(done, eta)]."""
    import io
    import re

    from migrator.progress import Progress

    monkeypatch.delenv("VERL_MIGRATE_PROGRESS_DELAY", raising=False)
    clock, stream = FakeClock(), io.StringIO()
    progress = Progress(stream, True, "would change", total=total, clock=clock)
    for at in arrivals:
        clock.now = at
        progress.update(False)
    lines = stream.getvalue().split("\r\x1b[K")[1:]
    return [(int(m.group(1)), _seconds(m.group(2)) if m.group(2) else None)
            for line in lines for m in [re.match(r"(\d+)/\d+ files .*?(?:ETA (\S+))?$", line)]]


def test_a_slow_start_does_not_make_the_first_eta_absurd(monkeypatch):
    # 40,000 files: 12 s of start-up (tables, workers, a cold Hydra cache) before the first result, then
    # 2000 files a second. Counting the start-up in the rate made the first ETA "135h25m".
    total, rate = 40_000, 2000.0
    shown = _run(monkeypatch, total, (12.0 + i / rate for i in range(total)))
    etas = [(done, eta) for done, eta in shown if eta is not None]
    assert etas, shown[:5]
    for done, eta in etas:
        left = (total - done) / rate
        assert left / 2 - 1 <= eta <= 2 * left + 1, (done, eta, left)


def test_results_in_bursts_of_chunks_keep_the_eta_near_the_truth(monkeypatch):
    # A pool answers a chunk of 128 files at once; its first answers come together after the start-up.
    total, chunk, rate = 20_000, 128, 1000.0
    arrivals = []
    for n in range(total // chunk):
        at = 8.0 if n < 8 else 8.0 + (n - 8) * chunk / rate
        arrivals += [at] * chunk
    shown = _run(monkeypatch, total // chunk * chunk, arrivals)
    for done, eta in shown:
        if eta is not None:
            left = (total // chunk * chunk - done) / rate
            assert left / 3 - 1 <= eta <= 3 * left + 1, (done, eta, left)
    assert any(eta is not None for _, eta in shown)


def test_no_eta_before_the_run_has_shown_its_pace(monkeypatch):
    from migrator.progress import MIN_SECONDS

    total = 1_000_000
    shown = _run(monkeypatch, total, (5.0 + i / 1000 for i in range(int(1000 * (MIN_SECONDS + 1)))))
    early = [eta for done, eta in shown if done < 1000 * MIN_SECONDS - 1]
    assert early and all(eta is None for eta in early)
    assert shown[-1][1] is not None


def test_a_short_run_gets_its_eta_once_a_part_is_done(monkeypatch):
    from migrator.progress import MIN_FRACTION

    shown = _run(monkeypatch, 4000, (1.0 + i / 1000 for i in range(4000)))
    assert any(eta is not None for _, eta in shown)
    assert all(eta is None for done, eta in shown if done < MIN_FRACTION * 4000)


def test_the_rate_follows_a_run_that_slows_down(monkeypatch):
    from migrator.progress import WINDOW_SECONDS

    fast = [1.0 + i / 1000 for i in range(60_000)]  # a minute at 1000 files/s
    slow = [fast[-1] + (i + 1) / 100 for i in range(int(100 * 2 * WINDOW_SECONDS))]  # then 100 files/s
    total = len(fast) + len(slow) + 10_000
    done, eta = _run(monkeypatch, total, fast + slow)[-1]
    left = (total - done) / 100
    assert left / 2 <= eta <= 2 * left


def test_the_walk_that_ends_sets_the_total_the_background_count_has_not():
    import io

    progress = Progress(io.StringIO(), enabled=True)
    assert list(progress.counting(iter("abc"))) == ["a", "b", "c"] and progress.total == 3
    progress.total = 7  # the background count was first: its total stays
    assert list(progress.counting(iter("ab"))) == ["a", "b"] and progress.total == 7
