"""Process discovered files in worker processes, streaming results back in discovery order.

Workers get the composed tables once (fork shares them; other start methods pickle them once per worker)
and then only chunks of paths: file bytes never cross a process boundary, except
the before/after of files that change. At most a few chunks are in flight, so memory stays flat however
large the tree. Small runs (pre-commit: a handful of files) never start a pool. A worker that dies
(the OOM killer) fails the files of the chunk it was working on, with the signal, and the run goes on.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import socket
import sys
from collections import deque
from collections.abc import Iterable, Iterator
from itertools import chain, islice
from multiprocessing.connection import wait
from multiprocessing.reduction import ForkingPickler

from migrator.discover import Candidate
from migrator.filekind import NOT_A_KIND, kind_for, skip_reason_by_name, spec_by_name
from migrator.filekind import KindPrefilter as Prefilter
from migrator.fileprocess import FileResult, process_file, sniff_skip_reason
from migrator.fileread import read_bytes

# Below this many files one process is faster than starting workers.
SERIAL_BELOW = 256
CHUNK = 128
IN_FLIGHT_PER_WORKER = 4
# Chunks a worker holds at once: the one it works on and the next, already in its pipe, so it never
# waits for the parent between chunks (that wait was a sixth of a worker's time on a 20k-file tree).
QUEUED_PER_WORKER = 2


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
    """Every candidate's result, the common ones as small tuples (`_compact`): most files are read and
    left unchanged, and a tuple crosses the process boundary 5x cheaper. The main process sends only
    files their name does not decide (`_pooled`)."""
    mappings, prefilter = _worker_state
    return [_unchanged_by_prefilter(c, mappings, prefilter) or _compact(process_candidate(c, mappings, prefilter))
            for c in chunk]


def _unchanged_by_prefilter(candidate: Candidate, mappings, prefilter):
    """The result of the commonest file, a text file of a kind its name gives that holds no old token,
    straight from its bytes; for one that holds a token, `process_file`'s result from the bytes read here.
    None when the full way must decide (no kind by name, unreadable, binary), which then reads again.
    The same result `process_candidate` gives, without its layers and a FileResult a file (~3 us of
    ~20 us a file, on the 12,000 files a 20k-file tree reads)."""
    if candidate.skip_reason or prefilter is None:
        return None
    spec = spec_by_name(candidate.path)
    if spec is None:
        return None
    try:
        data = read_bytes(candidate.path)
    except OSError:
        return None
    if sniff_skip_reason(data):
        return None
    if not prefilter(data, spec.kind):
        return ("unchanged", spec.kind)
    # The prefilter has passed it: not asked again.
    return _compact(process_file(candidate.path, candidate.display, mappings, None, data=data, spec=spec))


def _compact(result: FileResult):
    if result.edits or result.findings or result.before is not None or result.hydra_rejections:
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
    """Chunks of candidates, in discovery order."""
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


def _merge(batch: list[Candidate], decided: list, results: list) -> Iterator[tuple[Candidate, FileResult]]:
    """The chunk's results in its order: what the name settled here, the workers' results for the rest."""
    from_workers = iter(results)
    for candidate, result in zip(batch, decided):
        yield candidate, result if result is not None else _expand(candidate, next(from_workers))


# A chunk crosses the pipe as plain tuples: a NamedTuple pickles through a Python call per item, which
# made pickling the chunks 3x slower (30 ms of the parent's time on a 20k-file tree).
_as_candidate = tuple.__new__


def _serve(conn, inherited: list, mappings, prefilter) -> None:
    """A worker: chunks in, results out, until the parent says stop or goes away (EOF on the pipe)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the parent, which stops us
    for other in inherited:
        other.close()  # the parent's ends of the other pipes: else they would never see EOF
    _init_worker(mappings, prefilter)
    while True:
        try:
            task = conn.recv()
        except (EOFError, OSError):
            return
        if task is None:
            return
        index, rows = task
        batch = [_as_candidate(Candidate, row) for row in rows]
        try:
            conn.send((index, _process_chunk(batch)))
        except OSError:
            return


class _Worker:
    """One worker process, our end of its pipe, and the chunks sent to it whose results have not come
    back (`tasks`, in the order sent: it works on the first; the others wait in its pipe)."""

    def __init__(self, context, mappings, prefilter, others: list["_Worker"]):
        ours, theirs = context.Pipe()
        inherited = [w.conn for w in others] + [ours] if context.get_start_method() == "fork" else []
        self.process = context.Process(target=_serve, args=(theirs, inherited, mappings, prefilter), daemon=True)
        self.process.start()
        theirs.close()
        self.conn = ours
        self.tasks: deque[tuple[int, list[Candidate]]] = deque()
        self.queue_limit = _queueable_bytes(ours)

    def takes(self, payload: bytes) -> bool:
        """Whether the worker can be sent this pickled chunk now. An idle one always can. A busy one only
        when the chunk fits in the pipe's buffer with room to spare: the worker reads it only after
        sending its current results, so a send that waited for buffer space while the worker waits
        for us to read its results would wait forever."""
        if not self.tasks:
            return True
        return len(self.tasks) < QUEUED_PER_WORKER and len(payload) <= self.queue_limit

    def death(self) -> str:
        """Why the process is gone: `killed by signal 9 (SIGKILL)`, `exited with code 1`."""
        self.process.join(5)
        if self.process.is_alive():  # it closed its pipe but lingers: not ours to trust any more
            self.process.kill()
            self.process.join()
        code = self.process.exitcode
        if code is not None and code < 0:
            try:
                name = f" ({signal.Signals(-code).name})"
            except ValueError:
                name = ""
            return f"killed by signal {-code}{name}"
        return f"exited with code {code}"

    def stop(self, wait: float) -> None:
        if not self.tasks and self.process.is_alive():
            try:
                self.conn.send(None)
            except OSError:
                pass
        self.process.join(wait)
        if self.process.is_alive():
            self.process.terminate()
            self.process.join()
        self.conn.close()


def _queueable_bytes(conn) -> int:
    """The most bytes we queue in a busy worker's pipe: a quarter of its send buffer (the kernel counts
    its own bookkeeping against the buffer too), or 0, queueing nothing, when the buffer size is unknown."""
    try:
        with socket.socket(fileno=os.dup(conn.fileno())) as sock:
            return sock.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF) // 4
    except (OSError, ValueError):
        return 0


def _lost(batch: list[Candidate], why: str) -> list:
    """Results for the files of a chunk whose worker died (none the name decides): failed, with the reason."""
    return [FileResult(c.display, "failed", reason=why) for c in batch]


def _pooled(stream: Iterator[Candidate], mappings, prefilter, jobs: int) -> Iterator[tuple[Candidate, FileResult]]:
    """Chunks to `jobs` workers, each over its own pipe, so a worker that dies (the OOM killer) is seen
    at once (its pipe ends, its sentinel fires): the files of the chunk it was working on fail with the reason,
    a new worker takes its place, and the run goes on. (multiprocessing.Pool would wait forever.)"""
    context = _context()
    workers: list[_Worker] = []
    for _ in range(jobs):
        workers.append(_Worker(context, mappings, prefilter, workers))
    # The name settles 40% of a tree (images, data files): the main process decides those itself, which
    # costs it what pickling them for a worker and reading back their results cost (~1 us a file), and
    # spares the workers ~3 us a file. Only the other files of a chunk go to a worker.
    window: deque = deque()  # (index, chunk, what the name decided or None a file) in discovery order
    waiting: deque = deque()  # (index, the chunk's files the name did not decide) not yet sent to a worker
    done: dict[int, list] = {}
    batches = enumerate(_batches(stream))
    exhausted, idle_deaths, finished = False, 0, False

    def replace(worker: _Worker) -> None:
        worker.conn.close()
        workers[workers.index(worker)] = _Worker(context, mappings, prefilter,
                                                 [w for w in workers if w is not worker])

    def dispatch() -> None:
        """Send waiting chunks, each to the least loaded worker, while that worker takes it."""
        nonlocal idle_deaths
        while waiting:
            worker = min(workers, key=lambda w: len(w.tasks))
            if len(worker.tasks) >= QUEUED_PER_WORKER:
                return  # all full: nothing to pickle yet (after each result, this is the common case)
            index, batch = waiting[0]
            payload = ForkingPickler.dumps((index, [tuple(candidate) for candidate in batch]))
            if not worker.takes(payload):
                return
            try:
                worker.conn.send_bytes(payload)
            except OSError:
                if worker.tasks:  # died at work: the wait in the loop sees its pipe end and settles its chunks
                    return
                # died while idle: it held no files; start another (a few times at most)
                why = worker.death()
                idle_deaths += 1
                if idle_deaths > 2 * jobs:
                    for index, batch in waiting:
                        done[index] = _lost(batch, f"not processed: worker processes keep dying ({why})")
                    waiting.clear()
                    return
                replace(worker)
                continue
            worker.tasks.append(waiting.popleft())

    try:
        while True:
            while not exhausted and len(window) < jobs * IN_FLIGHT_PER_WORKER:
                item = next(batches, None)
                if item is None:
                    exhausted = True
                    break
                index, batch = item
                decided = [decided_by_name(c) for c in batch]
                window.append((index, batch, decided))
                rest = [c for c, result in zip(batch, decided) if result is None]
                if rest:
                    waiting.append((index, rest))
                else:
                    done[index] = []
            dispatch()
            while window and window[0][0] in done:
                index, batch, decided = window.popleft()
                yield from _merge(batch, decided, done.pop(index))
            if exhausted and not window:
                finished = True
                return
            busy = [w for w in workers if w.tasks]
            if not busy:
                continue
            ready = set(wait([w.conn for w in busy] + [w.process.sentinel for w in busy]))
            for worker in busy:
                if worker.conn not in ready and worker.process.sentinel not in ready:
                    continue
                try:
                    index, results = worker.conn.recv()
                except (EOFError, OSError):
                    # It works through its chunks in order: the first was in its hands; the others it
                    # never started, and another worker takes them first.
                    index, batch = worker.tasks.popleft()
                    done[index] = _lost(batch, f"worker process died: {worker.death()}")
                    waiting.extendleft(reversed(worker.tasks))
                    worker.tasks.clear()
                    replace(worker)
                    continue
                done[index] = results
                worker.tasks.popleft()
    finally:
        for worker in workers:
            worker.stop(5 if finished else 0)
