"""One rule for shell and YAML: verl's key table applies to a command only where it provably runs verl's config,
an entry point some verl release ships (mappings/verl/facts/entry-points.yaml); a fork's own entry
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
    first = result.findings[0].message
    assert first.startswith("no verl release ships verl.trainer.main_grpo: ")
    assert "trainer.remove_previous_ckpt_in_save" in first and MOVED.decode() in first
    assert MOVED.decode() in result.findings[1].message


def test_verls_entry_point_beside_a_fork_is_migrated(tables):
    verl = b"python3 -m verl.trainer.main_ppo actor_rollout_ref.rollout.name=vllm "
    src = b"python3 -m verl.trainer.main_grpo " + MOVED + b"=True\n" + verl + MOVED + b"=True\n"
    result, after = migrate(tables, "run.sh", src)
    assert after == b"python3 -m verl.trainer.main_grpo " + MOVED + b"=True\n" + verl + b"critic.fsdp.param_offload=True\n"
    # The fork's command: one note; verl's: the defaults its run leaves to a newer verl (the run comparison).
    assert [(f.line, f.code) for f in result.findings] == [(1, "VM157"), (2, "VM194")]


def test_verls_entry_point_newer_than_the_files_release_is_still_verls(tables):
    # --from auto may settle a file on a release older than the entry point it runs (verl v0.7.1's own
    # mtp_trainer script fits v0.6.1): verl's module, verl's config.
    src = b"python3 -m verl.experimental.fully_async_policy.fully_async_main " + MOVED + b"=True\n"
    result, _ = migrate(tables, "run.sh", src)
    assert "VM157" not in [f.code for f in result.findings]


def test_a_fork_command_without_table_keys_says_nothing(tables):
    src = b"python3 -m verl.trainer.main_grpo data.train_batch_size=8\n"
    result, after = migrate(tables, "run.sh", src)
    assert after == src and not result.findings


def test_yaml_follows_the_same_rule(tables):
    src = (HERE / "job.yaml").read_bytes()
    result, after = migrate(tables, "job.yaml", src)
    assert after == src.replace(b"main_ppo " + MOVED, b"main_ppo critic.fsdp.param_offload")
    assert [(f.line, f.code, f.severity) for f in result.findings] == [(2, "VM157", "info")]
