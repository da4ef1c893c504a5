"""Hydra's parse of each override text, kept on disk between runs (`<cache>/parsed-<hydra version>.pickle`).

Parsing is the slowest part of a verdict (Hydra's ANTLR grammar, ~1 ms an override) and launch scripts
repeat the same overrides run after run. The table is read once per process and written back (atomically)
at exit when it grew; a missing or unreadable file only costs the time to parse again.
"""

from __future__ import annotations

import atexit
import os
import pickle
import tempfile

from migrator.verdict.store import cache_root

MAX_ENTRIES = 50_000  # past this the table starts afresh: it is a cache, not a record

_table: dict | None = None
_loaded_size = 0


def _path():
    import hydra

    return cache_root() / f"parsed-{hydra.__version__}.pickle"


def parsed_overrides() -> dict:
    """text -> (Override, None) | (None, Hydra's message); changes are saved at exit."""
    global _table, _loaded_size
    if _table is None:
        try:
            table = pickle.loads(_path().read_bytes())
            _table = table if isinstance(table, dict) else {}
        except Exception:  # noqa: BLE001 - absent, truncated or from another Python: parse again
            _table = {}
        _loaded_size = len(_table)
        atexit.register(_save)
    return _table


def _save() -> None:
    if _table is None or len(_table) == _loaded_size:
        return
    table = _table if len(_table) <= MAX_ENTRIES else {}
    try:
        path = _path()
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
        with os.fdopen(fd, "wb") as fh:
            pickle.dump(table, fh, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)
    except Exception:  # noqa: BLE001 - an unwritable cache (or an unpicklable value) only costs speed
        pass
