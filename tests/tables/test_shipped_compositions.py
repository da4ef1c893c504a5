"""The compositions shipped for an empty cache (`configs/composed/`, scripts/precompose_verl_configs.py) are
Hydra's: composed again here with hydra-core, they are the same config; they cover every entry point's
defaults at every release; a judge on an empty cache reads them instead of composing."""

from __future__ import annotations

import importlib
import pickle
from importlib.metadata import version

import pytest

from migrator.verdict import judge, release_configs
from migrator.verdict.store import configs_dir

compose = importlib.import_module("migrator.verdict.compose")
RELEASES = sorted(p.stem for p in (configs_dir() / "releases").glob("*.yaml"))


def _shipped(release: str) -> dict:
    table = compose.shipped_compositions(release_configs(release))
    if table.get("versions") != (version("hydra-core"), version("omegaconf")):
        pytest.skip(f"shipped compositions were made with Hydra/OmegaConf {table.get('versions')}: "
                    "re-run scripts/precompose_verl_configs.py")
    return table


@pytest.mark.parametrize("release", RELEASES)
def test_every_entry_points_defaults_ship(release):
    configs = release_configs(release)
    shipped = _shipped(release)
    for entry in configs.entry_points.values():
        key = compose._disk_key(configs, entry.config_path, entry.config_name, ())
        assert key in shipped, (release, entry.script)  # a re-extracted tree needs the script run again


def test_shipped_compositions_stay_small():
    size = sum(p.stat().st_size for p in (configs_dir() / "composed").glob("*.pickle.xz"))
    assert size < 800_000, size


def _plain(cfg) -> dict:
    """The config as data, without what names the machine and process it was composed in: cwd, the cache's
    path, and the job name (Hydra's process-global JobRuntime: `app` once another test ran `initialize`)."""
    from omegaconf import OmegaConf

    data = OmegaConf.to_container(cfg, resolve=False)
    data["hydra"]["job"].pop("name")
    runtime = data["hydra"]["runtime"]
    runtime.pop("cwd")
    for source in runtime["config_sources"]:
        source.pop("path")
    return data


@pytest.mark.parametrize("release, config_dir, config_name, groups", [
    ("v0.9.0", "verl/trainer/config", "ppo_trainer", ()),
    ("v0.9.0", "verl/trainer/config", "ppo_trainer", ("model_engine=megatron",)),
    ("v0.9.0", "verl/trainer/config", "sft_trainer_engine", ("model=hf_model", "optim=megatron", "engine=megatron")),
    ("v0.5.0", "verl/trainer/config", "ppo_megatron_trainer", ()),
])
def test_shipped_compositions_are_what_hydra_composes(release, config_dir, config_name, groups):
    from omegaconf import OmegaConf

    configs = release_configs(release)
    shipped = _shipped(release)[compose._disk_key(configs, config_dir, config_name, groups)]
    fresh = compose._composed.__wrapped__(configs, config_dir, config_name, groups, False)  # Hydra, now
    assert shipped[1] is None and fresh[1] is None
    ours, hydras = pickle.loads(shipped[0]), pickle.loads(fresh[0])
    assert _plain(ours) == _plain(hydras)
    assert OmegaConf.is_struct(ours) == OmegaConf.is_struct(hydras)


def test_an_empty_cache_composes_no_shipped_base(tmp_path, monkeypatch):
    from hydra._internal.config_loader_impl import ConfigLoaderImpl

    monkeypatch.setenv("VERL_MIGRATE_CACHE_DIR", str(tmp_path))
    compose._composed.cache_clear()
    compose.base_config.cache_clear()
    composed = []
    real = ConfigLoaderImpl.load_configuration
    def counting(self, name, overrides, **kw):
        composed.append((name, overrides))
        return real(self, name, overrides, **kw)

    monkeypatch.setattr(ConfigLoaderImpl, "load_configuration", counting)
    judge_module = importlib.import_module("migrator.verdict.judge")
    from migrator.verdict.memo import DiskTable

    table = DiskTable("verdicts-test")
    table._table = {}
    monkeypatch.setattr(judge_module, "VERDICTS", table)
    configs = release_configs("v0.9.0")
    try:
        verdict = judge(configs, "verl/trainer/config", "ppo_trainer",
                        ["model_engine=megatron", "trainer.nnodes=2", "actor_rollout_ref.actor.no_such_key=1"])
        assert [r.override for r in verdict.rejections] == ["actor_rollout_ref.actor.no_such_key=1"]
        assert composed == []  # the base came from the shipped data
    finally:
        compose._composed.cache_clear()
        compose.base_config.cache_clear()
