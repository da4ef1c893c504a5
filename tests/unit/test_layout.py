"""migrator/layout.py: verl's layout read from mappings/verl/layout.yaml, checked on load (file:line errors)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from migrator.layout import DISPLAY, LayoutError, layout_path, load_layout, verl_layout
from migrator.mapping.load import TableError


def test_the_built_in_layout_is_read_once_and_derives_what_the_code_matches():
    layout = verl_layout()
    assert verl_layout() is layout
    assert layout.ppo_launch.search(b"$HOME/verl/" + layout.ppo_script.encode())
    assert layout.ppo_launch.search(b"-m " + layout.ppo_module.encode()[:-1]) is None
    assert layout.config_dir_pattern.fullmatch(f"../../{layout.config_dir}/")
    assert layout.config_dir_pattern.fullmatch("pkg://" + layout.config_dir)  # `pkg://` spelt with slashes
    assert layout.config_dir_pattern.fullmatch("config") is None  # a fork's own config directory
    assert layout.relative_config_dirs == {b"config", b"./config"}  # beside the PPO trainer's module
    assert layout.generated_config.match(f"{layout.config_dir}/{layout.generated_config_prefix}ppo_trainer.yaml")


@pytest.fixture
def layout_copy(tmp_path):
    """A copy of the shipped layout beside the files it names (empty), and a way to edit one of its lines."""
    path = tmp_path / "layout.yaml"
    shutil.copy(layout_path(), path)
    for relative in verl_layout().files.values():
        target = tmp_path / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.touch()

    def edited(old: str, new: str) -> Path:
        text = path.read_text(encoding="utf-8")
        assert text.count(old) == 1, old
        path.write_text(text.replace(old, new), encoding="utf-8")
        return path

    return path, edited


def _line(path: Path, text: str) -> int:
    return next(n for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if line.startswith(text))


def test_a_copy_of_the_shipped_layout_loads_as_the_same_layout(layout_copy):
    path, _ = layout_copy
    assert load_layout(path, DISPLAY) == verl_layout()


@pytest.mark.parametrize("old, new, at, message", [
    ("roots: [verl, recipe, examples]", "roots: [verl, recipe, examples]\ncolour: red", "colour: red",
     "unknown field 'colour'"),
    ("packages: [verl, recipe]", "packages: [verl, recipes]", "packages:", "packages: 'recipes' is not one of the roots"),
    ("  module: verl.trainer.main_ppo", "  module: trainer.main_ppo", "  module:",
     "ppo.module: 'trainer.main_ppo' is not in one of the packages"),
    ("  config: ppo_trainer  #", "  config: sft_trainer  #", "  config: sft_trainer",
     "ppo.config: 'sft_trainer' is not one of ppo.config_names"),
    ("    dp: ppo_trainer", "    dp: [ppo_trainer]", "    dp:", "ppo.engines.dp: ['ppo_trainer'] is not a name"),
    ("  trees: facts/trees", "  trees: facts/forest", "  trees:", "files.trees: facts/forest does not exist beside"),
    ("config_dir: verl/trainer/config", "config_dir: /verl/trainer/config", "config_dir:",
     "config_dir: '/verl/trainer/config' is not a relative path"),
    ("flat_configs: [ppo_trainer, ppo_megatron_trainer]", "flat_configs: [ppo_trainer, ppo_trainer]", "flat_configs:",
     "flat_configs: a name is listed twice"),
    ("script_roots: [examples, recipe]", "script_roots: [examples, recipe", "trees_list_every_file:", "not YAML"),
])
def test_a_broken_layout_is_reported_at_its_line(layout_copy, old, new, at, message):
    _, edited = layout_copy
    path = edited(old, new)
    with pytest.raises(LayoutError) as caught:
        load_layout(path, DISPLAY)
    assert isinstance(caught.value, TableError)  # reported like a broken table (exit 2), never a traceback
    assert str(caught.value).startswith(f"{DISPLAY}:{_line(path, at)}: {message}"), str(caught.value)


def test_a_missing_field_is_named(layout_copy):
    _, edited = layout_copy
    path = edited("generated_config_prefix: _generated_\n", "")
    with pytest.raises(LayoutError, match="missing field 'generated_config_prefix'"):
        load_layout(path, DISPLAY)
