"""`release-notes`: golden guides from a fixed table set, valid Markdown tables and RST, built-in tables."""

from __future__ import annotations

import io
import json
import os

import pytest
from docutils.core import publish_doctree

from migrator import release_notes
from migrator.mapping import compose, load_builtin
from migrator.mapping.load import load_release_index
from tests.helpers import FIXTURES, run_cli
from tests.helpers.history import History

FIXTURES = FIXTURES / "release_notes"
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"


def fixture_guide(from_release="r0", to_release="r2"):
    tables = load_release_index(FIXTURES / "tables")
    return release_notes.build_guide(compose(tables, from_release, to_release))


def check_rst(text: str) -> None:
    """Build with docutils; any warning (level 2) or worse is a failure."""
    warnings = io.StringIO()
    publish_doctree(text, settings_overrides={"report_level": 2, "halt_level": 2, "warning_stream": warnings})
    assert warnings.getvalue() == ""


def markdown_tables(text: str) -> list[list[str]]:
    tables, current = [], []
    for line in text.splitlines():
        if line.startswith("|"):
            current.append(line)
        elif current:
            tables.append(current)
            current = []
    if current:
        tables.append(current)
    return tables


def cells(row: str) -> list[str]:
    """Split a GFM table row on unescaped pipes."""
    out, cell, i = [], "", 1
    while i < len(row) - 1:
        if row[i] == "\\" and row[i + 1] == "|":
            cell += "\\|"
            i += 2
            continue
        if row[i] == "|":
            out.append(cell)
            cell = ""
        else:
            cell += row[i]
        i += 1
    out.append(cell)
    return out


@pytest.mark.parametrize("fmt", ["md", "rst", "json"])
def test_golden(fmt):
    text = release_notes.render(fixture_guide(), fmt)
    golden = FIXTURES / f"r0-r2.{fmt}"
    if UPDATE:
        golden.write_text(text)
    assert text == golden.read_text()


def test_composed_chains_and_env_presets():
    guide = fixture_guide()
    renamed = {r["old"]: (r["new"], r["prs"]) for r in guide.rows["renamed_keys"]}
    assert renamed["actor_rollout_ref.rollout.skip_rollout"] == ("skip.rollout.enable", [101, 201])
    assert renamed["trainer.old_logger.*"] == ("trainer.logger.*", [102])
    moved = {r["old"]: r for r in guide.rows["moved_scripts"]}
    npu = moved["examples/grpo_trainer/run_qwen3-8b_npu.sh"]
    assert npu["new"] == "examples/grpo_trainer/run_qwen3_8b_fsdp.sh"
    assert npu["run"] == "DEVICE=npu bash examples/grpo_trainer/run_qwen3_8b_fsdp.sh trainer.n_gpus_per_node=16"
    assert npu["prs"] == [103, 202]


def test_a_rename_that_is_a_manual_step_in_some_files_says_so_in_every_format():
    guide = release_notes.build_guide(compose(load_builtin(), "v0.5.0", "v0.6.0"))
    (row,) = [r for r in guide.rows["renamed_keys"] if r["old"] == "actor_rollout_ref.profiler.discrete"]
    assert row["new"] == "actor_rollout_ref.actor.profiler.tool_config.nsys.discrete"
    assert row["unless"].startswith("on Ascend NPUs the flag drove the NPU profiler")
    assert not [r for r in guide.rows["renamed_keys"] if r["old"] == "actor_rollout_ref.profiler.all_ranks"][0].get(
        "unless")
    proc = run_cli("release-notes", "--from", "v0.5.0", "--to", "v0.6.0")
    line = next(x for x in proc.stdout.splitlines() if x.startswith("| `actor_rollout_ref.profiler.discrete`"))
    assert "nsys.discrete` (a manual step instead: on Ascend NPUs" in line


def test_python_names_and_keywords_are_composed_with_every_pr():
    guide = fixture_guide()
    names = {r["old"]: (r["new"], r["hint"], r["prs"]) for r in guide.rows["python_names"]}
    assert names["verl.workers.rollout.utils:get_free_port"] == ("verl.utils.net:free_port", "", [105, 209])
    assert names["verl.utils.net:get_free_port"] == ("verl.utils.net:free_port", "", [209])
    assert names["verl.trainer.ppo.reward:compute_reward"] == (None, "the reward loop computes rewards", [210])
    keywords = {(r["function"], r["old"]): (r["new"], r["prs"]) for r in guide.rows["keyword_renames"]}
    assert keywords[("verl.trainer.ppo.core_algos:compute_policy_loss", "eos_mask")] == ("response_mask", [106, 211])
    assert guide.rows["signature_changes"] == [{"function": "verl.experimental.agent_loop:AgentLoopBase.run",
                                        "param": "messages", "prs": [212],
                                        "hint": "run(self, sampling_params, **kwargs) gets the messages as "
                                                "kwargs['raw_prompt']"}]
    text = release_notes.render(guide, "md")
    assert "### Renamed keyword arguments" in text and "### Signature changes to make by hand" in text
    assert ("| `verl.workers.rollout.utils.get_free_port` | `verl.utils.net.free_port` | — | "
            "[#105](https://github.com/verl-project/verl/pull/105), [#209](https://github.com/verl-project/verl/pull/209) |"
            ) in text


def test_markdown_tables_have_consistent_columns_and_escaped_pipes():
    text = release_notes.render(fixture_guide(), "md")
    tables = markdown_tables(text)
    assert len(tables) >= 5
    for table in tables:
        widths = {len(cells(row)) for row in table}
        assert len(widths) == 1, table
    assert "run\\_rm.sh \\| the reward loop" in text or "run_rm.sh \\| the reward loop" in text


def test_every_entry_links_its_pr():
    text = release_notes.render(fixture_guide(), "md")
    for pr in (101, 102, 103, 104, 105, 106, 201, 202, 203, 204, 205, 206, 207, 208, 209, 210, 211, 212):
        assert f"https://github.com/verl-project/verl/pull/{pr})" in text


def test_rst_builds_without_warnings():
    check_rst(release_notes.render(fixture_guide(), "rst"))


def test_rst_check_can_fail():
    from docutils.utils import SystemMessage

    with pytest.raises(SystemMessage):
        check_rst("Title\n===\n\n.. list-table::\n\n   * - a\n   * - b\n     - c\n")


def test_json_is_structured():
    data = json.loads(release_notes.render(fixture_guide(), "json"))
    assert data["counts"] == {"moved_scripts": 2, "removed_scripts": 1, "renamed_keys": 3, "removed_keys": 2,
                              "other_changes": 4, "python_names": 3, "keyword_renames": 2, "signature_changes": 1,
                              "entry_points": 0, "configs": 0, "config_values": 0, "key_scopes": 0, "left_alone": 1}
    assert [p["number"] for p in data["pull_requests"]] == sorted(p["number"] for p in data["pull_requests"])
    assert data["upgrade"] == ["pip install verl-migrate", "verl-migrate --to r2 ./my_scripts"]


def test_pr_titles_and_dates_from_one_git_log(tmp_path):
    h = History(tmp_path)
    h.write("a", "1")
    h.commit("[trainer] feat: top-level skip config (#201)")
    h.write("a", "2")
    h.commit("[cfg] fix: drop load_weight (#204)")
    h.write("a", "3")
    h.commit("unrelated (#999)")
    found = release_notes.pull_request_index(h.repo, "HEAD", {201, 204, 7})
    assert found[201].title == "[trainer] feat: top-level skip config"
    assert found[204].date == "2026-01-02"
    assert set(found) == {201, 204}
    guide = fixture_guide()
    guide.pull_requests.update(found)
    md = release_notes.render(guide, "md")
    assert "| [#204](https://github.com/verl-project/verl/pull/204) | [cfg] fix: drop load\\_weight | 2026-01-02 |" in md
    check_rst(release_notes.render(guide, "rst"))


def test_builtin_tables_render_every_release():
    tables = load_builtin()
    ranges = [*zip(tables.releases, tables.releases[1:]), (tables.releases[0], tables.releases[-1])]
    for lo, hi in ranges:
        guide = release_notes.build_guide(compose(tables, lo, hi))
        for fmt in ("md", "json"):
            assert release_notes.render(guide, fmt)
        check_rst(release_notes.render(guide, "rst"))


def release_notes_cli(*args):
    return run_cli("release-notes", *args)


def test_cli_defaults_from_to_the_previous_release(tmp_path):
    releases = load_builtin().releases
    out = tmp_path / "notes.md"
    proc = release_notes_cli("--to", releases[-2], "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert out.read_text().startswith(f"# Migrating from verl {releases[-3]} to {releases[-2]}\n")


def test_cli_errors_exit_2(tmp_path):
    proc = release_notes_cli("--to", "v0.1")
    assert proc.returncode == 2 and "no earlier release" in proc.stderr
    proc = release_notes_cli("--to", "v9.9.9")
    assert proc.returncode == 2 and "unknown release" in proc.stderr
    proc = release_notes_cli("--to", "v0.8.0", "--repo", str(tmp_path))
    assert proc.returncode == 2 and "not a git repository" in proc.stderr
    for p in (proc,):
        assert "Traceback" not in p.stderr


def test_moved_scripts_say_whether_each_move_trains_what_the_old_script_trained():
    # A release index whose facts prove one move the same, one different, one not at all
    # (tests/fixtures/tables/script_moves_releases/): presets select a variant only where the move is the same.
    index = FIXTURES.parent / "tables" / "script_moves_releases"
    guide = release_notes.build_guide(compose(load_release_index(index), "v0.7.1", "v0.8.0"))
    moved = {r["old"]: r for r in guide.rows["moved_scripts"]}
    assert moved["examples/run_same_old.sh"]["trains"] == "same"
    dapo = moved["examples/run_dapo.sh"]
    assert dapo["verdict"] == "differs"
    assert dapo["trains"] == ("differs: 8 settings (data.train_files, reward.reward_manager.name, "
                              "actor_rollout_ref.actor.clip_ratio_c, and 5 more)")
    assert dapo["differences"][0] == {"key": "data.train_files", "old": "$HOME/data/dapo-math-17k.parquet",
                                      "new": "$HOME/data/gsm8k/train.parquet"}
    unknown = moved["examples/run_unknown.sh"]
    assert (unknown["verdict"], unknown["trains"]) == (
        "unproven", "unproven (no training command recorded for the old script)")
    text = release_notes.render(guide, "md")
    assert "environment presets select the variant the old script ran" not in text
    assert ("| `examples/run_dapo.sh` | `examples/run_gsm8k.sh` | `NNODES=4 bash examples/run_gsm8k.sh` | differs: 8 "
            "settings (data.train\\_files, reward.reward\\_manager.name, actor\\_rollout\\_ref.actor.clip\\_ratio\\_c, "
            "and 5 more) |") in text
    check_rst(release_notes.render(guide, "rst"))
