"""Colour and links decided per stream: a terminal gets OSC-8 hyperlinks, a pipe gets plain URLs."""

from __future__ import annotations

import io

from migrator.textreport import Style, colour_wanted


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_auto_colour_follows_the_terminal_and_the_environment():
    assert colour_wanted("auto", Terminal(), {})
    assert not colour_wanted("auto", io.StringIO(), {})
    assert not colour_wanted("auto", Terminal(), {"NO_COLOR": "1"})
    assert colour_wanted("auto", io.StringIO(), {"FORCE_COLOR": "1"})
    assert not colour_wanted("auto", io.StringIO(), {"FORCE_COLOR": "0"})
    assert colour_wanted("always", io.StringIO(), {"NO_COLOR": "1"})
    assert not colour_wanted("never", Terminal(), {"FORCE_COLOR": "1"})


def test_pr_is_a_hyperlink_on_a_colour_terminal_and_a_url_elsewhere():
    terminal = Style.for_stream("auto", Terminal(), {})
    assert terminal.pr(136) == "\x1b]8;;https://github.com/verl-project/verl/pull/136\x1b\\verl#136\x1b]8;;\x1b\\"
    piped = Style.for_stream("always", io.StringIO(), {})
    assert piped.colour and piped.pr(136) == "https://github.com/verl-project/verl/pull/136"
    assert Style.for_stream("never", Terminal(), {}).pr(136) == "https://github.com/verl-project/verl/pull/136"


def test_diff_lines_are_coloured_by_their_sign():
    patch = b"--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old\n+new\n ctx\n"
    coloured = Style(colour=True).diff(patch)
    assert coloured == (b"--- a/x\n+++ b/x\n\x1b[36m@@ -1 +1 @@\x1b[0m\n\x1b[31m-old\x1b[0m\n"
                        b"\x1b[32m+new\x1b[0m\n ctx\n")
    assert Style().diff(patch) == patch
