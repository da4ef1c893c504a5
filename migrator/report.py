"""How a run is told to people (one summary line, findings, -v detail) and to machines (JSON)."""

from __future__ import annotations

import difflib
import json
import os
import re
from collections import Counter
from dataclasses import dataclass, field

from migrator.fileprocess import FileResult, ReportedFinding
from migrator.pulls import pr_json


@dataclass
class RunSummary:
    changed: int = 0
    unchanged: int = 0
    skipped: int = 0
    failed: int = 0
    edits_by_kind: Counter = field(default_factory=Counter)
    manual: int = 0
    warnings: int = 0
    hydra_rejections: int = 0  # overrides the target's Hydra still rejects, in the scripts the run judged

    @classmethod
    def of(cls, results: list[FileResult]) -> "RunSummary":
        summary = cls()
        for r in results:
            setattr(summary, r.status, getattr(summary, r.status) + 1)
            if r.status == "changed":
                summary.edits_by_kind.update(r.edit_counts)
            summary.hydra_rejections += r.hydra_rejections or 0
            for f in r.findings:
                if f.severity == "manual":
                    summary.manual += 1
                elif f.severity == "warning":
                    summary.warnings += 1
        return summary

    def line(self, check: bool, releases: str, target: str = "") -> str:
        verb = "would change" if check else "changed"
        kinds = ", ".join(f"{n} {k}" for k, n in sorted(self.edits_by_kind.items()))
        edits = f" ({kinds})" if kinds else ""
        hydra = ""
        if self.hydra_rejections:
            hydra = (f", {self.hydra_rejections} override{'s' if self.hydra_rejections != 1 else ''} Hydra would "
                     f"reject{' at ' + target if target else ''} (run verl-migrate lint)")
        return (f"{releases}: {_files(self.changed)} {verb}{edits}, {self.manual} manual action"
                f"{'s' if self.manual != 1 else ''}, {self.warnings} warning{'s' if self.warnings != 1 else ''}"
                f"{hydra}, {self.unchanged} unchanged, {self.skipped} skipped, {self.failed} failed")

    def as_dict(self) -> dict:
        return {"changed": self.changed, "unchanged": self.unchanged, "skipped": self.skipped,
                "failed": self.failed, "edits_by_kind": dict(sorted(self.edits_by_kind.items())),
                "manual_actions": self.manual, "warnings": self.warnings, "hydra_rejections": self.hydra_rejections}


def _files(n: int) -> str:
    return f"{n} file{'s' if n != 1 else ''}"


def _lines(data: bytes) -> list[bytes]:
    """Lines ended by LF only, as diff and patch count them (bytes.splitlines also splits at a lone
    CR, which put `\\ No newline at end of file` in the middle of a diff)."""
    parts = data.split(b"\n")
    return [p + b"\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def diff_name(path: str, cwd: str | None = None) -> str:
    """The name a diff header gives `path` (after `a/`, `b/`), as `git diff` would: relative to the current
    directory without `.` or `..` parts, so `git apply` and `patch -p1` take it there; a file outside it by
    its absolute path less the leading `/` (`git diff --no-index`'s rule: applied from `/`)."""
    cwd = cwd or os.getcwd()
    absolute = os.path.normpath(os.path.join(cwd, path))
    inside = os.path.relpath(absolute, cwd)
    if inside != os.curdir and not inside.startswith(os.pardir + os.sep) and inside != os.pardir:
        return inside
    return absolute.lstrip(os.sep)


# git's C-style quoting of a path (quote.c): these escapes, other control bytes and every byte >= 0x80
# (core.quotePath's default) in octal.
_C_ESCAPES = {7: b"\\a", 8: b"\\b", 9: b"\\t", 10: b"\\n", 11: b"\\v", 12: b"\\f", 13: b"\\r",
              ord('"'): b'\\"', ord("\\"): b"\\\\"}


def diff_label(prefix: bytes, name: bytes) -> bytes:
    """A `---`/`+++` header name as `git diff` writes it: `prefix + name`, C-quoted in double quotes when it
    holds a quote, a backslash, a control byte or a non-ASCII byte; followed by a tab when it holds a space
    (so `patch` reads the name to its end)."""
    label = prefix + name
    if any(b < 0x20 or b >= 0x7f or b in _C_ESCAPES for b in label):
        label = b'"' + b"".join(_C_ESCAPES.get(b) or (b"\\%03o" % b if b < 0x20 or b >= 0x7f else bytes([b]))
                                for b in label) + b'"'
    return label + b"\t" if b" " in label else label


def unified_diff(result: FileResult) -> bytes:
    before = _lines(result.before or b"")
    after = _lines(result.after or b"")
    name = diff_name(result.path).encode("utf-8", "surrogateescape")
    lines = difflib.diff_bytes(difflib.unified_diff, before, after, diff_label(b"a/", name), diff_label(b"b/", name))
    out = []
    for line in lines:
        out.append(line if line.endswith(b"\n") else line + b"\n\\ No newline at end of file\n")
    return b"".join(out)


def finding_as_dict(f: ReportedFinding) -> dict:
    """The lint's finding object (path, line, col, code, message, hint, severity) plus the entry kind
    and verl PRs: one schema for both commands (docs/codes.md)."""
    return {"path": f.path, "line": f.line, "col": f.col, "code": f.code, "message": f.message, "hint": f.hint,
            "severity": f.severity, "kind": f.kind, "prs": [pr_json(pr) for pr in f.prs]}


def select_codes(results: list[FileResult], shown) -> None:
    """Drop the findings whose code `--select`/`--ignore` left out, before anything counts them."""
    for result in results:
        result.findings = [f for f in result.findings if shown(f.code)]


def result_as_dict(result: FileResult, with_diff: bool) -> dict:
    data = {
        "path": result.path,
        "status": result.status,
        "kind": result.kind,
        "reason": result.reason,
        "code": result.code,
        "edits": [{"line": e.line, "kind": e.kind, "message": e.message, "prs": [pr_json(pr) for pr in e.prs],
                   "in_comment": e.in_comment} for e in result.edits],
        "findings": [finding_as_dict(f) for f in result.findings],
    }
    if with_diff and result.status == "changed":
        data["diff"] = unified_diff(result).decode("utf-8", "replace")
    return data


def json_report(results: list[FileResult], summary: RunSummary, from_release: str, to_release: str,
                mode: str, with_diff: bool, written_for: dict | None = None) -> str:
    """`written_for`: the releases the files fit (`--from auto`, or a checked explicit --from)."""
    interesting = [r for r in results if r.status != "unchanged" or r.findings]
    document = {
        "version": 1,
        "from": from_release,
        "to": to_release,
        "mode": mode,
        "summary": summary.as_dict(),
        "files": [result_as_dict(r, with_diff) for r in interesting],
    }
    if written_for is not None:
        document["written_for"] = written_for
    return json_text(document)


# What `os.fsdecode` makes of a byte of a file name that is not UTF-8 (surrogateescape: U+DC80..U+DCFF),
# and any other lone surrogate: none can be written as UTF-8.
_SURROGATE = re.compile("[\ud800-\udfff]")


def json_text(document) -> str:
    """JSON that is valid UTF-8: text as it is (`ensure_ascii=False`), but each lone surrogate escaped as
    `\\udcXX`, so `json.load` gives back the name `os.fsdecode` made and `os.fsencode` turns it into the
    file's bytes (docs/codes.md)."""
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", json.dumps(document, indent=2, ensure_ascii=False))
