"""The run: discover, process every file (`fileprocess`, in `parallel` workers), guard, write.

Files are written only here, atomically and after the git guard; a write failure turns that file's
`FileResult` into a failure, never stops the run.
"""

from __future__ import annotations

import gc
import os
import stat
from dataclasses import dataclass, field

from migrator.atomic import replace_atomically, sync_directories
from migrator.codes import FailureReason
from migrator.discover import discover
from migrator.filekind import build_prefilter
from migrator.fileprocess import FileResult, RewriteWork
from migrator.mapping import MappingSet
from migrator.parallel import process_files


class WriteError(Exception):
    pass


def writable_by_mode(st: os.stat_result) -> bool:
    """Whether the mode bits let whoever runs us write the file. Not `os.access`: for root every
    check passes, and a 0444 script in a training container is still its owner's "don't edit";
    root writes a file when any class may write it."""
    euid = os.geteuid()
    if euid == 0:
        return bool(st.st_mode & 0o222)
    if st.st_uid == euid:
        return bool(st.st_mode & stat.S_IWUSR)
    if st.st_gid == os.getegid() or st.st_gid in os.getgroups():
        return bool(st.st_mode & stat.S_IWGRP)
    return bool(st.st_mode & stat.S_IWOTH)


def write_atomic(path: str, before: bytes, after: bytes) -> None:
    """Replace `path` with `after` in one rename, keeping its mode; refuse if it changed meanwhile."""
    st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        raise WriteError("is a symlink; not writing through it")
    if not writable_by_mode(st):  # the rename would succeed, but the owner said "don't edit"
        raise WriteError("the file is read-only; make it writable to migrate it")
    with open(path, "rb") as fh:
        if fh.read() != before:
            raise WriteError("changed on disk while verl-migrate ran; run again")
    replace_atomically(path, after, stat.S_IMODE(st.st_mode), (st.st_uid, st.st_gid), sync_directory=False,
                       attributes_of=path)


def write_results(results: list[FileResult], paths: dict[str, str], on_failed=None) -> None:
    """Write every changed result; a write failure (a full disk, EIO, a read-only file, ...) turns that
    result into a failure, passed to `on_failed`. Each directory is fsynced once after its files (a
    rename is atomic at once; the fsync only makes it durable)."""
    written = []
    for result in results:
        if result.status != "changed":
            continue
        try:
            write_atomic(paths[result.path], result.before or b"", result.after or b"")
            written.append(os.path.dirname(os.path.abspath(paths[result.path])))
            result.findings = [f.as_written() for f in result.findings]  # lines of the file on disk now
        except (OSError, WriteError) as exc:
            result.fail(FailureReason.NOT_WRITTEN.because(getattr(exc, "strerror", None) or exc))
            if on_failed is not None:
                on_failed(result)
    sync_directories(written)


@dataclass
class RunOptions:
    paths: list[str]
    exclude: tuple[str, ...] = ()
    write: bool = True
    allow_dirty: bool = False
    allow_staged: bool = False  # changes all staged count as clean (the pre-commit hook)
    jobs: int = 1
    # A dry run's changed results keep their before and after bytes (`--diff` prints them); a writing run
    # always does. `--check` reports without them.
    keep_contents: bool = True
    # display path -> (MappingSet, prefilter) the file is migrated with instead of the run's: `--from auto`
    # settles each file on its own evidence (written_for.RunFit.start_for).
    per_file: dict = field(default_factory=dict)
    # The caller already ran the git guard before its own analysis (`refuse_dirty_files`, as the CLI does
    # before `--from auto` reads every file): the engine does not ask again before processing.
    guarded: bool = False


class DirtyFilesError(Exception):
    """Files the run would write that have uncommitted changes: `states` maps each to git's word for it."""

    def __init__(self, states: dict[str, str]):
        self.states = dict(sorted(states.items()))
        self.files = list(self.states)
        super().__init__("files with uncommitted changes: " + ", ".join(self.files))


def run(options: RunOptions, mappings: MappingSet, on_result=None, prefilter=None, on_note=None) -> list[FileResult]:
    """Discover, process and (unless dry) write; the git guard runs before the first write.

    A writing run holds the lock of its trees (`migrator.lock`; raises `LockHeld` when another run
    has it) and first removes temp files that a killed run left behind. Dry runs take no lock.
    `on_note` gets lines for a person: notes, and `error: PATH: could not write: ...` for a file that
    `on_result` reported as changed and whose write then failed."""
    note = on_note or (lambda message: None)
    if not options.write:
        return _run(options, mappings, on_result, prefilter, note)
    from migrator.lock import remove_stale_temp_files, run_lock

    with run_lock(options.paths, note) as me:
        remove_stale_temp_files(options.paths, me, note)
        return _run(options, mappings, on_result, prefilter, note)


RUN_GC_THRESHOLD = 20_000  # allocations between young-generation collections during a run


def _run(options: RunOptions, mappings: MappingSet, on_result, prefilter, note) -> list[FileResult]:
    if prefilter is None:
        prefilter = build_prefilter(mappings)
    # The composed tables live for the whole run: frozen, the collector stops re-scanning them (a tenth
    # of a run's CPU) and forked workers stop copying the pages it would touch. Thawed after: a process
    # that runs the engine again (tests, an editor) can still collect what it drops.
    # A run allocates in bursts (a file's syntax tree, its results) and keeps little: collecting every
    # 700 allocations cost ~40 ms of a 20k-file run (one process), every RUN_GC_THRESHOLD ~10 ms; at most that
    # many more objects wait for a collection (peak memory measured the same).
    thresholds = gc.get_threshold()
    gc.set_threshold(max(thresholds[0], RUN_GC_THRESHOLD), *thresholds[1:])
    try:
        if gc.get_freeze_count():  # the caller manages frozen objects itself: thawing them is not ours to do
            return _process_and_write(options, mappings, on_result, prefilter, note)
        gc.freeze()
        try:
            return _process_and_write(options, mappings, on_result, prefilter, note)
        finally:
            gc.unfreeze()
    finally:
        gc.set_threshold(*thresholds)


def _process_and_write(options: RunOptions, mappings: MappingSet, on_result, prefilter, note) -> list[FileResult]:
    results: list[FileResult] = []
    paths: dict[str, str] = {}
    candidates = discover(options.paths, options.exclude)
    work = RewriteWork(mappings, prefilter, contents=options.write or options.keep_contents,
                       place_written=options.write, per_file=options.per_file)
    if options.write and not options.allow_dirty and not options.guarded:
        candidates = list(candidates)
        refuse_dirty_first(candidates, work, options)
    for candidate, result in process_files(candidates, work, options.jobs, note):
        if candidate.skip is None:
            paths[candidate.display] = candidate.path
        results.append(result)
        if on_result is not None:
            on_result(result)
    if options.write:
        changed = [paths[r.path] for r in results if r.status == "changed"]
        if changed and not options.allow_dirty:
            from migrator.gitguard import dirty_states

            dirty = dirty_states(changed, staged_ok=options.allow_staged)  # changed meanwhile, or in a submodule
            if dirty:
                raise DirtyFilesError(dirty)
        write_results(results, paths, lambda failed: note(f"error: {failed.path}: {failed.reason}"))
    return results


def refuse_dirty_first(candidates, work: RewriteWork, options: RunOptions) -> None:
    """The git guard before the analysis (cargo fix's order), on the run's own tables."""
    dirty, states = dirty_candidates(options.paths, candidates, options.allow_staged)
    refuse_dirty_files(dirty, states, work)


def dirty_candidates(paths: list[str], candidates, staged_ok: bool = False):
    """(the candidates with uncommitted changes, real path -> git's word for their state), from one
    `git status` over the paths as given: cheap enough to ask before any file is read."""
    from migrator.gitguard import dirty_under

    states = dirty_under(paths, staged_ok=staged_ok)
    if not states:
        return [], states
    return [c for c in candidates if c.skip is None and os.path.realpath(c.path) in states], states


def refuse_dirty_files(dirty, states: dict[str, str], work: RewriteWork) -> None:
    """Only the dirty files are processed here; raises `DirtyFilesError` when one of them would change. A
    dirty file that needs no change does not block."""
    if not dirty:
        return
    changed = {c.path: states[os.path.realpath(c.path)] for c, result in process_files(dirty, work, 1)
               if result.status == "changed"}
    if changed:
        raise DirtyFilesError(changed)
