"""The run itself (migrator/rewrite/shell/effect.py): with `--from` named, each launch's effective config at
the files' release is compared with the migrated launch's at the target, and what differs is said (VM194,
VM195, VM196) or, with --unsafe-fixes, the old defaults are pinned."""

from __future__ import annotations

import subprocess
from functools import lru_cache

import pytest

from migrator.fileprocess import process_file
from migrator.mapping import compose
from migrator.mapping.load import load_builtin
from tests.helpers import run_cli

PPO = "python3 -m verl.trainer.main_ppo"


@lru_cache(maxsize=None)
def mappings(from_release: str | None, to_release: str, unsafe: bool = False):
    composed = compose(load_builtin(), from_release, to_release)
    composed.unsafe_fixes = unsafe
    return composed


def migrate(tmp_path, source: str, from_release: str | None, to_release: str, unsafe: bool = False):
    path = tmp_path / "run.sh"
    path.write_text(source)
    result = process_file(str(path), "run.sh", mappings(from_release, to_release, unsafe))
    assert result.status in ("changed", "unchanged"), result.reason
    return result


def by_code(result, code: str) -> list:
    return [f for f in result.findings if f.code == code]


def test_a_default_verl_changed_is_reported_once_per_launch_with_its_pr(tmp_path):
    # v0.3.0.post1 trained with entropy_coeff 0.001; from v0.4.0 the default is 0 (#1100).
    result = migrate(tmp_path, f"{PPO} \\\n    data.train_files=x.parquet \\\n    \"$@\"\n", "v0.3.0.post1", "v0.4.1")
    [finding] = by_code(result, "VM194")
    assert finding.severity == "warning" and finding.line == 1
    assert "actor_rollout_ref.actor.entropy_coeff 0.001 -> 0 (#1100)" in finding.message
    assert 1100 in finding.prs
    assert result.status == "unchanged"  # reported, not edited: the edit would change what the run does


def test_a_default_the_command_sets_is_no_difference(tmp_path):
    result = migrate(tmp_path, f"{PPO} actor_rollout_ref.actor.entropy_coeff=0.001 data.train_files=x\n",
                     "v0.3.0.post1", "v0.4.1")
    assert "entropy_coeff" not in " ".join(f.message for f in result.findings)


def test_unsafe_fixes_pin_the_old_defaults_first_so_every_later_override_wins(tmp_path):
    source = f"{PPO} \\\n    data.train_files=x.parquet \\\n    \"$@\" \\\n    trainer.total_epochs=1\n"
    result = migrate(tmp_path, source, "v0.3.0.post1", "v0.4.1", unsafe=True)
    assert result.status == "changed" and not by_code(result, "VM194")
    after = result.after.decode()
    head, tail = after.split("    data.train_files=x.parquet", 1)
    assert head.startswith(f"{PPO} \\\n    ") and "    actor_rollout_ref.actor.entropy_coeff=0.001 \\\n" in head
    assert tail == " \\\n    \"$@\" \\\n    trainer.total_epochs=1\n"
    assert subprocess.run(["bash", "-n"], input=result.after).returncode == 0
    (tmp_path / "again").mkdir()
    again = migrate(tmp_path / "again", after, "v0.3.0.post1", "v0.4.1", unsafe=True)
    assert again.status == "unchanged" and not by_code(again, "VM194")  # a second run changes nothing


def test_a_pin_goes_before_a_first_override_the_migration_edits_and_pins_every_default(tmp_path):
    # The first override is itself renamed (reward_model.reward_manager -> reward.reward_manager.name): the pin
    # goes before it, not into it, and every pinnable default is written; none is dropped or left unsaid.
    source = f"{PPO} \\\n    reward_model.reward_manager=naive \\\n    data.train_files=x.parquet \"$@\"\n"
    result = migrate(tmp_path, source, "v0.6.1", "v0.9.0", unsafe=True)
    after = result.after.decode()
    head, tail = after.split("reward.reward_manager.name=naive", 1)
    assert "reward_model.reward_manager" not in after and tail == " \\\n    data.train_files=x.parquet \"$@\"\n"
    for pinned in ("data.return_raw_chat=false", "actor_rollout_ref.rollout.max_num_seqs=1024",
                   "actor_rollout_ref.rollout.calculate_log_probs=false"):
        assert pinned in head
    [left] = by_code(result, "VM194")  # only what no pin can write: a value v0.9.0 refuses
    assert "1 default" in left.message and "rollout.mode sync -> async" in left.message
    assert subprocess.run(["bash", "-n"], input=result.after).returncode == 0
    (tmp_path / "again").mkdir()
    again = migrate(tmp_path / "again", after, "v0.6.1", "v0.9.0", unsafe=True)
    assert again.status == "unchanged"


def test_a_component_the_target_does_not_register_is_a_manual_step_though_the_migration_kept_it(tmp_path):
    # v0.7.1 -> v0.9.0: the legacy key becomes reward.reward_manager.name=prime, which v0.9.0's reward loop does
    # not register; the two runs do not differ (v0.7.1 refused it too), yet the migrated one stops at start-up.
    result = migrate(tmp_path, f"{PPO} reward_model.reward_manager=prime data.train_files=x.parquet\n", "v0.7.1",
                     "v0.9.0")
    (refused,) = by_code(result, "VM197")
    assert refused.severity == "manual" and refused.col == len(PPO) + 2
    assert "`reward.reward_manager.name=prime` names no reward-manager of verl v0.9.0" in refused.message
    assert "(verl v0.7.1 refused it too: the original did not run either)" in refused.message
    assert refused.hint.startswith("one of dapo, gdpo, naive, remote")
    # Where the range's table has its own word for the value (v0.7.1's value entry, VM162), it is said once.
    older = migrate(tmp_path, f"{PPO} reward_model.reward_manager=prime data.train_files=x.parquet\n", "v0.6.1",
                    "v0.9.0")
    assert not by_code(older, "VM197") and by_code(older, "VM162")


@pytest.mark.parametrize("unsafe", [False, True])
def test_defaults_with_no_place_for_a_pin_are_reported_as_a_step_by_hand_in_both_modes(tmp_path, unsafe):
    # The first override is removed (its span takes the place the pin would go): nothing is pinned, and the
    # finding does not say that --unsafe-fixes writes them.
    source = f"{PPO} \\\n    reward_model.launch_reward_fn_async=True \\\n    data.train_files=x.parquet \\\n    \"$@\"\n"
    result = migrate(tmp_path, source, "v0.7.0", "v0.9.0", unsafe=unsafe)
    assert b"launch_reward_fn_async" not in result.after and b"max_num_seqs" not in result.after
    (left,) = by_code(result, "VM194")
    assert "actor_rollout_ref.rollout.max_num_seqs 1024 -> 256" in left.message
    assert left.hint.startswith("set the old values on the command by hand") and "would write" in left.hint


def test_a_value_the_target_refuses_is_reported_never_pinned(tmp_path):
    # rollout.mode was sync before v0.6.0's async default; verl v0.9.0 registers only `async`.
    result = migrate(tmp_path, f"{PPO} data.train_files=x actor_rollout_ref.rollout.name=vllm\n", "v0.4.1",
                     "v0.9.0", unsafe=True)
    assert b"rollout.mode=" not in result.after
    [finding] = by_code(result, "VM194")
    assert "actor_rollout_ref.rollout.mode sync -> async" in finding.message
    assert "(verl v0.9.0 accepts only async)" in finding.message
    assert "entropy_coeff" not in finding.message  # pinned: it is an edit now, not a finding


def test_a_component_the_run_does_not_start_is_not_compared(tmp_path):
    # GRPO starts no critic (need_critic: critic.enable unset, adv_estimator != gae): its defaults train nothing.
    grpo = migrate(tmp_path, f"{PPO} algorithm.adv_estimator=grpo data.train_files=x\n", "v0.4.1", "v0.9.0")
    assert "critic." not in by_code(grpo, "VM194")[0].message
    (tmp_path / "gae").mkdir()
    gae = migrate(tmp_path / "gae", f"{PPO} algorithm.adv_estimator=gae data.train_files=x\n", "v0.4.1", "v0.9.0")
    assert "critic." in by_code(gae, "VM194")[0].message


def test_the_same_release_or_no_release_named_compares_nothing(tmp_path):
    source = f"{PPO} data.train_files=x\n"
    assert not by_code(migrate(tmp_path, source, "v0.9.0", "v0.9.0"), "VM194")
    assert not by_code(migrate(tmp_path, source, None, "v0.9.0"), "VM194")  # --from not given


def test_naming_the_oldest_release_compares_the_runs(tmp_path):
    # `--from v0.1` is the default's release too, but named it is what the files were written for: a v0.1
    # run trained with entropy_coeff 0.001 (0 from v0.4.0, #1100).
    baseline = load_builtin().releases[0]
    [finding] = by_code(migrate(tmp_path, f"{PPO} data.train_files=x\n", baseline, "v0.9.0"), "VM194")
    assert "actor_rollout_ref.actor.entropy_coeff 0.001 -> 0 (#1100)" in finding.message


def test_a_launch_whose_config_does_not_compose_says_so(tmp_path):
    result = migrate(tmp_path, f"{PPO} --config-path=./config --config-name=my_own data.train_files=x\n",
                     "v0.6.1", "v0.9.0")
    [note] = by_code(result, "VM196")
    assert note.severity == "info" and "does not compose at verl v0.6.1" in note.message


@pytest.mark.parametrize("unsafe", [False, True])
def test_the_cli_reports_or_pins(tmp_path, unsafe):
    (tmp_path / "run.sh").write_text(f"{PPO} \\\n    data.train_files=x \\\n    \"$@\"\n")
    args = ["--from", "v0.3.0.post1", "--to", "v0.4.1", "--check", *(["--unsafe-fixes"] if unsafe else []), tmp_path]
    proc = run_cli(*args)
    assert ("VM194 " in proc.stderr) is not unsafe
    assert proc.returncode == (1 if unsafe else 0), proc.stderr  # a pin is an edit: --check fails on it
    assert "1 default-pin" in proc.stderr if unsafe else "1 warning" in proc.stderr.splitlines()[-1]


def test_a_value_hydra_accepts_and_verl_refuses_is_a_manual_step(tmp_path):
    # A fork's `+actor_rollout_ref.rollout.mode=search` loses its `+` (the key exists at the target): Hydra
    # accepts it, and verl v0.9.0's RolloutConfig stops at "Unknown rollout mode" after the job has its GPUs.
    result = migrate(tmp_path, f"{PPO} +actor_rollout_ref.rollout.mode=search data.train_files=x\n", "v0.6.1", "v0.9.0")
    [finding] = by_code(result, "VM197")
    assert finding.severity == "manual"
    assert finding.message == ("actor_rollout_ref.rollout.mode=search: Hydra accepts it, but verl v0.9.0 stops at "
                               "start-up (verl v0.9.0 accepts only async)")


def test_a_name_that_now_selects_verls_own_component_is_said(tmp_path):
    # `remote` was no reward manager of verl v0.6.1 (a fork's own name); verl registers its own later.
    result = migrate(tmp_path, f"{PPO} reward_model.reward_manager=remote data.train_files=x\n", "v0.6.1", "v0.9.0")
    assert b"reward.reward_manager.name=remote" in result.after
    [finding] = by_code(result, "VM189")
    assert finding.severity == "warning"
    assert finding.message.startswith("reward.reward_manager.name=remote now selects verl's own reward-manager "
                                      "`remote` (")
    assert "which verl v0.6.1 did not have (it registered: " in finding.message
    (tmp_path / "naive").mkdir()
    naive = migrate(tmp_path / "naive", f"{PPO} reward_model.reward_manager=naive data.train_files=x\n", "v0.6.1",
                    "v0.9.0")
    assert not by_code(naive, "VM189")  # a name verl had all along


def test_pins_leave_hydras_flags_before_the_overrides(tmp_path):
    # Hydra's parser refuses an override before `--config-name` and another after it ("unrecognized arguments").
    from hydra._internal.utils import get_args_parser

    source = (f"{PPO} \\\n    --config-path=config \\\n    --config-name=ppo_trainer \\\n"
              "    data.train_files=x.parquet \\\n    \"$@\"\n")
    result = migrate(tmp_path, source, "v0.3.0.post1", "v0.4.1", unsafe=True)
    after = result.after.decode()
    assert after.index("--config-name=ppo_trainer") < after.index("actor_rollout_ref.actor.entropy_coeff=0.001")
    assert after.index("actor_rollout_ref.actor.entropy_coeff=0.001") < after.index("data.train_files=x.parquet")
    words = after.replace("\\\n", " ").split()[3:-1]  # the arguments after the module, `"$@"` left out
    parsed = get_args_parser().parse_args([w.strip("'") for w in words])
    assert parsed.config_name == "ppo_trainer" and "actor_rollout_ref.actor.entropy_coeff=0.001" in parsed.overrides


@pytest.mark.parametrize("text, pinned", [("cosine", True), ("1", False), ("1e-5", False), ("null", False),
                                          ("True", False), ("", False), ("a b", False)])
def test_a_string_default_is_pinned_only_as_a_string_hydra_reads_back(text, pinned):
    from migrator.rewrite.shell.effect import _pin_word
    from migrator.verdict.effective import Difference

    d = Difference("optim.lr_scheduler_type", "optim.lr_scheduler_type", text, "constant", "default", text)
    assert (_pin_word(d, "v0.9.0") is not None) is pinned


def test_what_a_rejected_override_selected_is_no_default_verl_changed(tmp_path):
    # verl main removed model_engine/mindspeed.yaml (#7374): Hydra rejects the selection, which is a manual
    # step of its own; the strategy and optimizer mindspeed selected are not "defaults left to verl".
    result = migrate(tmp_path, f"{PPO} model_engine=mindspeed data.train_files=x\n", "v0.9.0", "main")
    [manual] = by_code(result, "VM198")
    assert "model_engine=mindspeed" in manual.message
    said = " ".join(f.message for f in by_code(result, "VM194"))
    assert "model_engine" not in said and "actor.strategy" not in said and "optim.optimizer" not in said


def test_a_rejected_override_does_not_hide_the_defaults_verl_changed(tmp_path):
    result = migrate(tmp_path, f"{PPO} actor_rollout_ref.actor.no_such_knob=1 data.train_files=x\n",
                     "v0.3.0.post1", "v0.4.1")
    [finding] = by_code(result, "VM194")
    assert "actor_rollout_ref.actor.entropy_coeff 0.001 -> 0 (#1100)" in finding.message


LEGACY_REWARD = (f"{PPO} \\\n    reward_model.reward_manager=dapo \\\n    actor_rollout_ref.actor.grad_clip=0.5 \\\n"
                 "    data.train_files=x\n")


def test_a_legacy_reward_key_v071_still_read_is_renamed_and_the_run_is_the_same(tmp_path):
    # v0.7.1's main_ppo moved reward_model.reward_manager into reward.reward_manager.name (#5287); v0.9.0's
    # still declares the legacy node but no longer reads it (#6710): the rename keeps the run.
    result = migrate(tmp_path, LEGACY_REWARD, "v0.7.1", "v0.9.0")
    assert b"    reward.reward_manager.name=dapo \\\n" in result.after
    assert not by_code(result, "VM195")  # the comparison reads v0.7.1's run as main_ppo moved it


def test_a_key_accepted_and_no_longer_read_is_said_by_the_migration(tmp_path):
    result = migrate(tmp_path, LEGACY_REWARD, "v0.7.1", "v0.9.0")
    [finding] = by_code(result, "VM022")
    assert finding.severity == "warning" and finding.line == 3 and 6067 in finding.prs
    assert "`actor_rollout_ref.actor.grad_clip` is accepted by verl v0.9.0 but nothing reads it" in finding.message
    assert finding.hint == "set `actor_rollout_ref.actor.optim.clip_grad=0.5` instead"


def test_the_hint_for_an_unread_key_is_an_override_hydra_takes(tmp_path):
    # v0.9.0 reads reward.reward_kwargs, a node that declares no keys: the setting moves over as an add.
    result = migrate(tmp_path, f"{PPO} \\\n    +reward_model.reward_kwargs.max_resp_len=4096\n", "v0.7.1", "v0.9.0")
    [finding] = by_code(result, "VM022")
    assert finding.hint == "set `+reward.reward_kwargs.max_resp_len=4096` instead"


def test_a_key_already_unread_at_the_files_release_is_no_change_of_the_run(tmp_path):
    result = migrate(tmp_path, LEGACY_REWARD, "v0.8.0", "v0.9.0")  # grad_clip unread from v0.8.0 (#6067)
    assert not by_code(result, "VM022")
