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


def test_the_lint_and_the_rewrite_group_findings_with_one_implementation():
    """The same places, as the lint's findings and as the rewrite's, print the same block: one grouping
    (`grouped_text`) serves both reports; only the rewrite's findings carry PRs (a `hint: ... (url)`)."""
    from migrator.codes import all_codes
    from migrator.fileprocess import ReportedFinding
    from migrator.lint import LintFinding
    from migrator.lint.report import SECTIONS, findings_text
    from migrator.textreport import grouped_text

    places = [("b.sh", 3, 1, "VM112", "second", "set the other key"), ("a.sh", 1, 5, "VM112", "first", "set it"),
              ("a.sh", 2, 5, "VM112", "third", "set the other key"), ("a.sh", 9, 1, "VM005", "unset", None)]
    lint = [LintFinding(p, line, col, code, message, hint, "warning") for p, line, col, code, message, hint in places]
    rewrite = [ReportedFinding(p, line, col, "key", message, hint, (), "warning", code)
               for p, line, col, code, message, hint in places]
    expected = ["warnings (4):", f"VM005 {all_codes()['VM005'].title}", "    a.sh:9:1: unset",
                f"VM112 {all_codes()['VM112'].title}", "  hint: set the other key", "    b.sh:3:1: second",
                "    a.sh:2:5: third", "  hint: set it", "    a.sh:1:5: first"]
    assert findings_text(lint) == expected
    assert grouped_text(rewrite, SECTIONS, all_codes(), Style()) == expected
    with_pr = [ReportedFinding("a.sh", 1, 5, "key", "first", "set it", (136,), "warning", "VM112")]
    assert grouped_text(with_pr, SECTIONS, all_codes(), Style())[2] == \
        "  hint: set it (https://github.com/verl-project/verl/pull/136)"
