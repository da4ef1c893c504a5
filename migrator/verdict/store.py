"""verl's shipped config trees (`mappings/verl/facts/configs/`) and their materialization on disk.

`releases/<rev>.yaml` maps each config file's path to a content-addressed blob and each `@hydra.main`
script to its config_path/config_name (scripts/extract_verl_configs.py writes them). Hydra composes from
directories, so a release's tree is written once to `<cache>/configs/<content hash>/` (temp dir + rename:
a reader never sees half a tree, and a changed tree gets a new name, so a stale one is never used).
"""

from __future__ import annotations

import hashlib
import os
import posixpath
import shutil
import tempfile
from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path

from migrator import cache


class StoreError(Exception):
    """The shipped config data is missing or unreadable for a release."""


@dataclass(frozen=True)
class EntryPoint:
    """One `@hydra.main` script of a release: the config it composes by default."""

    script: str  # verl/trainer/main_ppo.py
    config_path: str  # verl/trainer/config (relative to verl's root)
    config_name: str

    @property
    def module(self) -> str:
        return self.script.removesuffix(".py").replace("/", ".")


@dataclass(frozen=True, eq=False)  # identity-hashed: one per release (lru-cached)
class ReleaseConfigs:
    release: str
    entry_points: dict[str, EntryPoint]  # script path -> entry point
    files: dict[str, str]  # config file path -> blob digest
    blobs: Path

    @cached_property
    def digest(self) -> str:
        """Names the materialized tree: changes whenever any file or path changes. Asked per script
        reviewed; the files never change (frozen)."""
        text = "\n".join(f"{path}\t{blob}" for path, blob in sorted(self.files.items()))
        return hashlib.sha256(text.encode()).hexdigest()[:20]

    @property
    def config_dirs(self) -> frozenset[str]:
        """Every directory holding a config file (and the directories above it, up to verl's root)."""
        dirs = set()
        for path in self.files:
            parent = posixpath.dirname(path)
            while parent:
                dirs.add(parent)
                parent = posixpath.dirname(parent)
        return frozenset(dirs)

    def entry_by_module(self, module: str) -> EntryPoint | None:
        return self.entry_points.get(module.replace(".", "/") + ".py")

    def entry_by_script(self, path: str) -> EntryPoint | None:
        """`verl/trainer/main_ppo.py`, `./verl/trainer/main_ppo.py` or `$VERL/verl/trainer/main_ppo.py`."""
        path = path.replace("\\", "/")
        for script, entry in self.entry_points.items():
            if path == script or path.endswith("/" + script):
                return entry
        return None

    def config_dir_of(self, path: str) -> str | None:
        """The shipped config directory a `--config-path` value names (by its tail), or None."""
        path = posixpath.normpath(path.replace("\\", "/")).rstrip("/")
        best = None
        for directory in self.config_dirs:
            if (path == directory or path.endswith("/" + directory)) and (best is None or len(directory) > len(best)):
                best = directory
        return best

    def has_config(self, config_dir: str, name: str) -> bool:
        name = name.removesuffix(".yaml")
        return f"{config_dir}/{name}.yaml" in self.files


def configs_dir() -> Path:
    from migrator.mapping.load import builtin_mappings_dir

    return builtin_mappings_dir() / "verl" / "facts" / "configs"


@lru_cache(maxsize=32)
def release_configs(release: str, directory: str | None = None) -> ReleaseConfigs:
    from migrator.mapping.facts import load_shipped_yaml

    base = Path(directory) if directory else configs_dir()
    index_path = base / "releases" / f"{release}.yaml"

    try:  # from the cache, a run never imports PyYAML for it (~17 ms)
        index = cache.derived(f"configindex-{release}", [index_path, Path(__file__)], lambda: load_shipped_yaml(index_path))
    except OSError as exc:
        raise StoreError(f"no shipped Hydra configs for verl {release} ({index_path}: {exc.strerror})") from exc
    entries = {script: EntryPoint(script, e["config_path"], e["config_name"])
               for script, e in (index.get("entry_points") or {}).items() if e.get("config_name")}
    return ReleaseConfigs(release, entries, dict(index.get("files") or {}), base / "blobs")


@lru_cache(maxsize=1)
def engine_versions() -> tuple[str, str]:
    """(hydra-core's, omegaconf's) installed versions: cached verdicts are only as good as the engine that
    made them. Read from the `<name>-<version>.dist-info` directory beside each package (a wheel install);
    `importlib.metadata` only when there is none: importing it (and `email`) cost every worker ~40 ms."""
    import importlib.util

    def installed(distribution: str, package: str) -> str:
        spec = importlib.util.find_spec(package)
        if spec is not None and spec.origin:
            site = Path(spec.origin).parent.parent
            found = sorted(site.glob(f"{distribution.replace('-', '_')}-*.dist-info"))
            if len(found) == 1:
                return found[0].name[len(distribution) + 1:-len(".dist-info")]
        from importlib.metadata import version

        return version(distribution)

    return installed("hydra-core", "hydra"), installed("omegaconf", "omegaconf")


@lru_cache(maxsize=32)
def materialize(configs: ReleaseConfigs) -> Path:
    """The release's config tree as files (verl's layout), written once per content hash under the cache
    (a private directory of this process when there is no cache of ours). A tree found there is used only
    when every file holds the bytes its blob names and nothing else is in it: Hydra reads what is there,
    and a verdict keyed by the tree's digest must come from that content."""
    base = cache.directory("configs") or cache.private_directory()
    root = base / configs.digest
    if _intact(root, configs):
        return root
    if root.exists():  # damaged, or left half-written by a crash: its name is ours to reuse
        shutil.rmtree(root, ignore_errors=True)
    tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=base))
    try:
        for path, blob in configs.files.items():
            target = tmp / path
            target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            data = verl_bytes((configs.blobs / f"{blob}.yaml").read_bytes())
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o600)
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
        (tmp / COMPLETE).write_text(configs.release + "\n")
        try:
            os.replace(tmp, root)
        except OSError:  # another process finished first: theirs is the same content
            if not _intact(root, configs):
                raise
    except OSError as exc:
        raise StoreError(f"cannot write verl {configs.release}'s configs under {base}: {exc}") from exc
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return root


COMPLETE = ".complete"
# The line a shipped blob opens with, saying what wrote it from which verl commit (scripts/facts_header.py);
# the rest is verl's file, byte for byte (the blob's name is its digest).
GENERATED = b"# GENERATED VIA "


def verl_bytes(blob: bytes) -> bytes:
    return blob.partition(b"\n")[2] if blob.startswith(GENERATED) else blob


def _intact(root: Path, configs: ReleaseConfigs) -> bool:
    """Whether the tree at `root` is exactly the release's files, by content (blob names are sha256[:16])."""
    expected = set(configs.files) | {COMPLETE}
    found = set()
    try:
        for directory, _dirs, names in os.walk(root):
            rel = os.path.relpath(directory, root)
            found.update(name if rel == "." else f"{rel}/{name}".replace(os.sep, "/") for name in names)
        if found != expected:
            return False
        for path, blob in configs.files.items():
            with open(root / path, "rb") as fh:
                if not hashlib.sha256(fh.read()).hexdigest().startswith(blob):
                    return False
    except OSError:
        return False
    return True
