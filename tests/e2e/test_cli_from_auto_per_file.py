"""`--from auto` settles each file on its own evidence, through the CLI: the same file gets the same edits
alone or in a tree; a verl pin of the project (requirements*.txt, pyproject.toml, setup.cfg) decides; the
evidence used is in -v and in the JSON report."""

from __future__ import annotations

import json

import pytest

from tests.helpers import run_cli

# Only v0.8.0 shipped main_ppo_sync (v0.9.0 moved it to main_ppo with trainer.use_v1=true); its one key is
# read against the key lists of the entry point it runs, which only v0.8.0 had: the file dates itself.
SYNC = "python3 -m verl.trainer.main_ppo_sync trainer.nnodes=1\n"
# A key live in v0.9.0 and main only: a tree read as a whole looked written for v0.9.0-main.
NEWER = "python3 -m verl.trainer.main_ppo actor_rollout_ref.actor.entropy_from_logits_chunk_size=1\n"


def report(cwd, *paths, args=()):
    proc = run_cli("--from", "auto", "--to", "v0.9.0", "--check", "--output-format", "json", *args, *paths, cwd=cwd)
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)


def edits_of(data, name):
    (row,) = [r for r in data["files"] if r["path"].removeprefix("./") == name]
    return [(e["line"], e["kind"], e["message"]) for e in row["edits"]]


def test_the_same_file_gets_the_same_edits_alone_or_in_a_tree(tmp_path):
    (tmp_path / "sync.sh").write_text(SYNC)
    (tmp_path / "newer.sh").write_text(NEWER)
    alone = edits_of(report(tmp_path, "sync.sh"), "sync.sh")
    assert any(kind == "entry-point-move" for _, kind, _ in alone)
    tree = report(tmp_path, ".")
    assert edits_of(tree, "sync.sh") == alone
    assert tree["written_for"]["from"]["./sync.sh"] == {
        "release": "v0.8.0", "evidence": "it uses `trainer.nnodes` (v0.8.0)"}
    assert tree["written_for"]["from"]["./newer.sh"]["release"] == "v0.9.0"


@pytest.mark.parametrize("name, text, release, spec", [
    ("requirements-train.txt", "torch\nverl==0.8.0\n", "v0.8.0", "verl==0.8.0"),
    ("pyproject.toml", '[project]\nname = "mine"\ndependencies = ["verl[vllm]>=0.8.0,<0.9"]\n', "v0.8.0",
     "verl>=0.8.0"),
    ("setup.cfg", "[options]\ninstall_requires =\n    verl==0.8.1\n", "v0.8.0", "verl==0.8.1"),
])
def test_a_verl_pin_of_the_project_decides(tmp_path, name, text, release, spec):
    (tmp_path / ".git").mkdir()  # the project's top: pins above it are not its own
    (tmp_path / name).write_text(text)
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "sync.sh").write_text(SYNC)
    data = report(tmp_path, "scripts")
    start = data["written_for"]["from"]["scripts/sync.sh"]
    assert start == {"release": release, "evidence": f"the project pins {spec} in {tmp_path / name}"}
    assert any(kind == "entry-point-move" for _, kind, _ in edits_of(data, "scripts/sync.sh"))
    verbose = run_cli("--from", "auto", "--to", "v0.9.0", "--check", "-v", "scripts", cwd=tmp_path)
    assert f"scripts/sync.sh: from {release}: the project pins {spec}" in verbose.stderr


def test_a_pin_of_a_newer_release_than_the_target_stops_at_the_target(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "requirements.txt").write_text("verl==0.9.0\n")
    (tmp_path / "sync.sh").write_text(SYNC)
    data = report(tmp_path, ".", args=("--to", "v0.8.0"))
    assert data["written_for"]["from"]["./sync.sh"]["release"] == "v0.8.0"


FULLY_ASYNC = ("python -m verl.experimental.fully_async_policy.fully_async_main \\\n"
               "    --config-path=config --config-name='fully_async_ppo_megatron_trainer.yaml' \\\n"
               "    data.gen_batch_size=1 trainer.nnodes=1{more}\n")


def test_keys_are_read_against_the_key_lists_of_the_entry_point_the_file_runs(tmp_path):
    """`data.gen_batch_size` joined main_ppo's configs only in v0.9.0 but was in the fully async trainer's
    from its first release as verl.experimental (v0.7.1): the script is not settled as v0.9.0 (the target:
    nothing migrated), and v0.9.0's table applies to it."""
    (tmp_path / "async.sh").write_text(FULLY_ASYNC.format(more=""))
    assert report(tmp_path, "async.sh")["written_for"]["from"]["async.sh"] == {
        "release": "v0.7.1", "evidence": "it uses `data.gen_batch_size` (v0.7.1–main), `trainer.nnodes` (v0.7.1–main)"}
    (tmp_path / "async.sh").write_text(FULLY_ASYNC.format(more=" actor_rollout_ref.rollout.skip.enable=True"))
    data = report(tmp_path, "async.sh")
    assert data["written_for"]["from"]["async.sh"]["release"] == "v0.8.0"
    assert (3, "key-rename", "actor_rollout_ref.rollout.skip.enable -> skip.rollout.enable") in edits_of(data, "async.sh")


def test_a_plus_on_a_key_verl_declares_dates_the_file_before_that_key(tmp_path):
    # Hydra refuses `+key=` where the config has the key, so the file ran where verl lacked it: before v0.4.0
    # for `trainer.val_before_train`, whatever a fork's newer-looking keys say. From there the `+` is dropped.
    (tmp_path / "run.sh").write_text(
        "python3 -m verl.trainer.main_ppo +trainer.val_before_train=False \\\n"
        "    actor_rollout_ref.actor.entropy_from_logits_chunk_size=1\n")
    data = report(tmp_path, "run.sh")
    start = data["written_for"]["from"]["run.sh"]
    assert start["release"] in ("v0.1", "v0.2.0.post2", "v0.3.0.post1")  # not the target, v0.9.0
    assert "`+trainer.val_before_train` (v0.1–v0.3.0.post1)" in start["evidence"]
    assert any(kind == "plus-dropped" for _, kind, _ in edits_of(data, "run.sh"))


def test_a_plus_on_a_key_no_release_declares_says_nothing(tmp_path):
    (tmp_path / "run.sh").write_text(NEWER.replace("\n", " +my_fork.retriever.topk=3\n"))
    assert report(tmp_path, "run.sh")["written_for"]["from"]["run.sh"]["release"] == "v0.9.0"
# A Hydra config of the user's own over verl's ppo_trainer: its nested keys are verl's keys (once read as
# "it names no key or path of verl's", so `--from auto` took it from v0.1 and an explicit --from never
# got VM301 for it while the same keys in a script did).
CONFIG = """# @package _global_
defaults:
  - ppo_trainer
  - _self_

actor_rollout_ref:
  rollout:
    update_weights_bucket_megabytes: 2048
critic:
  model:
    fsdp_config:
      param_offload: true
"""


def test_a_hydra_config_is_dated_by_its_nested_keys(tmp_path):
    (tmp_path / "grpo.yaml").write_text(CONFIG)
    start = report(tmp_path, "grpo.yaml")["written_for"]["from"]["grpo.yaml"]
    assert start["release"] == "v0.5.0", start
    assert "actor_rollout_ref.rollout.update_weights_bucket_megabytes` (v0.5.0–v0.7.0)" in start["evidence"]


def test_an_explicit_from_newer_than_a_hydra_config_is_reported_at_its_keys(tmp_path):
    (tmp_path / "grpo.yaml").write_text(CONFIG)
    proc = run_cli("--from", "v0.8.0", "--to", "v0.9.0", "--check", "--output-format", "json", "grpo.yaml", cwd=tmp_path)
    found = [(f["line"], f["col"], f["message"]) for row in json.loads(proc.stdout)["files"] for f in row["findings"]
             if f["code"] == "VM301"]
    assert found == [
        (8, 5, "`actor_rollout_ref.rollout.update_weights_bucket_megabytes` was gone before verl v0.8.0 (last in v0.7.0)"),
        (12, 7, "`critic.model.fsdp_config.param_offload` was gone before verl v0.8.0 (last in v0.7.1)")]
