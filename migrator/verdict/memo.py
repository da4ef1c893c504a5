"""Tables kept on disk between runs, under the cache directory: Hydra's parse of each override text
(`parsed-*/`), the verdict on each command's overrides (`verdicts-*/`) and `bash -n`'s on each script lint
reads (`bashn-*/`), per source hash of this package and Hydra's and OmegaConf's versions.

Launch scripts repeat the same overrides run after run, and most runs lint unchanged scripts: a verdict is
keyed by everything it depends on (the config tree's content hash, config, overrides, Hydra's version), so
a warm run does no Hydra work for them. A table is `SHARDS` files in a directory of its version, each
holding the keys a stable hash of the key's text (`shard_by`) sends there: a lookup reads its own shard
when the process first needs it, and a process writes back atomically at exit only the shards it added
to, so a pre-commit run of one script reads one sixteenth of a table (the bench cache's 2,170 reviews,
4.4 MB, took 13 ms to read whole in every process), however large the table has grown. A missing or
unreadable shard only costs the time to compute again. A shard's values stay pickled until a lookup asks
for one (`_Entries`): a worker of a run looks up the reviews of its own scripts, not all a shard holds
(this machine's bench cache, 4,171 reviews of several trees, took 27-57 ms to unpickle whole).
"""

from __future__ import annotations

import atexit
import functools
import os
import pickle
import zlib
from collections.abc import MutableMapping

from migrator import cache
from migrator.verdict.store import engine_versions

OTHER_VERSIONS_KEPT = 1  # tables of other code or Hydra versions kept beside the current one
MAX_ENTRIES = 50_000  # past this a shard (its share of it) starts afresh: it is a cache, not a record
SHARDS = 16
FORMAT = "3"  # bump when what a table holds changes (the source hash changes with any edit anyway)


class DiskTable:
    """One table: `table` is the mapping a process reads and adds to; `save` (at exit, also in a worker)
    merges what it added into the files. `shard_by`: the key's text, of which a stable hash picks its shard
    (a function of the module, so a table pickles by reference)."""

    def __init__(self, name: str, shard_by=repr):
        self.name = name
        self.shard_by = shard_by
        self._table: MutableMapping | None = None
        self._saver_pid: int | None = None

    def _name(self) -> str:
        """The directory of this table's version (code, Hydra and OmegaConf)."""
        hydra, omegaconf = engine_versions()
        return f"{self.name}-{code_version()}-{hydra}-{omegaconf}"

    def shard_of(self, key) -> int:
        return zlib.crc32(self.shard_by(key).encode("utf-8", "surrogatepass")) % SHARDS

    def shard_file(self, shard: int) -> str:
        return f"{self._name()}/{shard:x}.pickle"

    @property
    def table(self) -> MutableMapping:
        if self._table is None:
            self._table = _Shards(self)
            atexit.register(self.save)
        if self._saver_pid != os.getpid():
            # A worker process of the run (forked after the table was read, or not) ends through
            # multiprocessing, which skips atexit but runs its own finalizers, each in the process that made it.
            from multiprocessing import util
            util.Finalize(None, self.save, exitpriority=0)
            self._saver_pid = os.getpid()
        return self._table

    def save(self) -> None:
        """Write back each shard this process added to (a table a test set to a plain dict stays in memory)."""
        if not isinstance(self._table, _Shards):
            return
        saved = False
        for shard in sorted(self._table.added):
            entries = self._table.loaded[shard]
            table = _encoded(entries)
            table = table if len(table) <= MAX_ENTRIES // SHARDS else _encoded(entries.added_here())
            name = self.shard_file(shard)
            with cache.locked(name):  # the run's other workers save theirs at the same moment
                on_disk = cache.load_pickle(name)  # another process (a worker of the same run) may have saved since
                if isinstance(on_disk, dict) and len(on_disk) + len(table) <= MAX_ENTRIES // SHARDS:
                    table = {**on_disk, **table}
                path = cache.store_pickle(name, table)  # an unwritable cache: None
            saved = saved or path is not None
        self._table.added.clear()
        if saved:
            self._prune()

    def _prune(self) -> None:
        """Each release of this package (and of Hydra) names its own directory: keep ours and the newest
        `OTHER_VERSIONS_KEPT` others (two installs used in turn), so upgrades do not pile up files forever.
        A table of an older format (one file, `<name>-<version>.pickle`, and its lock) is another version."""
        # Versions name the entries after `<name>-` with a code hash or a version number (older formats had
        # fewer parts): a digit or hex letter, never another table's word (`reviews-test-...`).
        ours = self._name()
        others = [p for p in cache.entries(f"{self.name}-*")
                  if p.name != ours and not p.name.endswith(".lock")
                  and p.name[len(self.name) + 1] in "0123456789abcdef"]
        for stale in others[OTHER_VERSIONS_KEPT:]:
            cache.remove(stale)
            cache.remove(stale.with_name(stale.name + ".lock"))


class _Shards(MutableMapping):
    """A table as this process sees it: each shard's `_Entries`, read from its file on the first lookup that
    needs it. Iterating or counting reads every shard."""

    def __init__(self, table: DiskTable):
        self._table = table
        self.loaded: dict[int, _Entries] = {}
        self.added: set[int] = set()  # shards this process set a value in since it last saved them

    def _entries(self, key) -> tuple[int, _Entries]:
        shard = self._table.shard_of(key)
        return shard, self._shard(shard)

    def _shard(self, shard: int) -> _Entries:
        entries = self.loaded.get(shard)
        if entries is None:
            raw = cache.load_pickle(self._table.shard_file(shard))  # absent, foreign or corrupt: None, compute again
            entries = self.loaded[shard] = _Entries(raw if isinstance(raw, dict) else {})
        return entries

    def __getitem__(self, key):
        return self._entries(key)[1][key]

    def __setitem__(self, key, value) -> None:
        shard, entries = self._entries(key)
        entries[key] = value
        self.added.add(shard)

    def __delitem__(self, key) -> None:
        del self._entries(key)[1][key]

    def __contains__(self, key) -> bool:
        return key in self._entries(key)[1]

    def __iter__(self):
        for shard in range(SHARDS):
            yield from self._shard(shard)

    def __len__(self) -> int:
        return sum(len(self._shard(shard)) for shard in range(SHARDS))


class _Entries(MutableMapping):
    """A table as read from disk: key -> the value's pickle, unpickled when first looked up; a value that
    will not unpickle (another Python's, a truncated write) is a miss. Values set in this process are kept
    as they are until `_encoded` pickles them for the save."""

    def __init__(self, raw: dict):
        self._raw = raw  # key -> pickled value, as read
        self._read: dict = {}  # key -> value unpickled from `_raw`
        self._set: dict = {}  # key -> value set in this process (then absent from `_raw`)

    def __getitem__(self, key):
        for values in (self._set, self._read):
            try:
                return values[key]
            except KeyError:
                pass
        pickled = self._raw[key]
        try:
            value = pickle.loads(pickled)
        except Exception:  # noqa: BLE001 - any failure to unpickle is a miss: computed again
            del self._raw[key]
            raise KeyError(key) from None
        self._read[key] = value
        return value

    def __setitem__(self, key, value) -> None:
        self._raw.pop(key, None)
        self._read.pop(key, None)
        self._set[key] = value

    def __delitem__(self, key) -> None:
        found = [values.pop(key, _ABSENT) for values in (self._raw, self._read, self._set)]
        if all(value is _ABSENT for value in found):
            raise KeyError(key)

    def __contains__(self, key) -> bool:
        return key in self._set or key in self._raw

    def __iter__(self):
        yield from self._raw
        yield from self._set

    def __len__(self) -> int:
        return len(self._raw) + len(self._set)

    def encoded(self) -> dict:
        return {**self._raw, **_pickled(self._set)}

    def added_here(self) -> dict:
        """The values set in this process."""
        return self._set


_ABSENT = object()


def _encoded(table) -> dict:
    """key -> pickled value of a table: a loaded one's (`_Entries`), or a plain dict a caller set."""
    return table.encoded() if isinstance(table, _Entries) else _pickled(table)


def _pickled(values: dict) -> dict:
    """key -> pickled value, leaving out a value that will not pickle (it only costs speed)."""
    out = {}
    for key, value in values.items():
        try:
            out[key] = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:  # noqa: BLE001 - an unpicklable value is computed again next run
            continue
    return out


@functools.lru_cache(maxsize=1)
def code_version() -> str:
    """A hash of this package's source: a verdict computed by other code is never read back. Read once a
    process: each shard's file name holds it (16 names a table)."""
    import hashlib
    from pathlib import Path

    digest = hashlib.sha256(FORMAT.encode())
    for source in sorted(Path(__file__).parent.glob("*.py")):
        digest.update(source.read_bytes())
    return digest.hexdigest()[:12]


def _first(key: tuple) -> str:
    return key[0]


def _verdict_text(key: tuple) -> str:
    return repr(key[1:])  # the config and the overrides (strings, a missing config name None)


PARSED = DiskTable("parsed", shard_by=str)  # override text -> (Override, None) | (None, Hydra's message)
VERDICTS = DiskTable("verdicts", shard_by=_verdict_text)  # (tree digest, config dir, config name, overrides) -> Verdict
# (script digest, bash binary, ...) -> (`bash -n`'s exit status, its messages): lint's VM001
BASH_N = DiskTable("bashn", shard_by=_first)
