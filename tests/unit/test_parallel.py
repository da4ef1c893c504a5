"""A busy worker holds its next chunk in its pipe, so it never waits for the parent between chunks. The
queue must never cost a file (a worker that dies gives its unstarted chunks to another) and never
hang the run (a chunk too big for the pipe's buffer waits until the worker is idle)."""

from __future__ import annotations

import os
import signal
import time
from collections import deque

import pytest

from migrator import parallel
from migrator.discover import Candidate
from migrator.fileprocess import RewriteWork

OLD = b"python3 -m verl.trainer.main_ppo actor_rollout_ref.rollout.update_weights_bucket_megabytes=1\n"


def _worker(tasks: int, limit: int) -> parallel._Worker:
    worker = object.__new__(parallel._Worker)  # no process: only the queueing rule is under test
    worker.tasks = deque((i, []) for i in range(tasks))
    worker.queue_limit = limit
    return worker


def test_an_idle_worker_takes_any_chunk_a_busy_one_only_what_its_pipe_holds():
    assert _worker(0, 0).takes(b"x" * 10_000_000)
    assert _worker(1, 1000).takes(b"x" * 1000)
    assert not _worker(1, 1000).takes(b"x" * 1001)
    assert not _worker(parallel.QUEUED_PER_WORKER, 1000).takes(b"x")


def test_the_queue_limit_is_a_quarter_of_the_real_pipe_buffer():
    ours, theirs = parallel._context().Pipe()
    try:
        limit = parallel._queueable_bytes(ours)
        assert limit > 0
        assert limit * 4 <= 16 * 1024 * 1024  # a real SO_SNDBUF, not a made-up figure
    finally:
        ours.close()
        theirs.close()


def test_a_dead_worker_gives_its_queued_chunks_to_another(tmp_path, core_mappings, monkeypatch, deadline):
    candidates = []
    for i in range(RewriteWork.serial_below + 4 * RewriteWork.chunk):
        path = tmp_path / ("die.sh" if i == RewriteWork.chunk + 5 else f"s{i:04}.sh")
        path.write_bytes(OLD)
        candidates.append(Candidate(str(path), str(path)))
    real_chunk = parallel._process_chunk

    def chunk_or_die(batch):
        if any(c.path.endswith("die.sh") for c in batch):
            # Die once the parent has queued this worker's next chunk, which it says in a file: a fixed
            # sleep lost that race on a loaded machine, and the test then tested nothing.
            while not (tmp_path / f"queued-{os.getpid()}").exists():
                time.sleep(0.01)
            os.kill(os.getpid(), signal.SIGKILL)
        return real_chunk(batch)

    class Announced(deque):
        """The parent's record of a worker's chunks: a file appears when one waits behind another."""

        def __init__(self, pid: int):
            super().__init__()
            self.pid = pid

        def append(self, task):
            super().append(task)
            if len(self) >= 2:
                (tmp_path / f"queued-{self.pid}").touch()

    real_init = parallel._Worker.__init__

    def announcing_init(self, *args, **kwargs):
        real_init(self, *args, **kwargs)
        self.tasks = Announced(self.process.pid)

    queued_at_death = []
    real_death = parallel._Worker.death

    def death(self):
        queued_at_death.append(len(self.tasks))  # the dead chunk is taken off already: these never started
        return real_death(self)

    monkeypatch.setattr(parallel, "_process_chunk", chunk_or_die)
    monkeypatch.setattr(parallel._Worker, "death", death)
    monkeypatch.setattr(parallel._Worker, "__init__", announcing_init)
    out = list(parallel.process_files(candidates, RewriteWork(core_mappings, None), jobs=2))
    assert queued_at_death and queued_at_death[0] >= 1, "the dying worker held no queued chunk: nothing tested"
    assert [c for c, _ in out] == candidates
    failed = [c.path for c, r in out if r.status == "failed"]
    assert failed == [c.path for c in candidates[RewriteWork.chunk: 2 * RewriteWork.chunk]]  # only the one in its hands
    assert all(r.status == "changed" for c, r in out if c.path not in failed)


def test_chunks_bigger_than_the_pipe_buffer_do_not_hang_the_run(tmp_path, core_mappings, monkeypatch, deadline):
    # Long paths make each chunk, and long files each chunk's results (a changed file's text comes back),
    # larger than the pipe's buffer: a chunk queued into a busy worker would block the parent while the
    # worker blocks sending its results.
    monkeypatch.setattr(RewriteWork, "serial_below", 8)
    monkeypatch.setattr(RewriteWork, "chunk", 160)
    deep = tmp_path
    for level in range(18):
        deep = deep / (f"{level:02}" + "d" * 200)
    deep.mkdir(parents=True)
    ours, theirs = parallel._context().Pipe()
    limit = parallel._queueable_bytes(ours)
    ours.close()
    theirs.close()
    assert len(str(deep)) * 2 * RewriteWork.chunk > 4 * limit, "chunks fit the buffer: nothing tested"
    candidates = []
    for i in range(8 * RewriteWork.chunk):
        path = deep / f"s{i:04}.sh"
        path.write_bytes(b"# padding\n" * 100 + OLD)
        candidates.append(Candidate(str(path), str(path)))
    out = list(parallel.process_files(candidates, RewriteWork(core_mappings, None), jobs=2))
    assert [c for c, _ in out] == candidates
    assert all(r.status == "changed" for _, r in out)


def test_each_chunk_is_pickled_once(tmp_path, core_mappings, monkeypatch):
    # With every worker's queue full, the next chunk waits unpickled: it was pickled and thrown away
    # after every result before (a pickle of 128 paths each time).
    candidates = []
    for i in range(RewriteWork.serial_below + 6 * RewriteWork.chunk):
        path = tmp_path / f"s{i:04}.sh"
        path.write_bytes(OLD)
        candidates.append(Candidate(str(path), str(path)))
    pickled = []
    real = parallel.ForkingPickler

    class Counting:
        @staticmethod
        def dumps(obj):
            pickled.append(obj[0])
            return real.dumps(obj)

    monkeypatch.setattr(parallel, "ForkingPickler", Counting)
    out = list(parallel.process_files(candidates, RewriteWork(core_mappings, None), jobs=2))
    assert len(out) == len(candidates)
    assert sorted(pickled) == list(range(-(-len(candidates) // RewriteWork.chunk)))


def _scripts(directory, count: int) -> list[Candidate]:
    candidates = []
    for i in range(count):
        path = directory / f"s{i:04}.sh"
        path.write_bytes(OLD)
        candidates.append(Candidate(str(path), str(path)))
    return candidates


def test_no_more_workers_start_than_there_are_chunks(tmp_path, core_mappings, monkeypatch, deadline):
    started = []
    real = parallel._Worker.__init__

    def counted(self, *args):
        started.append(1)
        real(self, *args)

    monkeypatch.setattr(parallel._Worker, "__init__", counted)
    candidates = _scripts(tmp_path, 3 * RewriteWork.chunk)  # three chunks, past the serial bound
    assert len(candidates) >= RewriteWork.serial_below
    out = list(parallel.process_files(candidates, RewriteWork(core_mappings, None), jobs=8))
    assert [c for c, _ in out] == candidates and all(r.status == "changed" for _, r in out)
    assert 1 <= len(started) <= 3


def test_jobs_are_bounded_by_the_systems_process_limit(tmp_path, core_mappings, monkeypatch, deadline):
    notes, started = [], []
    real = parallel._Worker.__init__
    monkeypatch.setattr(parallel._Worker, "__init__", lambda self, *a: started.append(1) or real(self, *a))
    monkeypatch.setattr(parallel, "spare_processes", lambda: 2 * parallel.PROCESSES_PER_WORKER)
    candidates = _scripts(tmp_path, 6 * RewriteWork.chunk)
    out = list(parallel.process_files(candidates, RewriteWork(core_mappings, None), jobs=16, note=notes.append))
    assert len(out) == len(candidates) and all(r.status == "changed" for _, r in out)
    assert len(started) <= 2
    assert notes == ["note: -j 16 lowered to 2: the system's process limit leaves room for 4 more processes"]
    monkeypatch.setattr(parallel, "spare_processes", lambda: 0)  # no room at all: the run works alone
    started.clear()
    out = list(parallel.process_files(candidates, RewriteWork(core_mappings, None), jobs=16, note=notes.append))
    assert len(out) == len(candidates) and started == []


def _refuse_to_fork(monkeypatch):
    def refuse(self):
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(type(parallel._context().Process()), "start", refuse)


def test_a_worker_that_cannot_start_is_a_clear_error(tmp_path, core_mappings, monkeypatch, deadline):
    _refuse_to_fork(monkeypatch)
    candidates = _scripts(tmp_path, 2 * RewriteWork.chunk)
    with pytest.raises(parallel.WorkerStartError, match="cannot start a worker process: Resource temporarily "
                                                         "unavailable; the system's process limit"):
        list(parallel.process_files(candidates, RewriteWork(core_mappings, None), jobs=4))


@pytest.mark.parametrize("command", [["--check"], ["lint"]])
def test_the_cli_says_a_worker_cannot_start_and_exits_2(tmp_path, monkeypatch, command):
    from click.testing import CliRunner

    from migrator.cli import cli

    _refuse_to_fork(monkeypatch)
    tree = tmp_path / "tree"
    tree.mkdir()
    _scripts(tree, 300)
    args = (["lint"] if command == ["lint"] else ["migrate", *command]) + ["--to", "v0.8.0", "-j", "4", str(tree)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2, (result.output, result.exception)
    assert isinstance(result.exception, SystemExit)  # no traceback
    assert "error: cannot start a worker process: Resource temporarily unavailable" in result.output


def test_a_check_keeps_no_file_bytes_and_sends_none_back(tmp_path, core_mappings, monkeypatch, deadline):
    from migrator.engine import RunOptions, run

    monkeypatch.setattr(RewriteWork, "serial_below", 8)
    monkeypatch.setattr(RewriteWork, "chunk", 4)
    _scripts(tmp_path, 40)
    sent = []
    real = parallel._process_chunk
    monkeypatch.setattr(parallel, "_process_chunk", lambda batch: sent.append(1) or real(batch))
    for jobs in (1, 2):
        results = run(RunOptions([str(tmp_path)], write=False, jobs=jobs, keep_contents=False), core_mappings)
        assert len(results) == 40 and all(r.status == "changed" and r.edits for r in results)
        assert all(r.before is None and r.after is None for r in results)
    kept = run(RunOptions([str(tmp_path)], write=False, jobs=2), core_mappings)
    assert all(r.after is not None and r.after != r.before for r in kept)  # --diff's run keeps them


def test_lint_files_of_a_dead_worker_are_reported_not_lost(tmp_path, core_mappings, monkeypatch, deadline):
    from migrator.lint.facts import load_facts
    from migrator.lint.runner import LintWork, lint_paths

    for i in range(4 * LintWork.chunk):
        (tmp_path / ("die.sh" if i == LintWork.chunk + 1 else f"s{i:03}.sh")).write_bytes(b"echo hi\n")
    real = parallel._process_chunk

    def chunk_or_die(batch):
        if any(c.path.endswith("die.sh") for c in batch):
            os.kill(os.getpid(), signal.SIGKILL)
        return real(batch)

    monkeypatch.setattr(parallel, "_process_chunk", chunk_or_die)
    reports = list(lint_paths([str(tmp_path)], load_facts(), core_mappings, "main", jobs=2))
    assert len(reports) == 4 * LintWork.chunk
    failed = [r for r in reports if r.failed]
    assert len(failed) == LintWork.chunk and any(r.path.endswith("die.sh") for r in failed)
    assert {r.failed for r in failed} == {"worker process died: killed by signal 9 (SIGKILL)"}
    assert all(r.failed is None and r.skipped is None for r in reports if r not in failed)
