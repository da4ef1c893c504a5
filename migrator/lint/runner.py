"""Run every check over every shell script found under the given paths; place, suppress and sort."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from migrator.codes import Reason, SkipReason, suppressed_by
from migrator.filekind import skip_reason_by_name, sniff, spec_by_name
from migrator.fileprocess import internal_error
from migrator.lint import LintFinding, load_checks
from migrator.lint.facts import Facts
from migrator.lint.script import Script
from migrator.mapping import MappingSet
from migrator.rewrite.launch_gate import launches_verl

# `# verl-migrate: skip` silences every code on its line; `# verl-migrate: ignore VM003,VM005` (or
# `ignore[VM003, VM005]`) those codes.
_SUPPRESS = re.compile(rb"verl-migrate:[ \t]*(?:(?P<skip>skip)\b|ignore(?:[ \t]+(?P<codes>VM\d{3}(?:[ \t]*,[ \t]*VM\d{3})*)"
                       rb"|[ \t]*\[[ \t]*(?P<bracketed>VM\d{3}(?:[ \t]*,[ \t]*VM\d{3})*)[ \t]*\]))")


@dataclass
class FileReport:
    path: str
    findings: list[LintFinding] = field(default_factory=list)
    skipped: str | None = None
    notes: list[str] = field(default_factory=list)
    failed: str | None = None  # why the file could not be checked (an internal error, its worker died)
    kind: str | None = None  # the file kind it was linted as ("shell", "python", "yaml")


def suppressions(src: bytes) -> dict[int, set[str] | None]:
    """line -> codes silenced there (None: all)."""
    out: dict[int, set[str] | None] = {}
    if b"verl-migrate:" not in src:
        return out
    for number, line in enumerate(src.split(b"\n"), start=1):
        for m in _SUPPRESS.finditer(line):
            if m.group("skip"):
                out[number] = None
            elif out.get(number, set()) is not None:
                named = m.group("codes") or m.group("bracketed")
                out.setdefault(number, set()).update(c.strip().decode() for c in named.split(b","))
    return out


# Checks whose findings sit at an override key: their JSON findings carry `key` and `override` (VM007 sets its own).
_OVERRIDE_CODES = frozenset({"VM003", "VM112"})
_WORD = re.compile(rb"""(?:[^\s"'\\]|\\.|"[^"\n]*"|'[^'\n]*')*""")


def _about_override(script, problem):
    """(key, the override as written) when the problem sits at an override's key, else (None, None)."""
    o = next((o for o in script.overrides if o.start == problem.offset), None)
    if o is None:
        return None, None
    begin = o.start - len(o.prefix)
    return o.key, _WORD.match(script.src, begin).group().decode("utf-8", "replace")


def command_suppressions(script, silenced: dict[int, set[str] | None]) -> dict[int, set[str] | None]:
    """`silenced` widened to whole commands: a marker on the last line of a `\\`-continued command, or on a
    comment line right above a command, covers every line of it (a comment after a `\\` on a middle line
    would end the command: VM002)."""
    if not silenced:
        return silenced
    lines = script.src.split(b"\n")
    out = dict(silenced)
    for node, _words in script.commands:
        first, last = node.start_point[0] + 1, node.end_point[0] + 1
        above = first - 1
        markers = [silenced[n] for n in (last,) if n in silenced and last > first]
        if above in silenced and lines[above - 1].lstrip().startswith(b"#"):
            markers.append(silenced[above])
        for codes in markers:
            for line in range(first, last + 1):
                if codes is None or out.get(line, set()) is None:
                    out[line] = None
                else:
                    out[line] = out.get(line, set()) | codes
    return out


def lint_source(src: bytes, path: str, facts: Facts, mappings: MappingSet, rev: str,
                select: frozenset[str] | None = None) -> FileReport:
    script = Script(path, src, facts, mappings.for_file(src), rev)
    silenced = command_suppressions(script, suppressions(src))
    report = FileReport(path)
    for check in load_checks().values():
        if select is not None and not select.intersection(check.codes):
            continue
        for problem in check.run(script):
            code = problem.code or check.code
            if select is not None and code not in select:
                continue
            line, col = script.line_col(problem.offset)
            codes = silenced.get(line, set())
            if codes is None or suppressed_by(code, codes, lint=True):
                continue
            key, override = problem.key, problem.override
            if key is None and code in _OVERRIDE_CODES:
                key, override = _about_override(script, problem)
            report.findings.append(LintFinding(path, line, col, code, problem.message, problem.hint, check.severity,
                                               key, override))
    if (select is None or "VM003" in select) and b"<<" in src and b"python" in src:
        report.findings.extend(_python_heredoc_keys(script, path, silenced))
    report.findings.sort(key=lambda f: (f.line, f.col, f.code))
    report.notes = list(dict.fromkeys(script.notes))
    return report


def _python_heredoc_keys(script, path: str, silenced) -> list[LintFinding]:
    """VM003 in the program of a `python3 - <<'PY'` heredoc: the keys its override strings give verl, as in
    a Python launcher (lint/python_keys.py), placed in the script."""
    from migrator.lint.python_keys import lint_python_keys
    from migrator.rewrite.shell.locator import python_heredocs

    out = []
    for body in python_heredocs(script.src, script.tree.root_node):
        program = script.src[body.start_byte:body.end_byte]
        for finding in lint_python_keys(program, path, script.mappings, script.rev,
                                        lambda offset, at=body.start_byte: script.line_col(at + offset)):
            codes = silenced.get(finding.line, set())
            if codes is not None and not suppressed_by(finding.code, codes, lint=True):
                out.append(finding)
    return out


def lint_paths(paths: list[str], facts: Facts, mappings: MappingSet, rev: str, exclude: tuple[str, ...] = (),
               select: frozenset[str] | None = None, jobs: int = 1, note=None, progress=None, prefilter=None):
    """Yield a FileReport per discovered file, in discovery order; files that are not shell scripts or
    Python files are skipped with a reason. The files go through the rewrite's pipeline and pool
    (`parallel.process_files`): judging a script's overrides with Hydra is CPU work (~10 ms a launch
    on an empty cache). `progress`: told the total when the walk ends (`Progress.counting`); `prefilter`:
    the composed tables' (`tablecache`), built here when not given."""
    from migrator.discover import discover
    from migrator.parallel import process_files

    work = LintWork(facts, mappings, rev, select, prefilter)
    candidates = discover(paths, exclude)
    if progress is not None:
        candidates = progress.counting(candidates)
    for _, report in process_files(candidates, work, jobs, note):
        yield report


LINTED_KINDS = frozenset({"shell", "python", "yaml"})
NOT_LINTED = ("not a shell script, Python file or YAML config (lint checks launch scripts, Python's imports of verl "
              "and configs that extend verl's)")


class LintWork:
    """The lint as the pool's `parallel.FileWork`: shell scripts get every check, Python files the import
    check and, in launchers, the key check; the rest is skipped, by name where the name decides."""

    serial_below = 16  # files: a script costs milliseconds, so a pool pays off early
    chunk = 8

    def __init__(self, facts: Facts, mappings: MappingSet, rev: str, select: frozenset[str] | None, prefilter=None):
        self.facts, self.mappings, self.rev, self.select = facts, mappings, rev, select
        self.prefilter = prefilter

    def may_change(self, data: bytes, kind: str) -> bool:
        """Does the file launch verl (an override string goes to an entry point), and can a table entry change
        it (the rewrite's prefilter)? Only then are its keys looked at: code that merely reads verl's config
        is the migration's business, and the Python rewriter's passes would double the lint's cost on a
        checkout of verl."""
        if not launches_verl(data):
            return False
        if self.prefilter is None:
            from migrator.filekind import build_prefilter

            self.prefilter = build_prefilter(self.mappings)
        return bool(self.prefilter(data, kind))

    def by_name(self, candidate) -> FileReport | None:
        display = os.path.normpath(candidate.display)  # `./a.sh` -> `a.sh`
        if candidate.skip is not None:
            return FileReport(display, skipped=candidate.skip.text)
        reason = skip_reason_by_name(candidate.path)
        if reason is not None:
            return FileReport(display, skipped=NOT_LINTED if reason.why is SkipReason.NOT_A_KIND else reason.text)
        spec = spec_by_name(candidate.path)
        if spec is not None and spec.kind not in LINTED_KINDS:
            return FileReport(display, skipped=NOT_LINTED)
        return None

    def run(self, candidate) -> FileReport:
        display = os.path.normpath(candidate.display)
        try:
            spec, data, skip = sniff(candidate.path, LINTED_KINDS)
            if skip is not None:
                return FileReport(display, skipped=NOT_LINTED if skip.why is SkipReason.NOT_A_KIND else skip.text)
            if data is None:  # a kind the lint does not check
                return FileReport(display, skipped=NOT_LINTED)
            if spec.kind == "python":
                report = lint_python_source(data, display, self.mappings, self.select, self.rev,
                                            self.may_change(data, spec.kind))
            elif spec.kind == "yaml":
                report = lint_yaml_source(data, display, self.facts, self.mappings, self.rev, self.select)
            else:
                report = lint_source(data, display, self.facts, self.mappings, self.rev, self.select)
            report.kind = spec.kind
            return report
        except Exception as exc:  # noqa: BLE001 - one file's failure must never stop the run
            return FileReport(display, failed=internal_error(exc).text)

    def expand(self, candidate, report: FileReport) -> FileReport:
        return report

    def lost(self, candidate, reason: Reason) -> FileReport:
        return FileReport(os.path.normpath(candidate.display), failed=reason.text)


def lint_python_source(src: bytes, path: str, mappings: MappingSet, select: frozenset[str] | None = None,
                       rev: str | None = None, keys: bool = True) -> FileReport:
    """A Python file: its imports of verl at the target (VM123) and, where the prefilter lets a table entry
    change it (`keys`), the keys it gives verl that the target no longer has (VM003), with the same
    suppression comments."""
    from migrator.lint.python_imports import lint_python
    from migrator.lint.python_keys import CODE as KEY_CODE
    from migrator.lint.python_keys import lint_python_keys

    silenced = suppressions(src)
    report = FileReport(path)
    found = lint_python(src, path, mappings)
    if keys and (select is None or KEY_CODE in select):
        found += lint_python_keys(src, path, mappings, rev or mappings.to_release)
    for finding in sorted(found, key=lambda f: (f.line, f.col, f.code)):
        codes = silenced.get(finding.line, set())
        if (select is None or finding.code in select) and codes is not None and \
                not suppressed_by(finding.code, codes, lint=True):
            report.findings.append(finding)
    return report


def lint_yaml_source(src: bytes, path: str, facts: Facts, mappings: MappingSet, rev: str,
                     select: frozenset[str] | None = None) -> FileReport:
    """A YAML file: a Hydra config that extends one of verl's, its keys against that config (VM003, VM112)."""
    from migrator.lint.yaml_configs import CODES, lint_yaml

    report = FileReport(path)
    if select is not None and not select.intersection(CODES):
        return report
    silenced = suppressions(src)
    for finding in lint_yaml(src, path, facts, mappings, rev):
        codes = silenced.get(finding.line, set())
        if (select is None or finding.code in select) and codes is not None and \
                not suppressed_by(finding.code, codes, lint=True):
            report.findings.append(finding)
    return report
