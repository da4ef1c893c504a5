"""The session set-up (tmp files in RAM, a cache directory of the run's own, costliest modules first) and the
shared fixtures. Helpers to import live in `tests/helpers/`."""

from __future__ import annotations

import compileall
import os
import shutil
import signal
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

MEMORY_TMP = Path("/dev/shm")

# Property tests run the same examples on every run and every machine: no per-example deadline and no
# "too slow" health check (both read a clock, and failed on a loaded machine), no examples carried
# over from an earlier run (the database), a seed derived from each test (derandomize). Finding new
# inputs is the fuzzer's job (bench/fuzz_shell.py).
settings.register_profile("suite", deadline=None, derandomize=True, database=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("suite")
_OWN_BASETEMP = pytest.StashKey[str]()
_OWN_CACHE = pytest.StashKey[str]()
REPO = Path(__file__).resolve().parent.parent


def _memory_tmp_works(directory: Path) -> bool:
    """A RAM-backed directory where every test can do what it does on disk: write (1 GiB free), run
    executables (not mounted noexec) and set user xattrs (test_robust_modes)."""
    try:
        stats = os.statvfs(directory)
        if stats.f_bavail * stats.f_frsize < 1 << 30 or stats.f_flag & os.ST_NOEXEC:
            return False
        with tempfile.NamedTemporaryFile(dir=directory, prefix="verl-migrate-probe-") as probe:
            os.setxattr(probe.name, "user.verl_migrate_probe", b"1")
        return True
    except (OSError, AttributeError):
        return False


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config):
    # Test files live in RAM when the machine has room: the runs under test fsync every file they write,
    # which on a disk was seconds of waiting per `shims install` and per migrated tree.
    if config.option.basetemp is None and not hasattr(config, "workerinput") and _memory_tmp_works(MEMORY_TMP):
        config.option.basetemp = tempfile.mkdtemp(prefix="verl-migrate-tests-", dir=MEMORY_TMP)
        config.stash[_OWN_BASETEMP] = config.option.basetemp
    # The suite's own cache directory, shared by its workers (they inherit the environment): a test run
    # never reads or writes the developer's ~/.cache/verl-migrate.
    if not hasattr(config, "workerinput"):
        own = tempfile.mkdtemp(prefix="verl-migrate-test-cache-")
        os.environ["VERL_MIGRATE_CACHE_DIR"] = own
        config.stash[_OWN_CACHE] = own
        _compile_once(config)


def _compile_once(config) -> None:
    """The package compiled once, as `pip install` compiles it, beside its sources (`__pycache__`, which git
    ignores), for every worker and every `python -m migrator` the tests start from the checkout. Where the
    environment sets PYTHONDONTWRITEBYTECODE, as this CI machine's does, each of the suite's hundreds of
    CLI runs otherwise compiled the whole package from source again (a quarter of a CPU-second each).
    Not PYTHONPYCACHEPREFIX: it moves every package's bytecode, and the installed ones are not there."""
    compileall.compile_dir(REPO / "migrator", quiet=2)


def pytest_xdist_auto_num_workers(config):
    # One worker more than cores: much of the suite waits on the subprocesses it starts (2 cores: 139 s
    # with 3 workers, 153 s with 2, 149 s with 4).
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return cores + 1


# The costliest modules (CPU seconds, serial): started first, so no worker is left running one alone at the end.
# CI runs `--dist loadscope` (a module's tests on one worker: its module fixtures run once) in this order.
SLOW_FIRST = (
    "tests/e2e/test_crash_sigkill.py",
    "tests/e2e/test_shims_install.py",
    "tests/unit/rewrite/shell/test_property_neutral.py",
    "tests/e2e/test_table_errors.py",
    "tests/e2e/test_cli_config.py",
    "tests/e2e/test_gitguard_repos.py",
    "tests/e2e/test_cli.py",
    "tests/unit/test_gitguard.py",
    "tests/e2e/test_crash_worker.py",
    "tests/e2e/test_hostile_inputs.py",
    "tests/e2e/test_lock.py",
    "tests/e2e/test_lint_cli.py",
    "tests/e2e/test_precommit.py",
    "tests/unit/rewrite/python/test_statements.py",
    "tests/unit/rewrite/shell/test_property.py",
    "tests/e2e/test_cli_findings.py",
)


def pytest_collection_modifyitems(items):
    def rank(item) -> int:
        module = item.nodeid.partition("::")[0]
        return SLOW_FIRST.index(module) if module in SLOW_FIRST else len(SLOW_FIRST)

    items.sort(key=rank)  # stable: every other module keeps its place


def pytest_unconfigure(config):
    for key in (_OWN_BASETEMP, _OWN_CACHE):
        own = config.stash.get(key, None)
        if own is not None:
            shutil.rmtree(own, ignore_errors=True)


class Hung(Exception):
    """A test outlived its deadline. Not an OSError: code under test that catches OSError (pipe sends,
    reads) must not swallow it."""


@pytest.fixture
def deadline():
    """Fail, instead of hanging the suite, a test that has not finished in 120 s (a pool that waits
    forever, a FIFO nobody writes)."""
    def hung(signum, frame):
        raise Hung("the test outlived its deadline: it hangs")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(120)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


@pytest.fixture(scope="session")
def core_mappings():
    """Only the fixed test table (the built-in tables are composed from main to main: not at all)."""
    from migrator.mapping import compose, load_builtin
    from tests.helpers import CORE_TABLE

    return compose(load_builtin(), "main", "main", [CORE_TABLE])
