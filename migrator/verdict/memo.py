"""Tables kept on disk between runs, under the cache directory: Hydra's parse of each override text
(`parsed-*.pickle`), the verdict on each command's overrides (`verdicts-*.pickle`) and `bash -n`'s on each
script lint reads (`bashn-*.pickle`), per source hash of this package and Hydra's and OmegaConf's versions.

Launch scripts repeat the same overrides run after run, and most runs lint unchanged scripts: a verdict is
keyed by everything it depends on (the config tree's content hash, config, overrides, Hydra's version), so
a warm run does no Hydra work for them. Each table is read once per process and written back atomically at
exit when it grew; a missing or unreadable file only costs the time to compute again.
"""

from __future__ import annotations

import atexit
import os

from migrator import cache
from migrator.verdict.store import engine_versions

OTHER_VERSIONS_KEPT = 1  # files of other code or Hydra versions kept beside the current one
MAX_ENTRIES = 50_000  # past this a table starts afresh: it is a cache, not a record
FORMAT = "2"  # bump when what a table holds changes (the source hash changes with any edit anyway)


class DiskTable:
    def __init__(self, name: str):
        self.name = name
        self._table: dict | None = None
        self._loaded_size = 0
        self._saver_pid: int | None = None

    def _name(self) -> str:
        hydra, omegaconf = engine_versions()
        return f"{self.name}-{code_version()}-{hydra}-{omegaconf}.pickle"

    @property
    def table(self) -> dict:
        if self._table is None:
            table = cache.load_pickle(self._name())  # absent, foreign or corrupt: None, compute again
            self._table = table if isinstance(table, dict) else {}
            self._loaded_size = len(self._table)
            atexit.register(self.save)
        if self._saver_pid != os.getpid():
            # A worker process of the run (forked after the table was read, or not) ends through
            # multiprocessing, which skips atexit but runs its own finalizers, each in the process that made it.
            from multiprocessing import util
            util.Finalize(None, self.save, exitpriority=0)
            self._saver_pid = os.getpid()
        return self._table

    def save(self) -> None:
        if self._table is None or len(self._table) == self._loaded_size:
            return
        table = self._table if len(self._table) <= MAX_ENTRIES else {}
        name = self._name()
        with cache.locked(name):  # the run's other workers save theirs at the same moment
            saved = cache.load_pickle(name)  # another process (a worker of the same run) may have saved since
            if isinstance(saved, dict) and len(saved) + len(table) <= MAX_ENTRIES:
                table = {**saved, **table}
            path = cache.store_pickle(name, table)  # an unwritable cache (or an unpicklable value): None
        if path is not None:
            self._loaded_size = len(table)
            self._prune(path)

    def _prune(self, ours) -> None:
        """Each release of this package (and of Hydra) names its own file: keep ours and the newest
        `OTHER_VERSIONS_KEPT` others (two installs used in turn), so upgrades do not pile up files forever."""
        # Versions name the files after `<name>-` with a code hash or a version number (older formats had
        # fewer parts): a digit or hex letter, never another table's word (`reviews-test-...`).
        others = [p for p in cache.entries(f"{self.name}-*.pickle")
                  if p != ours and p.name[len(self.name) + 1] in "0123456789abcdef"]
        for stale in others[OTHER_VERSIONS_KEPT:]:
            cache.remove(stale)
            cache.remove(stale.with_name(stale.name + ".lock"))


def code_version() -> str:
    """A hash of this package's source: a verdict computed by other code is never read back."""
    import hashlib
    from pathlib import Path

    digest = hashlib.sha256(FORMAT.encode())
    for source in sorted(Path(__file__).parent.glob("*.py")):
        digest.update(source.read_bytes())
    return digest.hexdigest()[:12]


PARSED = DiskTable("parsed")  # override text -> (Override, None) | (None, Hydra's message)
VERDICTS = DiskTable("verdicts")  # (tree digest, config dir, config name, overrides) -> Verdict
BASH_N = DiskTable("bashn")  # (script digest, bash binary) -> (`bash -n`'s exit status, its messages): lint's VM001
