"""The lint's text report, told as the rewrite tells its own (migrator/textreport.py): a section per
severity, a heading per code with its title, the hint once per distinct hint, then every place as
`path:line:col: message`. Returns lines; the command prints them on stderr."""

from __future__ import annotations

from migrator.codes import all_codes
from migrator.lint import LintFinding
from migrator.textreport import Style, grouped_text

# The lint's severities, in the order they print.
SECTIONS = (("error", "errors (the job fails or misbehaves)"), ("warning", "warnings"))


def findings_text(findings: list[LintFinding], style: Style | None = None) -> list[str]:
    return grouped_text(findings, SECTIONS, all_codes(), style or Style())
