"""Process discovered files in worker processes, streaming results back in discovery order.

Workers get the composed tables once (fork shares them; other start methods pickle them once per worker
through the initializer) and then only chunks of paths: file bytes never cross a process boundary, except
the before/after of files that change. At most a few chunks are in flight, so memory stays flat however
large the tree. Small runs (pre-commit: a handful of files) never start a pool.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
from collections import deque
from collections.abc import Iterable, Iterator
from itertools import chain, islice

from migrator.discover import Candidate
from migrator.filekind import NOT_A_KIND, KindPrefilter as Prefilter, kind_for, skip_reason_by_name
from migrator.fileprocess import FileResult, process_file, sniff_skip_reason

# Below this many files one process is faster than starting workers.
SERIAL_BELOW = 256
CHUNK = 128
IN_FLIGHT_PER_WORKER = 4


def default_jobs() -> int:
    """The CPUs this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def process_candidate(candidate: Candidate, mappings, prefilter: Prefilter | None) -> FileResult:
    """One candidate's result: the kind check first (the name, else the head bytes), then `process_file`."""
    try:
        return _process_candidate(candidate, mappings, prefilter)
    except Exception as exc:  # noqa: BLE001 - one file's failure must never stop the run
        return FileResult(candidate.display, "failed", reason=f"internal error: {type(exc).__name__}: {exc}")


def _process_candidate(candidate: Candidate, mappings, prefilter: Prefilter | None) -> FileResult:
    if candidate.skip_reason:
        return FileResult(candidate.display, "skipped", reason=candidate.skip_reason)
    try:
        spec, head = kind_for(candidate.path)
    except OSError as exc:
        return FileResult(candidate.display, "skipped", reason=f"unreadable: {exc.strerror or exc}")
    if spec is None:
        reason = sniff_skip_reason(head) if head else None
        return FileResult(candidate.display, "skipped", reason=reason or NOT_A_KIND)
    return process_file(candidate.path, candidate.display, mappings, prefilter, spec=spec)


_worker_state: tuple = ()


def _init_worker(mappings, prefilter) -> None:
    global _worker_state
    _worker_state = (mappings, prefilter)


def _process_chunk(chunk: list[Candidate]) -> list:
    """Every candidate's result, the common ones as small tuples (`_compact`): most of a tree is files
    skipped by name or read and left unchanged, and a tuple crosses the process boundary 5x cheaper."""
    mappings, prefilter = _worker_state
    return [_compact(decided_by_name(c) or process_candidate(c, mappings, prefilter)) for c in chunk]


def _compact(result: FileResult):
    if result.edits or result.findings or result.before is not None:
        return result
    if result.status == "skipped" and result.kind is None:
        return ("skipped", result.reason)
    if result.status == "unchanged" and result.reason is None:
        return ("unchanged", result.kind)
    return result


def _expand(candidate: Candidate, compact) -> FileResult:
    if not isinstance(compact, tuple):
        return compact
    status, detail = compact
    if status == "skipped":
        return FileResult(candidate.display, "skipped", reason=detail)
    return FileResult(candidate.display, "unchanged", kind=detail)


def decided_by_name(candidate: Candidate) -> FileResult | None:
    """The result when the discovery or the file name alone settles it (no I/O), else None."""
    if candidate.skip_reason:
        return FileResult(candidate.display, "skipped", reason=candidate.skip_reason)
    reason = skip_reason_by_name(candidate.path)
    if reason:
        return FileResult(candidate.display, "skipped", reason=reason)
    return None


def process_candidates(candidates: Iterable[Candidate], mappings, prefilter: Prefilter | None,
                       jobs: int = 1) -> Iterator[tuple[Candidate, FileResult]]:
    """(candidate, result) for every candidate, in the order given, whatever `jobs` is.

    With workers, everything but the walk and the reporting happens in them.
    """
    stream = iter(candidates)
    first = list(islice(stream, SERIAL_BELOW))
    if jobs <= 1 or len(first) < SERIAL_BELOW:
        for candidate in chain(first, stream):
            yield candidate, decided_by_name(candidate) or process_candidate(candidate, mappings, prefilter)
        return
    yield from _pooled(chain(first, stream), mappings, prefilter, jobs)


def _batches(stream: Iterator[Candidate]) -> Iterator[list[Candidate]]:
    """Chunks of candidates; the workers decide even what the name settles, so that the main
    process, which walks the tree and reports, stays the lighter of the processes."""
    while True:
        batch = list(islice(stream, CHUNK))
        if not batch:
            return
        yield batch


def _context():
    # fork shares the composed tables for free; elsewhere (macOS, Windows) the default start method.
    if sys.platform.startswith("linux"):
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context()


def _merge(batch: list[Candidate], results: list) -> Iterator[tuple[Candidate, FileResult]]:
    for candidate, compact in zip(batch, results):
        yield candidate, _expand(candidate, compact)


def _pooled(stream: Iterator[Candidate], mappings, prefilter, jobs: int) -> Iterator[tuple[Candidate, FileResult]]:
    pool = _context().Pool(jobs, initializer=_init_worker, initargs=(mappings, prefilter))
    pending: deque = deque()
    try:
        for batch in _batches(stream):
            pending.append((batch, pool.apply_async(_process_chunk, (batch,))))
            while len(pending) >= jobs * IN_FLIGHT_PER_WORKER:
                done, result = pending.popleft()
                yield from _merge(done, result.get())
        while pending:
            done, result = pending.popleft()
            yield from _merge(done, result.get())
        pool.close()
    finally:
        pool.terminate()
        pool.join()
