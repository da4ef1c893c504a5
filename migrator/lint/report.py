"""The lint's text report, told as the rewrite tells its own (migrator/textreport.py): a section per
severity, a heading per code with its title, the hint once per distinct hint, then every place as
`path:line:col: message`. Returns lines; the command prints them on stderr."""

from __future__ import annotations

from itertools import groupby

from migrator.codes import all_codes
from migrator.lint import LintFinding
from migrator.textreport import SEVERITY_SGR, Style

# The lint's severities, in the order they print.
SECTIONS = (("error", "errors (the job fails or misbehaves)"), ("warning", "warnings"))


def findings_text(findings: list[LintFinding], style: Style | None = None) -> list[str]:
    style = style or Style()
    titles = all_codes()
    lines: list[str] = []
    for severity, heading in SECTIONS:
        chosen = sorted((f for f in findings if f.severity == severity), key=lambda f: f.code)
        if not chosen:
            continue
        lines.append(style.paint(f"{heading} ({len(chosen)}):", SEVERITY_SGR[severity]))
        for code, in_code in groupby(chosen, key=lambda f: f.code):
            rule = titles.get(code)
            lines.append(f"{style.paint(code, SEVERITY_SGR[severity])} {rule.title if rule else ''}".rstrip())
            blocks: dict[str | None, list[LintFinding]] = {}
            for f in in_code:
                blocks.setdefault(f.hint, []).append(f)
            for hint, places in blocks.items():
                if hint:
                    lines.append(f"  hint: {hint}")
                lines.extend(f"    {f.path}:{f.line}:{f.col}: {f.message}" for f in places)
    return lines
