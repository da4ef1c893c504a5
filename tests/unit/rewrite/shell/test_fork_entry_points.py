"""One rule for shell and YAML: verl's key table applies to a command only where it provably runs verl's config,
an entry point verl shipped by the files' release (mappings/verl/facts/entry-points.yaml); a fork's own entry
point (`verl.trainer.main_grpo`, `main_ppo_w_sft`: no verl release has them) keeps its keys, and one note
(VM157) per command says why. Fork-shaped fixtures under tests/fixtures/forks, the real tables."""

from __future__ import annotations

import pytest

from migrator.fileprocess import process_file
from migrator.mapping import compose, load_builtin
from tests.helpers import FIXTURES

HERE = FIXTURES / "forks"
MOVED = b"critic.model.fsdp_config.param_offload"  # moved to critic.fsdp.param_offload at v0.9.0


@pytest.fixture(scope="module")
def tables():
    return load_builtin()


def migrate(tables, name: str, src: bytes, from_: str | None = "v0.2.0.post2"):
    result = process_file(name, name, compose(tables, from_, "v0.9.0", []), data=src)
    assert result.status in ("changed", "unchanged"), result.reason
    return result, result.after or src


@pytest.mark.parametrize("from_", ["v0.2.0.post2", None])
def test_a_forks_entry_points_keep_their_keys(tables, from_):
    src = (HERE / "run_fork_grpo.sh").read_bytes()
    result, after = migrate(tables, "run.sh", src, from_)
    assert after == src  # nothing deleted, renamed or moved, in the commands nor in the array they expand
    notes = [(f.line, f.code, f.severity) for f in result.findings]
    assert notes == [(8, "VM157", "info"), (13, "VM157", "info")]
    where = "by verl v0.2.0.post2" if from_ else "in any verl release"
    first = result.findings[0].message
    assert first.startswith(f"verl does not ship verl.trainer.main_grpo {where}: ")
    assert "trainer.remove_previous_ckpt_in_save" in first and MOVED.decode() in first
    assert MOVED.decode() in result.findings[1].message


def test_verls_entry_point_beside_a_fork_is_migrated(tables):
    verl = b"python3 -m verl.trainer.main_ppo actor_rollout_ref.rollout.name=vllm "
    src = b"python3 -m verl.trainer.main_grpo " + MOVED + b"=True\n" + verl + MOVED + b"=True\n"
    result, after = migrate(tables, "run.sh", src)
    assert after == b"python3 -m verl.trainer.main_grpo " + MOVED + b"=True\n" + verl + b"critic.fsdp.param_offload=True\n"
    assert [(f.line, f.code) for f in result.findings] == [(1, "VM157")]


def test_an_entry_point_verl_ships_only_later_than_the_files_release_is_not_verls(tables):
    # verl.experimental.fully_async_policy.fully_async_main is an entry point from verl v0.7.1: a script
    # written for v0.2.0.post2 that runs it runs something else (a fork's, or a copy).
    src = b"python3 -m verl.experimental.fully_async_policy.fully_async_main " + MOVED + b"=True\n"
    result, after = migrate(tables, "run.sh", src)
    assert after == src and [f.code for f in result.findings] == ["VM157"]
    later, _ = migrate(tables, "run.sh", src, "v0.8.0")  # verl's own entry point there: the table decides
    assert "VM157" not in [f.code for f in later.findings]


def test_a_fork_command_without_table_keys_says_nothing(tables):
    src = b"python3 -m verl.trainer.main_grpo data.train_batch_size=8\n"
    result, after = migrate(tables, "run.sh", src)
    assert after == src and not result.findings


def test_yaml_follows_the_same_rule(tables):
    src = (HERE / "job.yaml").read_bytes()
    result, after = migrate(tables, "job.yaml", src)
    assert after == src.replace(b"main_ppo " + MOVED, b"main_ppo critic.fsdp.param_offload")
    assert [(f.line, f.code, f.severity) for f in result.findings] == [(2, "VM157", "info")]
