"""Discovery never walks into the tool's own cache directory (`migrator.cache.configured_root`): a run over a
home directory must not migrate the config trees cached there."""

from __future__ import annotations

from migrator.discover import discover
from tests.helpers import run_cli

OLD_CONFIG = b"actor_rollout_ref:\n  rollout:\n    update_weights_bucket_megabytes: 512\n"


def _home(tmp_path):
    home = tmp_path / "home"
    cache = home / ".cache" / "verl-migrate"
    (cache / "configs" / "v0.7.1").mkdir(parents=True)
    (cache / "configs" / "v0.7.1" / "ppo_trainer.yaml").write_bytes(OLD_CONFIG)
    (home / "project").mkdir()
    (home / "project" / "ppo.yaml").write_bytes(OLD_CONFIG)
    return home, cache


def test_the_cache_directory_is_not_walked(tmp_path, monkeypatch):
    home, cache = _home(tmp_path)
    monkeypatch.setenv("VERL_MIGRATE_CACHE_DIR", str(cache))
    assert [c.display for c in discover([str(home)])] == [str(home / "project" / "ppo.yaml")]
    assert list(discover([str(cache)])) == []  # given as the root itself
    monkeypatch.setenv("VERL_MIGRATE_CACHE_DIR", str(tmp_path / "elsewhere"))
    assert len(list(discover([str(home)]))) == 2  # not the cache: an ordinary directory


def test_a_run_over_home_leaves_the_cached_configs_alone(tmp_path):
    home, cache = _home(tmp_path)
    done = run_cli("--check", "--to", "v0.8.0", "--output-format", "json", str(home),
                   env={"VERL_MIGRATE_CACHE_DIR": str(cache)})
    assert done.returncode == 1, done.stderr
    assert str(cache) not in done.stdout and "project/ppo.yaml" in done.stdout
