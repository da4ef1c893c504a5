"""`module-removal`: a module verl stopped shipping (VLA left for the verl-vla repository in v0.8.0, #6162).

A move composed with a later removal must never rewrite to the module that is gone: every use becomes a
manual step with the hint, while a migration that stops before the removal still moves the module.
"""

from __future__ import annotations

import textwrap

import pytest

from migrator.fileprocess import process_file
from migrator.mapping import TableError, compose, load_builtin, load_table
from migrator.shims.plan import plan_shims

TABLES = load_builtin()
TO_MAIN = compose(TABLES)
TO_V071 = compose(TABLES, from_release="v0.7.0", to_release="v0.7.1")


def _run(source: str, name: str, maps):
    return process_file(name, name, maps, data=source.encode())


def test_a_move_then_a_removal_composes_to_a_removal_with_the_hint():
    change = TO_MAIN.module("recipe.vla.main_ppo")
    assert change.new is None and "verl-vla" in change.hint
    assert [e.pr for e in change.entries] == [4795, 6162]
    assert TO_V071.module("recipe.vla.main_ppo").new == "verl.experimental.vla.main_ppo"


@pytest.mark.parametrize("source", [
    "from recipe.vla import main_ppo\n",
    "import recipe.vla.main_ppo\nrecipe.vla.main_ppo.run()\n",
    "import verl.experimental.vla as vla\n",
    "from recipe import vla\n",
    'import runpy\nrunpy.run_module("recipe.vla.main_ppo")\n',
    'import subprocess\nsubprocess.run("python3 -m recipe.vla.main_ppo x=1", shell=True)\n',
])
def test_python_uses_become_manual_steps(source):
    result = _run(source, "launch.py", TO_MAIN)
    assert result.status == "unchanged", result.after
    kinds = [f.kind for f in result.findings]
    assert "module-removal" in kinds, result.findings
    assert all("verl-vla" in (f.hint or "") for f in result.findings if f.kind == "module-removal")


def test_python_still_moves_the_module_when_the_migration_stops_before_the_removal():
    result = _run("from recipe.vla import main_ppo\n", "launch.py", TO_V071)
    assert result.after == b"from verl.experimental.vla import main_ppo\n"


def test_shell_dash_m_becomes_a_manual_step_and_comments_are_left_alone():
    source = "# see python3 -m recipe.vla.main_ppo\npython3 -m recipe.vla.main_ppo trainer.n_gpus_per_node=8\n"
    result = _run(source, "run.sh", TO_MAIN)
    assert result.status == "unchanged"
    assert [(f.line, f.kind) for f in result.findings] == [(2, "module-removal")]
    moved = _run(source, "run.sh", TO_V071)
    assert moved.after.count(b"verl.experimental.vla.main_ppo") == 2


def test_shims_write_a_failing_stub_with_the_hint_for_a_removed_module():
    plan = plan_shims(TO_MAIN, TABLES.releases)
    [stub] = [f for f in plan.files if f.old == "recipe.vla"]
    assert (stub.relpath, stub.kind, stub.new) == ("recipe/vla/__init__.py", "removed-module-stub", None)
    assert b"raise ImportError(" in stub.content and b"verl-vla" in stub.content
    assert not [f for f in plan.files if f.old.startswith("recipe.vla.")]


def test_a_table_moving_a_module_into_one_it_removes_is_refused(tmp_path):
    table = tmp_path / "t.yaml"
    table.write_text(textwrap.dedent("""\
        entries:
          - {kind: module-move, old: a.b, new: c.d, pr: 1}
          - {kind: module-removal, old: c.d, hint: gone, pr: 1}
    """))
    with pytest.raises(TableError) as err:
        load_table(table)
    assert "renames into something this table removes" in str(err.value)
