"""PR references of another repository (`repo: verl-recipe` entries) link to that repository everywhere:
the run's JSON, the text report's links and the release notes."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys

from migrator.mapping import compose, load_builtin
from migrator.pulls import PullRef, pr_label, pr_url
from migrator.release_notes import build_guide, render


def test_a_pull_ref_keeps_its_repository():
    ref = PullRef(8, "verl-recipe")
    assert ref == PullRef(8, "verl-recipe") and ref != 8 and 8 != ref and PullRef(8) == 8
    assert len({ref, 8}) == 2 and pickle.loads(pickle.dumps(ref)).repo == "verl-recipe"
    assert hash(PullRef(8)) == hash(8) and 8 in {PullRef(8)} and len({PullRef(8), 8}) == 1
    assert pr_url(ref) == "https://github.com/verl-project/verl-recipe/pull/8"
    assert (pr_label(ref), pr_label(4795)) == ("verl-recipe#8", "#4795")


def test_release_notes_link_verl_recipe_prs_to_verl_recipe():
    guide = build_guide(compose(load_builtin(), "v0.7.0", "v0.7.1"))
    notes = render(guide, "md")
    assert "[verl-recipe#8](https://github.com/verl-project/verl-recipe/pull/8)" in notes
    assert "https://github.com/verl-project/verl/pull/8)" not in notes
    pulls = {p["url"] for p in json.loads(render(guide, "json"))["pull_requests"]}
    assert "https://github.com/verl-project/verl-recipe/pull/18" in pulls
    assert "https://github.com/verl-project/verl/pull/18" not in pulls


def test_a_runs_json_names_the_other_repository(tmp_path):
    (tmp_path / "run.sh").write_text("python3 -m recipe.gkd.main_gkd --config-path recipe/gkd/config x=1\n")
    out = subprocess.run([sys.executable, "-m", "migrator", str(tmp_path), "--from", "v0.7.0", "--to", "v0.7.1",
                          "--check", "--output-format", "json"], capture_output=True, text=True)
    edits = json.loads(out.stdout)["files"][0]["edits"]
    assert [e["prs"] for e in edits] == [["verl-recipe#8"], ["verl-recipe#8"]]


def test_mappings_show_names_the_other_repository():
    shown = subprocess.run([sys.executable, "-m", "migrator", "mappings", "show", "--from", "v0.7.0", "--to", "v0.7.1"],
                           capture_output=True, text=True).stdout
    assert "recipe.gkd.megatron.main_gkd" in shown and "[verl-recipe#8]" in shown
    rows = json.loads(subprocess.run([sys.executable, "-m", "migrator", "mappings", "show", "--from", "v0.7.0",
                                      "--to", "v0.7.1", "--output-format", "json"],
                                     capture_output=True, text=True).stdout)["entries"]
    assert any(row["prs"] == ["verl-recipe#8"] for row in rows)
