"""Run every check over every shell script found under the given paths; place, suppress and sort."""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field

from migrator.fileprocess import sniff_skip_reason
from migrator.fileread import read_bytes
from migrator.lint import LintFinding, load_checks
from migrator.lint.facts import Facts
from migrator.lint.script import Script
from migrator.mapping import MappingSet
from migrator.rewrite import spec_for

# `# verl-migrate: skip` silences every code on its line; `# verl-migrate: ignore VM003,VM005` those codes.
_SUPPRESS = re.compile(rb"verl-migrate:[ \t]*(?:(?P<skip>skip)\b|ignore[ \t]+(?P<codes>VM\d{3}(?:[ \t]*,[ \t]*VM\d{3})*))")


@dataclass
class FileReport:
    path: str
    findings: list[LintFinding] = field(default_factory=list)
    skipped: str | None = None
    notes: list[str] = field(default_factory=list)


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
                out.setdefault(number, set()).update(c.strip().decode() for c in m.group("codes").split(b","))
    return out


# Checks whose findings sit at an override key: their JSON findings carry `key` and `override` (VM007 sets its own).
_OVERRIDE_CODES = frozenset({"VM003", "VM004"})
_WORD = re.compile(rb"""(?:[^\s"'\\]|\\.|"[^"\n]*"|'[^'\n]*')*""")


def _about_override(script, problem):
    """(key, the override as written) when the problem sits at an override's key, else (None, None)."""
    o = next((o for o in script.overrides if o.start == problem.offset), None)
    if o is None:
        return None, None
    begin = o.start - len(o.prefix)
    return o.key, _WORD.match(script.src, begin).group().decode("utf-8", "replace")


def lint_source(src: bytes, path: str, facts: Facts, mappings: MappingSet, rev: str,
                select: frozenset[str] | None = None) -> FileReport:
    script = Script(path, src, facts, mappings, rev)
    silenced = suppressions(src)
    report = FileReport(path)
    for code, check in load_checks().items():
        if select is not None and code not in select:
            continue
        for problem in check.run(script):
            line, col = script.line_col(problem.offset)
            codes = silenced.get(line, set())
            if codes is None or code in codes:
                continue
            key, override = problem.key, problem.override
            if key is None and code in _OVERRIDE_CODES:
                key, override = _about_override(script, problem)
            report.findings.append(LintFinding(path, line, col, code, problem.message, problem.hint, check.severity,
                                               key, override))
    report.findings.sort(key=lambda f: (f.line, f.col, f.code))
    report.notes = list(dict.fromkeys(script.notes))
    return report


def lint_paths(paths: list[str], facts: Facts, mappings: MappingSet, rev: str, exclude: tuple[str, ...] = (),
               select: frozenset[str] | None = None, jobs: int = 1):
    """Yield a FileReport per discovered file, in discovery order; files that are not shell scripts are
    skipped with a reason. With `jobs` > 1 the scripts are linted by that many worker processes: judging
    a script's overrides with Hydra is CPU work (~10 ms a launch on an empty cache)."""
    from migrator.discover import discover

    pending: list[FileReport | tuple[bytes, str]] = []
    for candidate in discover(paths, exclude):
        candidate = candidate._replace(display=os.path.normpath(candidate.display))  # `./a.sh` -> `a.sh`
        if candidate.skip_reason:
            pending.append(FileReport(candidate.display, skipped=candidate.skip_reason))
            continue
        try:
            data = read_bytes(candidate.path)
        except OSError as exc:
            pending.append(FileReport(candidate.display, skipped=f"unreadable: {exc.strerror or exc}"))
            continue
        reason = sniff_skip_reason(data)
        head = data[3:200] if data.startswith(b"\xef\xbb\xbf") else data[:200]
        spec = spec_for(os.path.basename(candidate.path), head)
        if reason is None and spec is not None and spec.kind == "python":
            pending.append(lint_python_source(data, candidate.display, mappings, select))
            continue
        if reason is None and (spec is None or spec.kind != "shell"):
            reason = "not a shell script or Python file (lint checks launch scripts and Python's imports of verl)"
        pending.append(FileReport(candidate.display, skipped=reason) if reason else (data, candidate.display))
    scripts = [item for item in pending if isinstance(item, tuple)]
    reports = iter(_lint_all(scripts, (facts, mappings, rev, select), jobs))
    for item in pending:
        yield next(reports) if isinstance(item, tuple) else item


def lint_python_source(src: bytes, path: str, mappings: MappingSet, select: frozenset[str] | None = None) -> FileReport:
    """A Python file: its imports of verl at the target (VM123), with the same suppression comments."""
    from migrator.lint.python_imports import lint_python

    silenced = suppressions(src)
    report = FileReport(path)
    for finding in lint_python(src, path, mappings):
        codes = silenced.get(finding.line, set())
        if (select is None or finding.code in select) and codes is not None and finding.code not in codes:
            report.findings.append(finding)
    return report


def usable_cpus() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


_SHARED: tuple = ()  # (facts, mappings, rev, select) for the workers, inherited through fork
MIN_SCRIPTS_PER_WORKER = 8  # below this a worker's start-up costs more than it saves


def _lint_one(script: tuple[bytes, str]) -> FileReport:
    facts, mappings, rev, select = _SHARED
    return lint_source(script[0], script[1], facts, mappings, rev, select)


def _lint_all(scripts: list[tuple[bytes, str]], shared: tuple, jobs: int):
    """The reports of `scripts`, in order; in worker processes when there are enough scripts and fork is
    there to share the tables. A worker that dies (the OOM killer) costs its scripts a serial run."""
    global _SHARED
    _SHARED = shared
    jobs = min(jobs, len(scripts) // MIN_SCRIPTS_PER_WORKER)
    if jobs <= 1 or sys.platform != "linux":
        return map(_lint_one, scripts)
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    try:
        with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork")) as pool:
            return list(pool.map(_lint_one, scripts, chunksize=max(1, len(scripts) // (jobs * 4))))
    except BrokenProcessPool:
        return map(_lint_one, scripts)
