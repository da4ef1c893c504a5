"""Cache the composed tables and their prefilter between runs (parsing the YAML tables costs ~0.1 s a run).

The key is a hash of every `--table` file's bytes, the stat signature (size, mtime, ctime, inode) of every
built-in table, facts file and mapping code file, the --from/--to/--table arguments, the package version and
the Python version, so any edit to a table misses the cache. The built-in files are stat'ed, not read: they
are 5 MB (the facts), and reading them took 20 ms of every run, more when the page cache had dropped them.
The parsed built-in tables have an entry of their own (`builtin_tables`). The entries are pickles in the
one cache directory (`migrator.cache`, which says where it is and when it is not used). A missing, corrupt,
foreign or unwritable cache only costs the time to compose again: it never breaks a run.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

from migrator import __version__
from migrator.cache import add_stat_signatures, load, store

__all__ = ["builtin_key", "builtin_tables", "cache_key", "composed"]

HYDRA_CONFIGS = "configs"  # the facts' directory of shipped Hydra config trees (migrator.verdict.store)
PREFIX = "tables-"
BUILTIN_PREFIX = "builtin-"


def builtin_key() -> str | None:
    """The hash of the built-in tables' inputs: the stat signature of every built-in table, facts and
    mapping-code file, the package version and the Python version; None when one cannot be stat'ed."""
    from migrator.mapping.load import builtin_mappings_dir

    digest = hashlib.sha256(repr((__version__, sys.version_info[:2])).encode())
    try:
        builtin = builtin_mappings_dir() / "verl"
        code = Path(__file__).resolve().parent / "mapping"
        # The facts decide which names are live (compose) and so the prefilter's tokens: they count too.
        # Not the Hydra config trees (facts/configs: 300 files), which only the verdicts read.
        facts = sorted(p for top in (builtin / "facts").iterdir() if top.name != HYDRA_CONFIGS
                       for p in ([top] if top.is_file() else top.rglob("*")) if p.is_file())
        inputs = (sorted(builtin.glob("*.yaml")) + facts + sorted(code.rglob("*.py"))
                  + [Path(__file__).resolve().parent / name  # the registry says which kinds split names
                     for name in ("prefilter.py", "filekind.py", "rewrite/__init__.py", "layout.py",
                                  # and these name the tokens `filekind.build_prefilter` adds to the tables'
                                  "rewrite/shell_strings.py", "rewrite/python/callbacks.py",
                                  "rewrite/python/resolution.py", "rewrite/shell/markers.py")])
        add_stat_signatures(digest, inputs)
    except Exception:  # noqa: BLE001 - an unreadable input: compose (and report) without the cache
        return None
    return digest.hexdigest()


def cache_key(from_release: str | None, to_release: str | None, tables: tuple[str, ...],
              table_bytes: tuple[bytes, ...] | None = None) -> str | None:
    """The hash naming the cache entry, or None when an input cannot be read (then nothing is cached).
    `table_bytes`: the `tables` already read (a pipe cannot be read twice)."""
    builtin = builtin_key()
    if builtin is None:
        return None
    digest = hashlib.sha256(repr((builtin, from_release, to_release, tables)).encode())
    try:
        read = zip(map(Path, tables), table_bytes if table_bytes is not None else
                   [Path(t).read_bytes() for t in tables])
        for path, data in read:
            digest.update(str(path).encode() + b"\0" + str(len(data)).encode() + b"\0" + data)
    except Exception:  # noqa: BLE001 - an unreadable input: compose (and report) without the cache
        return None
    return digest.hexdigest()


def composed(from_release: str | None, to_release: str | None, tables: tuple[str, ...]):
    """(MappingSet, Prefilter) from the cache, else composed now and stored. Raises TableError."""
    from migrator.mapping.load import read_table

    sources = [(t, read_table(Path(t))) for t in tables]  # once each: `--table <(cmd)` is a pipe
    key = cache_key(from_release, to_release, tables, tuple(data for _, data in sources))
    if key is not None:
        cached = load(key, PREFIX)
        if cached is not None:
            return cached
    from migrator.filekind import build_prefilter
    from migrator.mapping import compose

    mappings = compose(builtin_tables(), from_release, to_release, sources)
    value = (mappings, build_prefilter(mappings))
    if key is not None:
        store(key, value, PREFIX)
    return value


def builtin_tables():
    """`load_builtin()`, from the cache while the built-in files are unchanged: a run whose composition
    misses the cache (a new `--table`, other releases) then parses only its own tables (the twelve
    built-in ones took ~0.2 s)."""
    from migrator.mapping import load_builtin

    key = builtin_key()
    cached = load(key, BUILTIN_PREFIX) if key is not None else None
    if cached is not None:
        return cached
    from migrator.layout import verl_layout

    verl_layout()  # read with the tables (layout.yaml is one of the key's inputs): broken, it is a table error
    tables = load_builtin()
    if key is not None:
        store(key, tables, BUILTIN_PREFIX, keep=2)
    return tables
