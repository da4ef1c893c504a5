"""Compose a release's config with Hydra's own loader, once per (tree, config, group selections).

Composing verl's PPO config parses ~30 YAML files (~0.7 s), so a composed base is kept twice: in this
process (lru) and on disk next to the materialized tree (`<cache>/composed/<key>.pickle`, keyed by the
tree's content hash, the selections and Hydra's and OmegaConf's versions). Each command gets its own copy
through a copy-on-write view of the one loaded base (cow.py). The bases lint needs most (each entry point's
defaults, the selections verl's own examples make) ship composed by Hydra under the same keys
(`configs/composed/<release>.pickle.xz`, scripts/precompose_verl_configs.py), so an empty cache does not
mean composing them again.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import warnings
from functools import lru_cache
from pathlib import Path

from migrator import cache
from migrator.verdict.store import ReleaseConfigs, engine_versions, materialize

_FORMAT = "1"  # bump when what is pickled changes


class ComposeError(Exception):
    """Hydra refused to compose; the message is Hydra's own."""


def hydra_message(exc: BaseException) -> str:
    """Hydra's message on one line: its own text, then the first line of the OmegaConf error under it."""
    text = str(exc).split("\nConfig search path:", 1)[0]  # the search path names our cache directory
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("See https://hydra.cc")]
    cause = exc.__cause__
    if cause is not None and str(cause).strip() not in ("", "None"):
        first = str(cause).strip().splitlines()[0].strip()
        if first not in lines:
            lines.append(f"({first})")
    return " ".join(lines) or type(exc).__name__


def _hydra():
    """Import Hydra on first use: lint runs without a verdict never pay for it."""
    from hydra import version
    from hydra._internal.config_loader_impl import ConfigLoaderImpl
    from hydra._internal.utils import create_config_search_path

    version.setbase(None)  # verl's entry points say `@hydra.main(version_base=None)`
    return ConfigLoaderImpl, create_config_search_path


def searchpath(root: Path, config_dir: str, config_name: str) -> list[str]:
    """The primary config's `hydra.searchpath`, resolved against the materialized tree.

    verl writes `file://verl/trainer/config` (relative to the directory a job is started from, verl's root)
    or `pkg://verl.trainer.config` (an importable package): both name a directory of the tree.
    """
    import yaml  # here, not at the top: a run whose verdicts are all cached never needs PyYAML (~17 ms)

    try:
        primary = yaml.safe_load((root / config_dir / f"{config_name}.yaml").read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return []
    paths = ((primary or {}).get("hydra") or {}).get("searchpath") if isinstance(primary, dict) else None
    resolved = []
    for entry in paths or []:
        scheme, _, rest = str(entry).partition("://")
        local = rest.replace(".", "/") if scheme == "pkg" else rest
        # Relative to where the job starts: verl's root, or the entry point's directory
        # (`file://../../verl/trainer/config` beside examples/split_placement/main_ppo_split.py).
        starts = (root, root / os.path.dirname(config_dir))
        found = next((os.path.normpath(start / local) for start in starts if scheme in ("file", "pkg")
                      and not os.path.isabs(local) and (start / local).is_dir()), None)
        if found is not None and Path(found).is_relative_to(root):
            resolved.append(f"file://{Path(found).as_posix()}")
        else:
            resolved.append(str(entry))
    return resolved


def base_overrides(root: Path, config_dir: str, config_name: str) -> list[str]:
    """The overrides every composition starts with: the search path pointed at the materialized tree."""
    paths = searchpath(root, config_dir, config_name)
    if not paths:
        return []
    quoted = ",".join("'" + p.replace("\\", "\\\\").replace("'", "\\'") + "'" for p in paths)
    return [f"hydra.searchpath=[{quoted}]"]


@lru_cache(maxsize=16)
def loader(root: str, config_dir: str):
    ConfigLoaderImpl, create_config_search_path = _hydra()
    impl = ConfigLoaderImpl(config_search_path=create_config_search_path(str(Path(root) / config_dir)))
    impl.repository = _shared_loads()(impl.repository)
    return impl


_LOADED: dict = {}  # (search path, config path) -> Hydra's ConfigResult, parsed once per process


@lru_cache(maxsize=1)
def _shared_loads():
    """Hydra's repository with each YAML file parsed once per process instead of once per composition
    (verl's PPO config reads ~30 files; a lint composes it with several group selections). Every caller
    gets its own deep copy: Hydra edits what it loads (it drops `defaults`)."""
    import copy

    from hydra._internal.config_repository import IConfigRepository

    class SharedLoads(IConfigRepository):
        def __init__(self, inner):
            self.inner = inner

        def __deepcopy__(self, memo):  # Hydra copies the repository per composition: keep one table
            return SharedLoads(copy.deepcopy(self.inner, memo))

        def load_config(self, config_path):
            key = (tuple(source.path for source in self.inner.get_sources()), config_path)
            if key not in _LOADED:
                _LOADED[key] = self.inner.load_config(config_path)
            return copy.deepcopy(_LOADED[key])

        def get_schema_source(self):
            return self.inner.get_schema_source()

        def group_exists(self, config_path):
            return self.inner.group_exists(config_path)

        def config_exists(self, config_path):
            return self.inner.config_exists(config_path)

        def get_group_options(self, *args, **kwargs):
            return self.inner.get_group_options(*args, **kwargs)

        def get_sources(self):
            return self.inner.get_sources()

        def initialize_sources(self, config_search_path):
            self.inner.initialize_sources(config_search_path)

    return SharedLoads


@lru_cache(maxsize=64)
def repository(configs: ReleaseConfigs, config_dir: str, config_name: str):
    """Hydra's config repository for this primary config (its search path included): says what is a group."""
    root = materialize(configs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _parsed, repo = loader(str(root), config_dir)._parse_overrides_and_create_caching_repo(
            config_name, base_overrides(root, config_dir, config_name))
    return GroupIndex(repo)


@lru_cache(maxsize=64)
def base_config(configs: ReleaseConfigs, config_dir: str, config_name: str, groups: tuple[str, ...]):
    """The composed config itself, loaded once per process; never written (see cow.py)."""
    try:
        return pickle.loads(composed(configs, config_dir, config_name, groups))
    except ComposeError:
        raise
    except Exception:  # noqa: BLE001 - a corrupt cache file (or one of another Python): compose afresh
        _composed.cache_clear()
        return pickle.loads(composed(configs, config_dir, config_name, groups, from_disk=False))


class GroupIndex:
    """Hydra's repository, asked only `group_exists` (Hydra's test for a group override), with answers kept:
    Hydra asks the file system each time, and a script has dozens of overrides."""

    def __init__(self, repo):
        self.repo = repo
        self.known: dict[str, bool] = {}

    def group_exists(self, name: str) -> bool:
        if name not in self.known:
            self.known[name] = self.repo.group_exists(name)
        return self.known[name]


def composed(configs: ReleaseConfigs, config_dir: str, config_name: str, groups: tuple[str, ...],
             from_disk: bool = True) -> bytes:
    """The pickled config Hydra composes with these group selections (struct mode, as Hydra leaves it).

    Raises ComposeError with Hydra's message when Hydra refuses.
    """
    data, error = _composed(configs, config_dir, config_name, groups, from_disk)
    if error is not None:
        raise ComposeError(error)
    return data


@lru_cache(maxsize=128)
def _composed(configs: ReleaseConfigs, config_dir: str, config_name: str, groups: tuple[str, ...],
              from_disk: bool) -> tuple[bytes, str | None]:
    root = materialize(configs)
    key = _disk_key(configs, config_dir, config_name, groups)
    relpath = f"composed/{key}.pickle"
    data = cache.read(relpath) if from_disk else None  # absent or foreign: None, compose again
    if data is not None and data.endswith(b"."):  # a whole pickle (STOP); base_config composes again if it does not load
        return data, None
    shipped = shipped_compositions(configs).get(key) if from_disk else None
    if shipped is not None:
        return shipped
    from hydra.types import RunMode

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            cfg = loader(str(root), config_dir).load_configuration(
                config_name, base_overrides(root, config_dir, config_name) + list(groups), run_mode=RunMode.RUN)
        except Exception as exc:  # noqa: BLE001 - Hydra's and OmegaConf's errors, and a broken YAML file
            return b"", hydra_message(exc)
    data = pickle.dumps(cfg, protocol=pickle.HIGHEST_PROTOCOL)
    cache.write(relpath, data)  # an unwritable cache only costs speed
    return data, None


@lru_cache(maxsize=16)
def shipped_compositions(configs: ReleaseConfigs) -> dict[str, tuple[bytes, str | None]]:
    """What scripts/precompose_verl_configs.py composed with Hydra for this release: disk key -> what
    `_composed` returns. Empty when none ship or the file does not load (then Hydra composes)."""
    import lzma

    try:
        table = pickle.loads(lzma.decompress((configs.blobs.parent / "composed" / f"{configs.release}.pickle.xz")
                                             .read_bytes()))
    except Exception:  # noqa: BLE001 - absent or unreadable: compose as without it
        return {}
    return table if isinstance(table, dict) else {}


def _disk_key(configs: ReleaseConfigs, config_dir: str, config_name: str, groups: tuple[str, ...]) -> str:
    text = "\0".join([_FORMAT, configs.digest, config_dir, config_name, *engine_versions(), *groups])
    return hashlib.sha256(text.encode()).hexdigest()[:32]
