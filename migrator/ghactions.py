"""GitHub Actions workflow commands (`::error file=...,line=...::message`), for `--output-format github`."""

from __future__ import annotations


def github_command(level: str, path: str, line: int | None, col: int | None, title: str, body: str) -> str:
    """`level`: error, warning or notice; the title is the rule code."""
    where = f"file={_gh_property(path)}" + (f",line={line}" if line else "") + (f",col={col}" if col else "")
    return f"::{level} {where},title={_gh_property(title)}::{_gh_data(body)}"


def _gh_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _gh_property(text: str) -> str:
    return _gh_data(text).replace(":", "%3A").replace(",", "%2C")
