"""mappings/verl/layout.yaml against the shipped facts: each root, package, directory and config it names is
one verl has (the trees, the module facts, the entry points and the config key lists say so)."""

from __future__ import annotations

from functools import lru_cache

from migrator.layout import verl_layout
from migrator.mapping import load_builtin

LAYOUT = verl_layout()


@lru_cache(maxsize=1)
def tables():
    return load_builtin()


def release_paths() -> dict[str, frozenset[str]]:
    facts = tables().facts
    return {release: facts.paths(release) for release in tables().releases}


def test_every_root_is_a_top_level_directory_of_verl_and_the_trees_list_them_as_the_layout_says():
    tops = {path.split("/", 1)[0] for paths in release_paths().values() for path in paths}
    assert set(LAYOUT.roots) == tops
    for paths in release_paths().values():
        for path in paths:
            top = path.split("/", 1)[0]
            assert top in LAYOUT.trees_list_every_file or path.endswith((".py", ".sh")), path
    # The trees list other files of each root the layout says they list every file of.
    for root in LAYOUT.trees_list_every_file:
        assert any(p.startswith(f"{root}/") and not p.endswith((".py", ".sh"))
                   for paths in release_paths().values() for p in paths), root
    # The lint judges directories only where the trees list every file.
    assert set(LAYOUT.lint_judges_directories_under) <= set(LAYOUT.trees_list_every_file)


def test_the_script_roots_hold_verl_s_launch_scripts_and_the_packages_its_modules():
    paths = set().union(*release_paths().values())
    for root in LAYOUT.script_roots:
        assert any(p.startswith(f"{root}/") and p.endswith(".sh") for p in paths), root
    modules = tables().facts.module_names(tuple(tables().releases))
    tops = {module.split(".")[0] for names in modules.values() for module in names}
    assert tops == set(LAYOUT.packages)
    assert LAYOUT.config_classes_package in LAYOUT.packages


def test_the_ppo_trainer_composes_its_config_from_the_config_dir_in_every_release():
    facts = tables().facts
    for release in tables().releases:
        assert facts.entry_configs(release)[LAYOUT.ppo_module] == LAYOUT.ppo_config, release
        assert LAYOUT.ppo_script in facts.paths(release), release
    from migrator.verdict import release_configs

    for release in tables().releases:
        entry = release_configs(release).entry_by_module(LAYOUT.ppo_module)
        assert entry.config_path == LAYOUT.config_dir, release


def test_every_config_the_layout_names_ships_as_a_key_list_in_some_release():
    facts = tables().facts
    shipped = {config for release in tables().releases for config in facts.configs(release)}
    named = {LAYOUT.ppo_config, *LAYOUT.ppo_config_names, *LAYOUT.ppo_engines.values(), *LAYOUT.flat_configs}
    assert named <= shipped, named - shipped


def test_the_files_the_layout_points_to_are_the_ones_their_readers_read():
    from migrator.layout import layout_path

    directory = layout_path().parent
    assert {name: (directory / relative).exists() for name, relative in LAYOUT.files.items()} == \
        dict.fromkeys(LAYOUT.files, True)
    assert tables().facts.directory / "entry-points.yaml" == directory / LAYOUT.files["entry_points"]
    assert tables().facts.directory / "trees" == directory / LAYOUT.files["trees"]
