"""Golden fixtures for `defaults:` items naming a config verl renamed (migrator/rewrite/yaml/defaults.py).

`NAME.FROM-TO.in.yaml` is copied to a directory of its own and migrated FROM -> TO with the built-in tables;
the result must equal `NAME.FROM-TO.out.yaml` (no `.out` file: nothing may change), the findings must equal
`NAME.FROM-TO.findings`, and a second run must change nothing. `shadowed.*` gets a
`ppo_megatron_trainer.yaml` beside it: Hydra finds the user's file first, so nothing is renamed.
"""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from migrator.fileprocess import process_file
from migrator.mapping import compose, load_builtin
from tests.helpers import FIXTURES

FIXTURES = FIXTURES / "yaml_defaults"
CASES = sorted(FIXTURES.glob("*.in.yaml"))


@functools.lru_cache(maxsize=None)
def mappings(releases: str):
    old, new = releases.split("-")
    return compose(load_builtin(), old, new)


def _migrate(path: Path, releases: str):
    return process_file(str(path), str(path), mappings(releases))


@pytest.mark.parametrize("case", CASES, ids=[p.name.split(".in.")[0] for p in CASES])
def test_golden(case, tmp_path):
    stem = case.name.split(".in.")[0]
    releases = stem.split(".", 1)[1]
    path = tmp_path / "config.yaml"
    path.write_bytes(case.read_bytes())
    if stem.startswith("shadowed."):
        (tmp_path / "ppo_megatron_trainer.yaml").write_text("trainer: {total_epochs: 1}\n")
    out = FIXTURES / f"{stem}.out.yaml"
    result = _migrate(path, releases)
    assert result.status in ("changed", "unchanged"), result.reason
    if out.exists():
        assert result.status == "changed"
        assert result.after.decode() == out.read_text()
    else:
        assert result.status == "unchanged", result.after.decode()
    findings = FIXTURES / f"{stem}.findings"
    assert [f.format().split(":", 1)[1] for f in result.findings] == \
        (findings.read_text().splitlines() if findings.exists() else [])
    if out.exists():
        path.write_bytes(result.after)
        assert _migrate(path, releases).status == "unchanged"


def test_a_defaults_list_of_a_file_migrated_from_memory_is_not_renamed():
    """No real file: its directory cannot be checked for a config of the same name."""
    case = FIXTURES / "megatron.v0.7.0-v0.8.0.in.yaml"
    name = "/nonexistent-directory/config.yaml"
    result = process_file(name, name, mappings("v0.7.0-v0.8.0"), data=case.read_bytes())
    assert result.status == "unchanged"
    assert [f.kind for f in result.findings] == ["config-name-move"]
