"""The progress line on a terminal carries the total, the percentage, the rate and an ETA."""

from __future__ import annotations

import pytest

from migrator.progress import format_seconds, progress_line


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

    class Result:
        status = "unchanged"

    progress.update(Result())  # drawn: the first line, total unknown
    progress.update(Result())  # within the redraw period: not drawn
    assert stream.getvalue().count("\r\x1b[K") == 1 and "/10" not in stream.getvalue()
    progress.total = 10
    progress.update(Result())  # the total just arrived: drawn at once
    assert "3/10 files (30%)" in stream.getvalue()
