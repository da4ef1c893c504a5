"""`audit` fails when a change removes a `@hydra.main` entry point that no table entry covers."""

from __future__ import annotations

import pytest

from migrator import audit
from migrator.mapping import load_table
from tests.helpers.history import History, base_config

HYDRA_MAIN = ('import hydra\n\n\n@hydra.main(config_path="config", config_name="{config}", version_base=None)\n'
              'def main(config):\n    pass\n')


@pytest.fixture(scope="module")
def verl(tmp_path_factory) -> History:
    h = History(tmp_path_factory.mktemp("verl"))
    h.config(base_config())
    h.write("verl/trainer/main_ppo.py", HYDRA_MAIN.format(config="ppo_trainer"))
    h.write("verl/trainer/my_sft_trainer.py", HYDRA_MAIN.format(config="sft_trainer"))
    h.write("verl/trainer/helpers.py", "def helper():\n    return 1\n")
    h.write("tests/trainer/test_main.py", HYDRA_MAIN.format(config="test"))
    h.commit("base")
    h.tag("v1")
    h.rm("verl/trainer/my_sft_trainer.py")
    h.rm("verl/trainer/helpers.py")
    h.rm("tests/trainer/test_main.py")
    h.commit("[trainer] refactor: drop my_sft_trainer (#77)")
    h.tag("v2")
    return h


def test_removed_entry_point_without_an_entry_fails(verl):
    result = audit.audit(verl.repo, "v1", "v2", [])
    assert result.entry_points == ["verl.trainer.my_sft_trainer"]  # not helpers.py, not tests/
    assert not result.ok and result.uncovered_entry_points == ["verl.trainer.my_sft_trainer"]
    assert "entry point removed: verl.trainer.my_sft_trainer" in audit.format_report(result)


@pytest.mark.parametrize("entry", [
    {"kind": "entry-point-move", "old": "verl.trainer.my_sft_trainer", "new": "verl.trainer.main_ppo",
     "old-config": "sft_trainer", "new-config": "ppo_trainer", "keys": [], "pr": 77},
    {"kind": "entry-point-removal", "old": "verl.trainer.my_sft_trainer", "hint": "use main_ppo", "pr": 77},
])
def test_an_entry_point_entry_covers_it(verl, tmp_path, entry):
    import yaml

    table = tmp_path / "t.yaml"
    table.write_text(yaml.safe_dump({"release": "main", "entries": [entry]}, sort_keys=False))
    result = audit.audit(verl.repo, "v1", "v2", list(load_table(table).entries))
    assert result.uncovered_entry_points == []
