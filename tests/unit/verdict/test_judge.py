"""Hydra's own verdict (migrator/verdict) on overrides, against the REAL shipped config trees: no mocks of
Hydra. Composed bases are shared across the session by the verdict's own caches (lru + disk)."""

from __future__ import annotations

import importlib

import pytest

from migrator.verdict import PLACEHOLDER, judge, release_configs
from migrator.verdict.store import configs_dir

PPO = "verl.trainer.main_ppo"


@pytest.fixture(autouse=True, scope="module")
def fresh_verdicts():
    """Verdicts computed now, by Hydra, not read back from a previous run's cache (composed bases and
    parses may come from there: they are Hydra's output too, keyed by content)."""
    judge_module = importlib.import_module("migrator.verdict.judge")  # the package exports a function of that name
    from migrator.verdict.memo import DiskTable

    table = DiskTable("verdicts-test")
    table._table = {}  # in memory only: never read from nor written to disk
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(judge_module, "VERDICTS", table)
        yield table


def verdict_of(release: str, module: str, overrides: list[str], config_name: str | None = None):
    configs = release_configs(release)
    entry = configs.entry_by_module(module)
    return judge(configs, entry.config_path, config_name or entry.config_name, overrides)


def rejected(release: str, module: str, overrides: list[str]) -> dict[str, str]:
    """override -> Hydra's message, for each override Hydra rejects."""
    return {r.override: r.message for r in verdict_of(release, module, overrides).rejections}


# -- the shipped data ---------------------------------------------------------------------------------

def test_every_release_has_its_trees_and_entry_points():
    import yaml

    releases = yaml.safe_load((configs_dir().parent.parent / "releases.yaml").read_text())["releases"]
    for release in releases:
        configs = release_configs(release)
        main_ppo = configs.entry_by_module(PPO)
        assert main_ppo is not None and main_ppo.config_name == "ppo_trainer", release
        assert configs.has_config(main_ppo.config_path, "ppo_trainer"), release
        assert all((configs.blobs / f"{blob}.yaml").is_file() for blob in configs.files.values()), release
        assert not any(p.rsplit("/", 1)[-1].startswith("_generated_") for p in configs.files), release


def test_shipped_data_stays_small():
    size = sum(p.stat().st_size for p in configs_dir().rglob("*") if p.is_file())
    assert size < 2_000_000, size  # ~1 MB of YAML for 13 releases, each file once


def test_materialize_is_atomic_and_keyed_by_content(tmp_path, monkeypatch):
    from migrator.verdict import store

    monkeypatch.setenv("VERL_MIGRATE_CACHE_DIR", str(tmp_path))
    configs = release_configs("v0.9.0")
    root = store.materialize.__wrapped__(configs)
    assert root == tmp_path / "configs" / configs.digest and (root / ".complete").is_file()
    blob = (configs.blobs / f"{configs.files['verl/trainer/config/ppo_trainer.yaml']}.yaml").read_bytes()
    assert blob.startswith(store.GENERATED)  # the shipped blob says what wrote it; the tree holds verl's bytes
    assert (root / "verl/trainer/config/ppo_trainer.yaml").read_bytes() == store.verl_bytes(blob)
    assert store.materialize.__wrapped__(configs) == root
    assert [p.name for p in (tmp_path / "configs").iterdir()] == [configs.digest]  # no temp dir left
    assert release_configs("v0.6.1").digest != configs.digest


# -- each kind of rejection, with Hydra's own message ---------------------------------------------------

def test_unknown_key_without_plus():
    assert rejected("v0.9.0", PPO, ["trainer.nnodes=1", "trainer.no_such_key=1"]) == {
        "trainer.no_such_key=1": "Could not override 'trainer.no_such_key'. To append to your config use "
                                 "+trainer.no_such_key=1 (Key 'no_such_key' is not in struct)"}


def test_plus_on_an_existing_key():
    (message,) = rejected("v0.9.0", PPO, ["+trainer.nnodes=2"]).values()
    assert message.startswith("Could not append to config. An item is already at 'trainer.nnodes'.")
    assert "++trainer.nnodes=2" in message


def test_delete_of_a_missing_key():
    assert rejected("v0.9.0", PPO, ["~trainer.logger", "~trainer.no_such_key"]) == {
        "~trainer.no_such_key": "Could not delete from config. 'trainer.no_such_key' does not exist."}


def test_unknown_group_option_and_unknown_group():
    found = rejected("v0.9.0", PPO, ["model_engine=no_such_engine", "no_such_group@trainer=x"])
    assert found["model_engine=no_such_engine"].startswith(
        "In 'ppo_trainer': Could not find 'model_engine/no_such_engine' Available options in 'model_engine':")
    assert "megatron" in found["model_engine=no_such_engine"]
    assert "config group 'no_such_group' does not exist" in found["no_such_group@trainer=x"]


def test_key_under_a_value_that_is_not_a_mapping():
    assert list(rejected("v0.9.0", PPO, ["trainer.nnodes.x=1"])) == ["trainer.nnodes.x=1"]


def test_syntax_errors_are_reported_each():
    found = rejected("v0.9.0", PPO, ["data.train_batch_size=[1,2", "trainer.nnodes=1", "trainer.logger=a,b"])
    assert set(found) == {"data.train_batch_size=[1,2", "trainer.logger=a,b"}
    assert found["trainer.logger=a,b"].startswith("Ambiguous value for argument 'trainer.logger=a,b'")


def test_every_rejection_is_reported_not_only_the_first():
    bad = ["trainer.a1=1", "+trainer.nnodes=1", "~trainer.a2", "trainer.nnodes.x=1"]
    verdict = verdict_of("v0.9.0", PPO, ["trainer.nnodes=1", *bad, "data.train_batch_size=8"])
    assert [r.override for r in verdict.rejections] == bad
    assert [r.index for r in verdict.rejections] == [1, 2, 3, 4]


def test_hydras_first_error_is_ours(tmp_path):
    """The same overrides through hydra.compose: Hydra stops at the first bad one, with our first message."""
    from hydra import compose, initialize_config_dir

    from migrator.verdict.store import materialize

    overrides = ["trainer.nnodes=1", "trainer.no_such_key=1", "+trainer.nnodes=3"]
    ours = verdict_of("v0.9.0", PPO, overrides).rejections[0].message
    root = materialize(release_configs("v0.9.0"))
    with initialize_config_dir(config_dir=str(root / "verl/trainer/config"), version_base=None):
        with pytest.raises(Exception) as info:
            compose("ppo_trainer", overrides)
    assert ours.startswith(" ".join(str(info.value).split("\n")[:2]))


# -- order, groups, shell values ----------------------------------------------------------------------

def test_overrides_apply_in_order_as_in_hydra():
    assert rejected("v0.9.0", PPO, ["+trainer.extra={a:1}", "trainer.extra.a=2"]) == {}
    assert rejected("v0.9.0", PPO, ["~trainer.nnodes", "+trainer.nnodes=2"]) == {}
    assert list(rejected("v0.9.0", PPO, ["+trainer.nnodes=2", "~trainer.nnodes"])) == ["+trainer.nnodes=2"]
    assert rejected("v0.9.0", PPO, ["+trainer.logger=[console]"]) == {}  # Hydra merges a list or dict into `+`


def test_group_selection_changes_the_config():
    megatron_key = "actor_rollout_ref.actor.megatron.tensor_model_parallel_size=2"
    assert list(rejected("v0.9.0", PPO, [megatron_key])) == [megatron_key]
    assert rejected("v0.9.0", PPO, ["model_engine=megatron", megatron_key]) == {}
    assert rejected("v0.9.0", PPO, [megatron_key, "model_engine=megatron"]) == {}  # groups compose first


def test_a_key_of_another_engine_names_the_group_choice():
    found = verdict_of("v0.9.0", PPO, ["actor_rollout_ref.actor.model_engine=megatron",
                                       "actor_rollout_ref.actor.megatron.tensor_model_parallel_size=2"]).rejections
    assert [r.hint for r in found] == [
        "`model_engine` is a config group, chosen at the top level: write `model_engine=megatron`",
        "select `model_engine=megatron`: the key is in that config"]


def test_a_placeholder_value_judges_the_key_only():
    assert rejected("v0.9.0", PPO, [f"trainer.nnodes={PLACEHOLDER}", f"trainer.logger=[{PLACEHOLDER}]"]) == {}
    assert list(rejected("v0.9.0", PPO, [f"trainer.no_such={PLACEHOLDER}"])) == ["trainer.no_such=verl_migrate_shell_value"]


def test_a_key_or_a_group_choice_set_at_run_time_is_not_judged():
    verdict = verdict_of("v0.9.0", PPO, [f"trainer.{PLACEHOLDER}=1", "trainer.no_such=1"])
    assert [r.override for r in verdict.rejections] == ["trainer.no_such=1"]
    assert "its key is set at run time" in verdict.notes[0]
    verdict = verdict_of("v0.9.0", PPO, [f"model_engine={PLACEHOLDER}", "actor_rollout_ref.actor.megatron.x=1"])
    assert verdict.rejections == [] and "chooses a config at run time" in verdict.notes[0]


def test_did_you_mean_is_a_typo_under_the_same_parent_only():
    (typo,) = verdict_of("v0.9.0", PPO, ["actor_rollout_ref.rollout.temprature=1.0"]).rejections
    assert typo.hint == "did you mean `actor_rollout_ref.rollout.temperature`?"
    # A fork's own setting is another setting, not a misspelling of `temperature`.
    (fork,) = verdict_of("v0.9.0", PPO, ["actor_rollout_ref.rollout.val_temperature=0.6"]).rejections
    assert fork.hint is None
    # Never a key of another node: `trainer.temperature` does not exist, `rollout.temperature` is elsewhere.
    (other,) = verdict_of("v0.9.0", PPO, ["trainer.temperature=1.0"]).rejections
    assert other.hint is None


# -- other entry points ---------------------------------------------------------------------------------

def test_sft_trainer_engine_at_v0_9_0():
    module = "verl.trainer.sft_trainer"
    assert release_configs("v0.9.0").entry_by_module(module).config_name == "sft_trainer_engine"
    assert rejected("v0.9.0", module, ["engine=megatron", "engine.tensor_model_parallel_size=2", "model.path=x",
                                       "data.micro_batch_size_per_gpu=4"]) == {}
    assert list(rejected("v0.9.0", module, ["model.partial_pretrain=x"])) == ["model.partial_pretrain=x"]


def test_fsdp_sft_trainer_at_v0_6_1():
    module = "verl.trainer.fsdp_sft_trainer"
    assert release_configs("v0.6.1").entry_by_module(module).config_name == "sft_trainer"
    assert release_configs("v0.9.0").entry_by_module(module) is None
    assert rejected("v0.6.1", module, ["model.partial_pretrain=x", "data.micro_batch_size_per_gpu=4"]) == {}
    assert list(rejected("v0.6.1", module, ["engine=megatron"])) == ["engine=megatron"]


def test_recipe_config_finds_verl_configs_through_its_search_path():
    module = "verl.experimental.fully_async_policy.fully_async_main"
    assert rejected("v0.9.0", module, ["async_training.staleness_threshold=1", "trainer.nnodes=1"]) == {}
    assert list(rejected("v0.9.0", module, ["async_training.no_such=1"])) == ["async_training.no_such=1"]


def test_a_config_that_does_not_compose_is_a_failure_not_a_traceback(tmp_path, monkeypatch):

    (tmp_path / "releases").mkdir()
    (tmp_path / "blobs").mkdir()
    (tmp_path / "blobs" / "b1.yaml").write_text("defaults:\n  - no_such_group: x\n  - _self_\na: 1\n")
    (tmp_path / "releases" / "broken.yaml").write_text(
        "entry_points:\n  verl/trainer/main_ppo.py: {config_path: verl/trainer/config, config_name: ppo_trainer}\n"
        "files:\n  verl/trainer/config/ppo_trainer.yaml: b1\n")
    monkeypatch.setenv("VERL_MIGRATE_CACHE_DIR", str(tmp_path / "cache"))
    configs = release_configs("broken", str(tmp_path))
    verdict = judge(configs, "verl/trainer/config", "ppo_trainer", ["a=2"])
    assert verdict.failure is not None and "no_such_group" in verdict.failure
    missing = judge(configs, "verl/trainer/config", "no_such_config", ["a=2"])
    assert missing.failure is not None and "no_such_config" in missing.failure


def test_a_verdict_is_computed_once(fresh_verdicts, monkeypatch):
    judge_module = importlib.import_module("migrator.verdict.judge")  # the package exports a function of that name

    first = verdict_of("v0.9.0", PPO, ["trainer.memo_probe=1"])
    monkeypatch.setattr(judge_module, "_judge", lambda *args: pytest.fail("judged twice"))
    again = verdict_of("v0.9.0", PPO, ["trainer.memo_probe=1"])
    assert again == first and again is not first
    assert [r.override for r in again.rejections] == ["trainer.memo_probe=1"]


def test_the_engine_versions_that_name_the_caches_are_the_installed_ones_without_importlib_metadata():
    # Read from the dist-info directories; importing importlib.metadata cost every worker ~40 ms.
    import subprocess
    import sys
    from importlib.metadata import version

    from migrator.verdict.store import engine_versions

    assert engine_versions() == (version("hydra-core"), version("omegaconf"))
    code = ("import sys; from migrator.verdict.store import engine_versions; engine_versions(); "
            "print('importlib.metadata' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True).stdout.strip() == "False"


def test_a_saved_table_prunes_the_files_other_versions_left(tmp_path, monkeypatch):
    # Each code or Hydra version names its own file: without pruning, every upgrade left megabytes behind.
    import os

    from migrator.verdict import memo

    root = tmp_path / "verl-migrate"
    monkeypatch.setenv("VERL_MIGRATE_CACHE_DIR", str(root))
    root.mkdir(mode=0o700)
    for age, name in enumerate(["reviews-1.3.8.pickle", "reviews-aaaa-1.0-2.0.pickle", "reviews-bbbb-1.0-2.0.pickle",
                                "reviews-cccc-1.0-2.0.pickle", "reviews-test-dddd-1.0-2.0.pickle"]):
        (root / name).write_bytes(b"x")
        os.utime(root / name, (1_000_000 + age, 1_000_000 + age))
    table = memo.DiskTable("reviews")
    table.table["k"] = 1
    table.save()
    ours = table._name()
    # the newest other stays; an older format's file goes too; another table's (`reviews-test`) is not ours
    assert sorted(p.name for p in root.glob("reviews*")) == sorted(
        [ours, "reviews-cccc-1.0-2.0.pickle", "reviews-test-dddd-1.0-2.0.pickle"])
    assert (root / ours).is_dir()
    assert memo.DiskTable("reviews").table == {"k": 1}
    # Each newer version's save keeps the one before as the newest other (a directory of shards and locks)
    # and removes the older one whole: first the older format's file, then a directory.
    previous, older = ours, "reviews-cccc-1.0-2.0.pickle"
    for age, version in enumerate(["eeee", "ffff"], start=2):
        os.utime(root / previous, (age * 1_000_000, age * 1_000_000))
        monkeypatch.setattr(memo, "code_version", lambda version=version: version)
        newer = memo.DiskTable("reviews")
        newer.table[version] = age
        newer.save()
        assert sorted(p.name for p in root.glob("reviews*")) == sorted(
            [previous, newer._name(), "reviews-test-dddd-1.0-2.0.pickle"]) and not (root / older).exists()
        assert memo.DiskTable("reviews").table == {version: age}
        previous, older = newer._name(), previous
