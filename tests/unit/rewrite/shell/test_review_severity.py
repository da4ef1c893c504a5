"""Severity from Hydra's verdict (Review.rejected, edits.regraded): a key the tables only warn about ("has no
effect") that Hydra at the target rejects is a manual step (VM198), in a script with edits and in one without;
one Hydra accepts stays a warning. Real tables, real shipped configs, real Hydra."""

from __future__ import annotations

import pytest

from migrator.edits import Finding, regraded
from migrator.fileprocess import process_file
from migrator.mapping import compose, load_builtin

TO = "v0.9.0"


@pytest.fixture(scope="module")
def tables():
    return load_builtin()


def findings_of(tmp_path, tables, from_: str, *overrides: str):
    path = tmp_path / "run.sh"
    path.write_text("python3 -m verl.trainer.main_ppo \\\n    " + " \\\n    ".join(overrides) + "\n")
    result = process_file(str(path), "run.sh", compose(tables, from_, TO, []))
    assert result.status in ("changed", "unchanged"), result.reason
    return result.findings


@pytest.mark.parametrize("from_, override", [
    ("v0.2.0.post2", "trainer.remove_previous_ckpt_in_save=True"),
    ("v0.6.1", "actor_rollout_ref.rollout.multi_turn.interaction_config_path=x.yaml"),
    ("v0.2.0.post2", "actor_rollout_ref.rollout.chat_scheduler=a.b"),
])
def test_warn_only_key_hydra_rejects_is_a_manual_step(tmp_path, tables, from_, override):
    key = override.partition("=")[0]
    found = [f for f in findings_of(tmp_path, tables, from_, "actor_rollout_ref.rollout.name=vllm", override)
             if key in f.message]
    assert [(f.code, f.severity) for f in found] == [("VM198", "manual")]
    assert f"Hydra at verl {TO} rejects `{override}`: the launch fails" in found[0].message
    assert found[0].hint  # the table's advice stays


def test_rejected_key_in_a_script_with_edits_is_a_manual_step(tmp_path, tables):
    # The `+` drop is an edit: the review judges the launch, and the warn-only key still fails it.
    found = findings_of(tmp_path, tables, "v0.2.0.post2", "actor_rollout_ref.rollout.name=vllm", "+trainer.nnodes=2",
                        "trainer.remove_previous_ckpt_in_save=True")
    assert [(f.code, f.line) for f in found if f.severity == "manual"] == [("VM198", 4)]


def test_summary_counts_it_as_a_manual_action(tmp_path, tables):
    from tests.helpers import run_cli

    (tmp_path / "run.sh").write_text("python3 -m verl.trainer.main_ppo actor_rollout_ref.rollout.name=vllm "
                                     "trainer.remove_previous_ckpt_in_save=True\n")
    out = run_cli("--check", "--from", "v0.2.0.post2", "--to", TO, "run.sh", cwd=tmp_path,
                  env={"VERL_MIGRATE_CACHE_DIR": str(tmp_path / "cache")})
    # The one warning is the run comparison's (VM194: defaults changed since v0.2.0.post2), not the key's.
    assert "1 manual action," in out.stderr and "1 warning," in out.stderr, out.stderr
    assert "\nVM198 " in out.stderr and out.stderr.count("\nVM194 ") == 1


def test_regraded_touches_only_findings_below_manual_at_a_rejected_key():
    warn = Finding(10, "key-warn", "k: has no effect", "hint", (1,), "warning")
    elsewhere = Finding(20, "key-warn", "j: has no effect", None, (), "warning")
    manual = Finding(10, "key-removal", "removed k", None, (), "manual")
    out = regraded([warn, elsewhere, manual], ((10, "Hydra rejects it"),), "VM198")
    assert out == [Finding(10, "key-warn", "k: has no effect; Hydra rejects it", "hint", (1,), "manual", "VM198"),
                   elsewhere, manual]


def test_warn_only_key_hydra_accepts_stays_a_warning(tmp_path, tables):
    # Under a free-form dict: Hydra accepts it, vLLM's server launch overrides it (the table's warning).
    found = findings_of(tmp_path, tables, "v0.7.1", "actor_rollout_ref.rollout.name=vllm",
                        "+actor_rollout_ref.rollout.engine_kwargs.vllm.enable_expert_parallel=True")
    assert [(f.code, f.severity) for f in found if "enable_expert_parallel" in f.message] == [("VM112", "warning")]
