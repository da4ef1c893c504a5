"""How a run is told to a person: findings grouped by rule (the hint once, the places under it),
manual actions apart from warnings, files that were not migrated with their reasons; colour and
hyperlinks when the stream is a terminal; GitHub Actions annotations for CI.

Returns lines; the command decides the stream (people's text on stderr, machine output on stdout).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from itertools import groupby

from migrator.codes import RULES, all_codes
from migrator.fileprocess import FileResult
from migrator.ghactions import github_command
from migrator.pulls import pr_label, pr_url
from migrator.rewrite import spec_for

# Sections in the order they print: (severity, heading). "info" findings show only with -v.
SECTIONS = (("manual", "manual actions (need a person)"), ("warning", "warnings"), ("info", "done, for your review"))
SEVERITY_SGR = {"manual": "1;31", "error": "1;31", "warning": "33", "info": "36"}
NAME_DECIDES = {"VM202"}  # outcome codes that are noise unless the file's name is a kind we rewrite
DIFF_SGR = {b"+": "32", b"-": "31", b"@": "36"}


def colour_wanted(choice: str, stream, env=None) -> bool:
    """`--color`: always, never, or auto (a terminal, unless NO_COLOR is set; FORCE_COLOR forces it)."""
    env = os.environ if env is None else env
    if choice in ("always", "never"):
        return choice == "always"
    if env.get("NO_COLOR"):
        return False
    if env.get("FORCE_COLOR", "0") not in ("", "0"):
        return True
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


@dataclass(frozen=True)
class Style:
    colour: bool = False
    links: bool = False  # OSC-8 hyperlinks: only on a terminal with colour on

    @classmethod
    def for_stream(cls, choice: str, stream, env=None) -> "Style":
        colour = colour_wanted(choice, stream, env)
        isatty = getattr(stream, "isatty", None)
        return cls(colour, colour and bool(isatty and isatty()))

    def paint(self, text: str, sgr: str | None) -> str:
        return f"\x1b[{sgr}m{text}\x1b[0m" if self.colour and sgr else text

    def pr(self, pr: int) -> str:
        url = pr_url(pr)
        label = pr_label(pr)
        return f"\x1b]8;;{url}\x1b\\{'verl' if label.startswith('#') else ''}{label}\x1b]8;;\x1b\\" if self.links else url

    def diff(self, patch: bytes) -> bytes:
        if not self.colour:
            return patch
        out = []
        for line in patch.splitlines(keepends=True):
            sgr = None if line.startswith((b"+++", b"---")) else DIFF_SGR.get(line[:1])
            body = line.rstrip(b"\n")
            out.append(b"\x1b[%sm%s\x1b[0m%s" % (sgr.encode(), body, line[len(body):]) if sgr else line)
        return b"".join(out)


def findings_text(results: list[FileResult], style: Style, verbose: bool = False, quiet: bool = False) -> list[str]:
    """The findings, grouped: a section per severity, a heading per rule code, the hint and PRs once
    per distinct hint, then every place as `path:line:col: message`."""
    findings = [f for r in results for f in r.findings]
    wanted = {"manual"} if quiet else {"manual", "warning", "info"} if verbose else {"manual", "warning"}
    # every code: the run comparison reports lint's VM022 too
    return grouped_text(findings, [(s, heading) for s, heading in SECTIONS if s in wanted], all_codes(), style)


def grouped_text(findings: list, sections, titles: dict, style: Style) -> list[str]:
    """The grouping both commands print (the rewrite's findings and the lint's): for each (severity,
    heading) of `sections` that has findings, the heading with their count, then per code (in code order)
    the code and its title from `titles`, the hint and PRs (`prs`, where a finding has them) once per
    distinct pair, and every place under it as `path:line:col: message`."""
    lines: list[str] = []
    for severity, heading in sections:
        chosen = sorted((f for f in findings if f.severity == severity), key=lambda f: f.code)
        if not chosen:
            continue
        lines.append(style.paint(f"{heading} ({len(chosen)}):", SEVERITY_SGR[severity]))
        for code, in_rule in groupby(chosen, key=lambda f: f.code):
            rule = titles.get(code)
            lines.append(f"{style.paint(code, SEVERITY_SGR[severity])} {rule.title if rule else ''}".rstrip())
            blocks: dict[tuple, list] = {}
            for f in in_rule:
                blocks.setdefault((f.hint, getattr(f, "prs", ())), []).append(f)
            for (hint, prs), places in blocks.items():
                see = " ".join(style.pr(pr) for pr in prs)
                if hint:
                    lines.append(f"  hint: {hint}" + (f" ({see})" if see else ""))
                elif see:
                    lines.append(f"  see: {see}")
                lines.extend(f"    {f.path}:{f.line}:{f.col}: {f.message}" for f in places)
    return lines


def outcome_severity(result: FileResult) -> str | None:
    """A binary file counts only when its name says it is a kind we rewrite (`run.sh`, not `model.bin`)."""
    code = result.code
    if code is None:
        return None
    if code in NAME_DECIDES and spec_for(os.path.basename(result.path), b"") is None:
        return "info"
    return RULES[code].severity


def outcomes_text(results: list[FileResult], style: Style, verbose: bool = False, quiet: bool = False,
                  shown=lambda code: True) -> list[str]:
    """Every file that failed or was skipped, with its code and reason; files that are simply not a
    kind the tool rewrites (an info code) only with -v, and with -q only the failures."""
    rows = []
    for r in results:
        if quiet and r.status != "failed" or r.status in ("changed", "unchanged"):
            continue  # decided without the code: most of a tree
        code, severity = r.code, outcome_severity(r)
        if code is None or not shown(code):
            continue
        if severity == "info" and not verbose:
            continue
        rows.append(f"  {style.paint(code, SEVERITY_SGR[severity])} {r.status} {r.path}: {r.reason}")
    if not rows:
        return []
    return [style.paint(f"files not migrated ({len(rows)}):", SEVERITY_SGR["error"])] + rows


def changes_text(results: list[FileResult], dry: bool, style: Style = Style(), edits: bool = True) -> list[str]:
    """Every file that changed, `would change: PATH` or `changed: PATH` (black's and cargo fix's rule: after
    the write, a file that could not be written is not here), and with `edits` (-v) its edits."""
    verb = "would change" if dry else "changed"
    lines = []
    for r in results:
        if r.status != "changed":
            continue
        lines.append(f"{verb}: {r.path}")
        for edit in r.edits if edits else ():
            where = " (comment)" if edit.in_comment else ""
            prs = "".join(f" ({style.pr(pr)})" for pr in edit.prs)
            lines.append(f"  {r.path}:{edit.line}: {edit.kind}{where}: {edit.message}{prs}")
    return lines


def github_annotations(results: list[FileResult], verbose: bool = False, shown=lambda code: True) -> list[str]:
    """GitHub Actions workflow commands: `::error` for manual actions and failed files, `::warning`
    for warnings and skipped files, `::notice` for what the tool did (with -v)."""
    level = {"manual": "error", "error": "error", "warning": "warning", "info": "notice"}
    lines = []
    for f in (f for r in results for f in r.findings):
        if f.severity == "info" and not verbose:
            continue
        body = f.message + (f" ({f.hint})" if f.hint else "") + "".join(f" {pr_url(pr)}" for pr in f.prs)
        lines.append(github_command(level[f.severity], f.path, f.line, f.col, f.code, body))
    for r in results:
        code = r.code
        if code is None or not shown(code) or (outcome_severity(r) == "info" and not verbose):
            continue
        severity = "error" if r.status == "failed" else "warning"
        lines.append(github_command(severity, r.path, None, None, code, f"{r.status}: {r.reason}"))
    return lines
