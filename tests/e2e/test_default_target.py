"""`--to` defaults to the newest release tag the shipped tables know (releases.yaml: the last release not
listed as `unreleased`), for the rewrite, lint and `mappings show`; `main`, verl's unreleased tip, is asked
for by name."""

from __future__ import annotations

import json

from migrator.mapping.load import load_builtin
from tests.helpers import REPO, run_cli, yaml_data

INDEX = yaml_data(REPO / "mappings" / "verl" / "releases.yaml")
NEWEST = [r for r in INDEX["releases"] if r not in INDEX["unreleased"]][-1]
# Moved in v0.9.0 (verl#6097), so both a v0.9.0 and a main user get the edit.
SCRIPT = "python3 -m verl.trainer.main_ppo actor_rollout_ref.rollout.skip.enable=True\n"


def test_the_default_target_is_the_newest_release_tag_of_the_index():
    assert INDEX["unreleased"] == ["main"] and INDEX["releases"][-1] == "main"
    assert NEWEST == "v0.9.0" == load_builtin().newest_release


def test_the_rewrite_goes_to_the_newest_release_unless_main_is_named(tmp_path):
    (tmp_path / "run.sh").write_text(SCRIPT)
    proc = run_cli("--check", tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.splitlines()[-1].startswith(f"v0.1 -> {NEWEST}: 1 file would change")
    report = json.loads(run_cli("--check", "--output-format", "json", tmp_path).stdout)
    assert report["to"] == NEWEST
    named = run_cli("--check", "--to", "main", tmp_path)
    assert named.stderr.splitlines()[-1].startswith("v0.1 -> main: 1 file would change")


def test_lint_and_mappings_show_default_to_the_newest_release(tmp_path):
    (tmp_path / "run.sh").write_text(SCRIPT)
    lint = run_cli("lint", "--output-format", "json", tmp_path)
    assert {f["message"] for f in json.loads(lint.stdout)} and f"verl {NEWEST}" in run_cli("lint", tmp_path).stderr
    show = json.loads(run_cli("mappings", "show", "--output-format", "json").stdout)
    assert (show["from"], show["to"]) == ("v0.1", NEWEST)
    assert json.loads(run_cli("mappings", "show", "--to", "main", "--output-format", "json").stdout)["to"] == "main"


def test_every_to_option_says_its_default():
    for command in ([], ["migrate"], ["lint"], ["mappings", "show"]):
        out = " ".join(run_cli(*command, "--help").stdout.split())
        assert "(default: the newest release tag; the unreleased tip by name: main)" in out, command
