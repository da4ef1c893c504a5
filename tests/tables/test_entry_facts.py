"""The shipped facts of verl's non-main_ppo entry points and the draft entry-point table agree:
known keys are where verl had them, and every key verl removed from those configs has an entry."""

import re

import pytest

from tests.helpers import REPO, load_script

ROOT = REPO


coverage = load_script("check_entry_coverage")


entry_modules = coverage.entry_modules


@pytest.mark.parametrize(
    ("release", "config", "key", "kind"),
    [
        ("v0.6.1", "sft_trainer", "model.partial_pretrain", "str"),
        ("v0.6.1", "sft_trainer", "data.multiturn.messages_key", "str"),
        ("v0.9.0", "sft_trainer_engine", "model.path", "str"),
        ("v0.9.0", "sft_trainer_engine", "engine.ulysses_sequence_parallel_size", "int"),
        ("v0.4.1", "generation", "ray_init.num_cpus", "null"),
        ("v0.6.0", "evaluation", "ray_kwargs.ray_init.num_cpus", "null"),
        ("v0.9.0", "evaluation", "custom_reward_function.path", "null"),
        ("v0.7.0", "fully_async_ppo_trainer", "async_training.compute_prox_log_prob", "bool"),
        ("v0.9.0", "one_step_off_ppo_trainer", "actor_rollout_ref.rollout.name", "str"),
    ],
)
def test_known_keys(release, config, key, kind):
    assert coverage.entry_config_keys(release, config)[key] == kind


@pytest.mark.parametrize(
    ("release", "config", "key"),
    [
        ("v0.7.0", "sft_trainer_engine", "model.partial_pretrain"),
        ("v0.6.1", "sft_trainer", "optim.warmup_steps_ratio"),
        ("v0.9.0", "evaluation", "reward.custom_reward_function.path"),
    ],
)
def test_absent_keys(release, config, key):
    assert key not in coverage.entry_config_keys(release, config)


def test_configs_exist_only_in_their_releases():
    assert coverage.entry_config_keys("v0.7.0", "sft_trainer") is not None
    assert coverage.entry_config_keys("v0.7.1", "sft_trainer") is None
    assert coverage.entry_config_keys("v0.7.1", "generation") is None
    assert coverage.entry_config_keys("v0.5.0", "sft_trainer_engine") is None
    assert coverage.entry_config_keys("v0.6.1", "fully_async_ppo_trainer") is not None


def test_entry_points_per_release():
    assert "verl.trainer.fsdp_sft_trainer" in entry_modules("v0.7.0")
    assert "verl.trainer.fsdp_sft_trainer" not in entry_modules("v0.9.0")
    assert "verl.trainer.main_generation" not in entry_modules("v0.9.0")
    assert entry_modules("v0.9.0")["verl.trainer.sft_trainer"]["config_name"] == "sft_trainer_engine"
    assert "verl.trainer.main_ppo_sync" in entry_modules("v0.8.0")
    assert "verl.trainer.main_ppo_sync" not in entry_modules("v0.9.0")
    assert "recipe.fully_async_policy.fully_async_main" in entry_modules("v0.7.0")
    assert "verl.experimental.fully_async_policy.fully_async_main" in entry_modules("v0.7.1")


def test_every_removed_key_has_an_entry():
    removals = coverage.removals()
    assert len(removals) > 500  # the facts are there: SFT, generation, evaluation, async trainers
    uncovered = [r for r in removals if coverage.covering_entry(r) is None]
    assert uncovered == []


def test_sft_move_maps_every_old_key():
    entry = next(e for e in coverage.draft()["entries"] if e.get("old") == "verl.trainer.fsdp_sft_trainer")
    mapped = {item["old"] for item in entry["keys"]}
    for release in ("v0.6.1", "v0.7.0"):
        assert set(coverage.entry_config_keys(release, "sft_trainer")) <= mapped
    homes = {item["old"]: item.get("new") for item in entry["keys"]}
    assert homes["model.partial_pretrain"] == "model.path"
    assert homes["data.prompt_key"] is None


def test_draft_targets_and_moves_match_the_facts():
    assert coverage.target_problems() == []
    assert coverage.move_problems() == []


def test_scoped_entries_keep_custom_reward_function_in_evaluation():
    removal = coverage.Removal("evaluation", "v0.7.0", "v0.7.1", "custom_reward_function.path")
    assert coverage.covering_entry(removal) is None  # the v0.7.1 move does not apply to evaluation.yaml
    removal = coverage.Removal("evaluation", "v0.5.0", "v0.6.0", "ray_init.num_cpus")
    assert "scope extended" in coverage.covering_entry(removal)


def test_coverage_finds_a_missing_entry(monkeypatch):
    doc = coverage.draft()
    pruned = {**doc, "entries": [e for e in doc["entries"] if e.get("old") != "rollout.use_fire_sampling"]}
    monkeypatch.setattr(coverage, "draft", lambda: pruned)
    uncovered = [r.key for r in coverage.removals() if coverage.covering_entry(r) is None]
    assert uncovered == ["rollout.use_fire_sampling"]


def remap_keys(old_module, keys):
    """Keys of a script's overrides after the draft's entry-point move of `old_module` (manual steps dropped)."""
    entry = next(e for e in coverage.draft()["entries"] if e.get("old") == old_module)
    out = []
    for key in keys:
        item = next(i for i in entry["keys"] if coverage.matches(i["old"], key))
        new = item.get("new")
        if new and item["old"].endswith(".*"):
            out.append(new[:-2] + key[len(item["old"]) - 2 :])
        elif new:
            out.append(("+" if item.get("add") else "") + new)
    pinned = {p["key"] for p in entry.get("defaults") or [] if p.get("pin", True)}
    return out, pinned


def test_generation_move_reproduces_verls_own_e2e_migration():
    # tests/special_e2e/generation/run_gen_qwen05.sh (v0.7.0) and run_gen_qwen05_server.sh (v0.7.1)
    before = [
        "trainer.nnodes", "trainer.n_gpus_per_node", "data.path", "data.prompt_key", "data.n_samples",
        "data.output_path", "model.path", "model.trust_remote_code", "rollout.temperature", "rollout.top_k",
        "rollout.top_p", "rollout.prompt_length", "rollout.response_length", "rollout.tensor_model_parallel_size",
        "rollout.gpu_memory_utilization",
    ]
    after = {
        "trainer.nnodes", "trainer.n_gpus_per_node", "actor_rollout_ref.model.path",
        "actor_rollout_ref.model.trust_remote_code", "actor_rollout_ref.rollout.temperature",
        "actor_rollout_ref.rollout.top_k", "actor_rollout_ref.rollout.top_p", "actor_rollout_ref.rollout.prompt_length",
        "actor_rollout_ref.rollout.response_length", "actor_rollout_ref.rollout.tensor_model_parallel_size",
        "actor_rollout_ref.rollout.gpu_memory_utilization", "actor_rollout_ref.rollout.name",
        "actor_rollout_ref.rollout.n", "data.train_files", "data.prompt_key", "+data.output_path",
    }
    remapped, pinned = remap_keys("verl.trainer.main_generation", before)
    assert set(remapped) == after - {"actor_rollout_ref.rollout.name"}
    assert "actor_rollout_ref.rollout.name" in pinned  # mandatory in ppo_trainer; main_generation defaulted to vllm


def test_sft_move_reproduces_verls_own_example_migration():
    # examples/sft/gsm8k/run_qwen_05_peft.sh at v0.7.0 (fsdp_sft_trainer) and v0.7.1 (sft_trainer)
    before = [
        "data.train_files", "data.val_files", "data.prompt_key", "data.response_key", "optim.lr",
        "data.prompt_dict_keys", "data.response_dict_keys", "data.micro_batch_size_per_gpu", "model.partial_pretrain",
        "trainer.default_local_dir", "trainer.project_name", "trainer.experiment_name", "trainer.logger",
        "trainer.total_epochs", "model.lora_rank", "model.lora_alpha", "model.target_modules",
    ]
    after = {
        "data.train_files", "data.val_files", "data.micro_batch_size_per_gpu", "optim.lr", "model.path",
        "trainer.default_local_dir", "trainer.project_name", "trainer.experiment_name", "trainer.logger",
        "trainer.total_epochs", "model.lora_rank", "model.lora_alpha", "model.target_modules",
    }
    remapped, _ = remap_keys("verl.trainer.fsdp_sft_trainer", before)
    assert set(remapped) == after  # verl's version also selects engine=fsdp, the default group


def test_scope_names_configs_families_and_entry_modules():
    entry = {"release": "v0.7.1", "scope": ["sft", "verl.trainer.main_eval", "generation"]}
    assert coverage.scope_configs(entry) == {"sft_trainer", "sft_trainer_engine", "evaluation", "generation"}
    entry = {"release": "v0.7.1", "scope": ["verl.trainer.fsdp_sft_trainer"]}  # gone at v0.7.1: its v0.7.0 config
    assert coverage.scope_configs(entry) == {"sft_trainer"}


def test_facts_files_are_well_formed():
    types = {"bool", "int", "float", "str", "list", "null", "dict"}
    files = sorted((ROOT / "mappings" / "verl" / "facts" / "entry-config-keys").glob("*.keys"))
    assert len(files) >= 70
    for path in files:
        lines = coverage.data_lines(path)  # every line but the header naming the writer
        keys = [line.split("\t")[0] for line in lines]
        assert keys == sorted(set(keys)), path.name
        assert {line.split("\t")[1] for line in lines} <= types, path.name


@pytest.mark.parametrize(
    ("release", "node"), [("v0.7.0", "reward_manager"), ("v0.8.0", "reward"), ("main", "distillation")]
)
def test_composed_nodes_equal_the_generated_ppo_facts(release, node):
    # Composing with hydra-core and flattening verl's generated ppo_trainer file give the same keys and types.
    ppo = coverage.config_keys(release, "ppo_trainer")
    assert coverage.entry_config_keys(release, node) == {k: t for k, t in ppo.items() if k.startswith(node + ".")}


ENTRY_FIELDS = {
    "entry-point-move": {"old", "new", "old-config", "new-config", "keys"},
    "entry-point-removal": {"old", "hint"},
    "config-name-move": {"old", "new", "scope"},
    "config-dir-move": {"old", "new"},
    "config-dir-removal": {"old", "hint"},
    "key-rename": {"old", "new", "scope"},
    "key-removal": {"old", "action", "hint", "scope"},
    "key-no-action": {"old", "why", "scope"},
}


def test_draft_entries_have_their_fields():
    for entry in coverage.draft()["entries"]:
        assert entry["release"] in coverage.releases()[1:], entry
        assert ENTRY_FIELDS[entry["kind"]] <= set(entry), entry
        assert isinstance(entry["pr"], int) and entry["pr"] > 0, entry
        assert re.fullmatch(r"[0-9a-f]{9}", entry["commit"]), entry
        for item in entry.get("keys") or []:
            assert {"new"} <= set(item) or {"action", "hint"} <= set(item) or {"why"} <= set(item), item


def test_every_removed_entry_module_has_an_entry():
    removed = coverage.removed_entry_modules()
    assert {m for _, _, m, _ in removed} >= {"verl.trainer.fsdp_sft_trainer", "verl.trainer.main_ppo_sync"}
    assert [m for _, _, m, how in removed if how is None] == []
    # recipe/ became a submodule in v0.7.1: its entry points are facts at the commit verl pins
    assert entry_modules("v0.7.1")["recipe.dapo.main_dapo"]["submodule"].startswith("verl-recipe ")
