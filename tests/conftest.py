"""Shared helpers: the fixed core test table, the release tables parsed once, running the real CLI in a
subprocess; and the session set-up that keeps the suite fast (tmp files in RAM, costliest modules first)."""

from __future__ import annotations

import copy
import functools
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
CORE_TABLE = FIXTURES / "tables" / "core.yaml"
MEMORY_TMP = Path("/dev/shm")
_OWN_BASETEMP = pytest.StashKey[str]()
_OWN_CACHE = pytest.StashKey[str]()


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


def pytest_xdist_auto_num_workers(config):
    # One worker more than cores: much of the suite waits on the subprocesses it starts (2 cores: 139 s
    # with 3 workers, 153 s with 2, 149 s with 4).
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return cores + 1


# The costliest modules (CPU seconds, serial): started first, so no worker is left running one alone at the end.
# CI runs `--dist loadscope` (a module's tests on one worker: its module fixtures run once) in this order.
SLOW_FIRST = ("test_crash_sigkill.py", "test_shims_install.py", "test_property_shell_neutral.py",
              "test_tables_errors.py", "test_cli_config.py", "test_gitguard_repos.py", "test_cli.py",
              "test_gitguard.py", "test_crash_worker.py", "test_robust_inputs.py", "test_robust_lock.py",
              "test_lint_cli.py", "test_cli_precommit.py", "test_rewriters_python_fastpath.py",
              "test_property_shell.py", "test_cli_findings.py")


def pytest_collection_modifyitems(items):
    def rank(item) -> int:
        module = item.nodeid.partition("::")[0].rpartition("/")[2]
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

    return compose(load_builtin(), "main", "main", [CORE_TABLE])


@functools.lru_cache(maxsize=None)
def _parsed_yaml(path: Path):
    import yaml

    return yaml.load(path.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def yaml_data(path: Path):
    """`yaml.safe_load` of a repository file, parsed once per test process (libyaml when PyYAML has it): five
    test modules read every release table at import. A copy each call, so no caller sees another's changes."""
    return copy.deepcopy(_parsed_yaml(Path(path).resolve()))


def run_cli(*args, cwd=None, env=None, input=None) -> subprocess.CompletedProcess:
    full_env = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "-m", "migrator", *map(str, args)], cwd=cwd, env=full_env,
                          capture_output=True, text=True, input=input, timeout=300)
