"""The one worker pool: every command that reads files (the rewrite, `lint`, `--from auto`) runs its
`FileWork` over the discovered files here, results streaming back in discovery order.

Workers get the work once (fork shares it; other start methods pickle it once per worker) and then
only chunks of paths: file bytes never cross a process boundary. At most a few chunks are in flight,
so memory stays flat however large the tree. Small runs (pre-commit: a handful of files) never start a
pool, and a pool starts a worker only when a chunk waits for one, up to `-j` and what the system's
process limits leave. A worker that dies (the OOM killer) fails the files of the chunk it was working
on, with the signal, and the run goes on. Workers cannot outlive the run: they die with the main
process (a parent-death signal, else a thread that watches the parent), and a run that stops early
(Ctrl-C, SIGTERM, an error) kills them, stopped ones (SIGSTOP) included.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import socket
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from itertools import chain, islice
from multiprocessing.connection import wait
from multiprocessing.reduction import ForkingPickler
from typing import Protocol, TypeVar

from migrator.codes import FailureReason, Reason
from migrator.discover import Candidate
from migrator.proclimits import spare_processes

IN_FLIGHT_PER_WORKER = 4
# Chunks a worker holds at once: the one it works on and the next, already in its pipe, so it never
# waits for the parent between chunks (that wait was a sixth of a worker's time on a 20k-file tree).
QUEUED_PER_WORKER = 2
# A worker may start `bash -n` (the shell validator) and git: two processes a worker, of the room left.
PROCESSES_PER_WORKER = 2
STOP_SECONDS = 5  # how long a finished run waits for an idle worker to exit before killing it

Result = TypeVar("Result")


class FileWork(Protocol[Result]):
    """What the pool runs over each file. The main process asks `by_name` (no I/O) and `expand`; a worker
    (or the main process, for a small run) asks `run`. Lives in every worker: fork shares it."""

    # Fewer files than this: one process is faster than starting workers.
    serial_below: int
    # Files a worker is sent at once: enough that the pipe's cost per file is small, few enough that
    # the workers share the tree evenly.
    chunk: int

    def by_name(self, candidate: Candidate) -> Result | None:
        """The result when discovery or the file's name settles it, else None."""

    def run(self, candidate: Candidate) -> object:
        """The result, or a smaller picklable stand-in for it that `expand` turns back. Never raises."""

    def expand(self, candidate: Candidate, outcome: object) -> Result:
        """The result of what `run` returned."""

    def lost(self, candidate: Candidate, reason: Reason) -> Result:
        """The result of a file whose worker died before its chunk came back."""


class WorkerStartError(Exception):
    """A worker process could not be started (the system's process limit, no memory): str() says so."""


def default_jobs() -> int:
    """The CPUs this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def process_files(candidates: Iterable[Candidate], work: FileWork[Result], jobs: int = 1,
                  note: Callable[[str], None] | None = None) -> Iterator[tuple[Candidate, Result]]:
    """(candidate, result) for every candidate, in the order given, whatever `jobs` is. With workers,
    everything but the walk and the reporting happens in them. `note` is told when the system's process
    limits allow fewer workers than `jobs`. Raises `WorkerStartError` when a needed worker cannot start."""
    stream = iter(candidates)
    first = list(islice(stream, work.serial_below))
    if jobs > 1 and len(first) >= work.serial_below:
        jobs = _within_system_limits(jobs, note)
    if jobs <= 1 or len(first) < work.serial_below:
        for candidate in chain(first, stream):
            result = work.by_name(candidate)
            yield candidate, work.expand(candidate, work.run(candidate)) if result is None else result
        return
    yield from _pooled(chain(first, stream), work, jobs)


def _within_system_limits(jobs: int, note) -> int:
    """`jobs`, or fewer when the system's process limits (RLIMIT_NPROC, the cgroup's pids.max) leave room
    for fewer workers: a fork past them fails."""
    room = spare_processes()
    if room is None:
        return jobs
    allowed = max(1, room // PROCESSES_PER_WORKER)
    if allowed < jobs and note is not None:
        note(f"note: -j {jobs} lowered to {allowed}: the system's process limit leaves room for {room} more "
             "processes")
    return min(jobs, allowed)


_worker_work: FileWork | None = None


def _process_chunk(chunk: list[Candidate]) -> list:
    """Every candidate's result (or its stand-in) in a worker. The main process sends only the files
    their name does not decide."""
    run = _worker_work.run
    return [run(candidate) for candidate in chunk]


def _batches(stream: Iterator[Candidate], size: int) -> Iterator[list[Candidate]]:
    """Chunks of candidates, in discovery order."""
    while True:
        batch = list(islice(stream, size))
        if not batch:
            return
        yield batch


def _context():
    # fork shares the composed tables for free; elsewhere (macOS, Windows) the default start method.
    if sys.platform.startswith("linux"):
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context()


def _merge(work: FileWork, batch: list[Candidate], decided: list, results: list) -> Iterator[tuple[Candidate, object]]:
    """The chunk's results in its order: what the name settled here, the workers' results for the rest."""
    from_workers = iter(results)
    for candidate, result in zip(batch, decided):
        yield candidate, result if result is not None else work.expand(candidate, next(from_workers))


# A chunk crosses the pipe as plain tuples: a NamedTuple pickles through a Python call per item, which
# made pickling the chunks 3x slower (30 ms of the parent's time on a 20k-file tree).
_as_candidate = tuple.__new__


def _parent_death_signal() -> Callable[[], bool] | None:
    """A function a forked worker calls to be sent SIGKILL when its parent dies (Linux prctl
    PR_SET_PDEATHSIG; True when set), prepared in the parent so no worker loads ctypes itself."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (ImportError, OSError, AttributeError):
        return None
    pr_set_pdeathsig = 1
    return lambda: prctl(pr_set_pdeathsig, signal.SIGKILL, 0, 0, 0) == 0


def _watch_parent(parent: int) -> None:
    """Where no parent-death signal exists: a thread that ends the worker once its parent is gone."""
    import time

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="watch-parent", daemon=True).start()


def _serve(conn, inherited: list, work: FileWork, parent: int, die_with_parent) -> None:
    """A worker: chunks in, results out, until the parent says stop or goes away (EOF on the pipe, or
    the parent-death signal even mid-file)."""
    global _worker_work
    if die_with_parent is None or not die_with_parent():
        _watch_parent(parent)
    if os.getppid() != parent:  # the parent died before the signal was armed
        os._exit(1)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the parent, which stops us
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # not the parent's handler: a worker just ends
    for other in inherited:
        other.close()  # the parent's ends of the other pipes: else they would never see EOF
    _worker_work = work
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

    def __init__(self, context, work: FileWork, others: list[_Worker], die_with_parent):
        ours, theirs = context.Pipe()
        inherited = [w.conn for w in others] + [ours] if context.get_start_method() == "fork" else []
        self.process = context.Process(target=_serve, args=(theirs, inherited, work, os.getpid(), die_with_parent),
                                       daemon=True)
        try:
            self.process.start()
        except OSError as exc:  # BlockingIOError at the process limit, ENOMEM
            ours.close()
            theirs.close()
            raise WorkerStartError(f"cannot start a worker process: {exc.strerror or exc}; the system's "
                                   "process limit may be reached: pass a smaller -j (-j 1 starts none)") from exc
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
        self.process.join(STOP_SECONDS)
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

    def ask_to_stop(self) -> None:
        if not self.tasks and self.process.is_alive():
            try:
                self.conn.send(None)
            except OSError:
                pass

    def end(self, wait: float) -> None:
        """Wait up to `wait` seconds for the process to exit, then kill it: SIGKILL ends a stopped
        (SIGSTOP) process too, where SIGTERM would wait for it to be continued."""
        self.process.join(wait)
        if self.process.is_alive():
            self.process.kill()
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


def _pooled(stream: Iterator[Candidate], work: FileWork, jobs: int) -> Iterator[tuple[Candidate, object]]:
    """Chunks to up to `jobs` workers, each over its own pipe, so a worker that dies (the OOM killer) is
    seen at once (its pipe ends, its sentinel fires): the files of the chunk it was working on fail with
    the reason, another worker takes the chunks it had not started, and the run goes on.
    (multiprocessing.Pool would wait forever.)"""
    context = _context()
    die_with_parent = _parent_death_signal()
    workers: list[_Worker] = []
    # The name settles 40% of a tree (images, data files): the main process decides those itself, which
    # costs it what pickling them for a worker and reading back their results cost (~1 us a file), and
    # spares the workers ~3 us a file. Only the other files of a chunk go to a worker.
    window: deque = deque()  # (index, chunk, what the name decided or None a file) in discovery order
    waiting: deque = deque()  # (index, the chunk's files the name did not decide) not yet sent to a worker
    done: dict[int, list] = {}
    batches = enumerate(_batches(stream, work.chunk))
    exhausted, idle_deaths, finished = False, 0, False

    def lost(batch: list[Candidate], reason: Reason) -> list:
        return [work.lost(candidate, reason) for candidate in batch]

    def idle_worker() -> _Worker | None:
        """The least loaded worker, or a new one when every worker has work and `jobs` allows one more."""
        worker = min(workers, key=lambda w: len(w.tasks), default=None)
        if (worker is None or worker.tasks) and len(workers) < jobs:
            worker = _Worker(context, work, workers, die_with_parent)
            workers.append(worker)
        return worker

    def dispatch() -> None:
        """Send waiting chunks, each to the least loaded worker, while that worker takes it."""
        nonlocal idle_deaths
        while waiting:
            worker = idle_worker()
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
                # died while idle: it held no files; another starts in its place (a few times at most)
                why = worker.death()
                idle_deaths += 1
                workers.remove(worker)
                worker.conn.close()
                if idle_deaths > 2 * jobs:
                    reason = FailureReason.WORKERS_KEEP_DYING.because(why)
                    for index, batch in waiting:
                        done[index] = lost(batch, reason)
                    waiting.clear()
                    return
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
                decided = [work.by_name(c) for c in batch]
                window.append((index, batch, decided))
                rest = [c for c, result in zip(batch, decided) if result is None]
                if rest:
                    waiting.append((index, rest))
                else:
                    done[index] = []
            dispatch()
            while window and window[0][0] in done:
                index, batch, decided = window.popleft()
                yield from _merge(work, batch, decided, done.pop(index))
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
                    done[index] = lost(batch, FailureReason.WORKER_DIED.because(worker.death()))
                    waiting.extendleft(reversed(worker.tasks))
                    worker.tasks.clear()
                    workers.remove(worker)
                    worker.conn.close()
                    continue
                done[index] = results
                worker.tasks.popleft()
    finally:
        # A finished run lets idle workers exit; a run stopped early (Ctrl-C, SIGTERM, an error, a
        # consumer that stopped reading) kills them at once, stopped ones too.
        for worker in workers:
            if finished:
                worker.ask_to_stop()
            else:
                worker.process.kill()
        for worker in workers:
            worker.end(STOP_SECONDS if finished else 0)
