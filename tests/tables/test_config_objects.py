"""mappings/verl/config-objects.yaml: verl's objects that carry its config, as data the Python provenance
rule reads; each name checked against the shipped module facts and config keys."""

from __future__ import annotations

import dataclasses
from functools import lru_cache

import pytest

from migrator.fileprocess import process_file
from migrator.mapping import compose, load_builtin
from migrator.mapping.config_objects import ConfigObjects
from migrator.mapping.load import TableError, builtin_mappings_dir, load_config_objects

BUCKET = "actor_rollout_ref.rollout.update_weights_bucket_megabytes"
NEW_BUCKET = "actor_rollout_ref.rollout.checkpoint_engine.update_weights_bucket_megabytes"


@lru_cache(maxsize=1)
def builtin():
    return load_builtin()


@lru_cache(maxsize=1)
def modules() -> dict:
    tables = builtin()
    return tables.facts.module_names(tuple(tables.releases))


def defined_somewhere(module: str, name: str) -> bool:
    return any(module in facts and facts[module].binds(name) for facts in modules().values())


def test_the_shipped_objects_are_loaded_with_the_tables():
    objects = builtin().config_objects
    assert "verl.trainer.main_ppo.run_ppo" in objects.takers
    assert objects.holders["verl.workers.fsdp_workers.CriticWorker"] == ("critic",)
    assert objects.holders["verl.trainer.ppo.ray_trainer.RayPPOTrainer"] == ()
    assert objects.classes["RolloutConfig"] == ("actor_rollout_ref", "rollout")


def test_every_callable_and_class_was_in_some_verl_release():
    objects = builtin().config_objects
    for qualified in sorted(objects.takers | set(objects.holders)):
        module, _, name = qualified.rpartition(".")
        assert defined_somewhere(module, name), qualified
    for name in objects.classes:
        assert any(facts[m].binds(name) for facts in modules().values() for m in facts
                   if m.startswith("verl.")), name


def test_every_node_is_a_node_of_verls_config():
    tables = builtin()
    nodes = set().union(*(tables.facts.nodes(r) for r in tables.releases if tables.facts.keys(r)))
    objects = tables.config_objects
    for node in [*objects.holders.values(), *objects.classes.values()]:
        assert node == () or ".".join(node) in nodes, node


def test_the_data_decides_which_objects_hold_verls_config():
    # Handed to run_ppo: renamed, because the data names run_ppo; with the data empty, reported instead.
    source = f"from verl.trainer.main_ppo import run_ppo\ndef f(cfg):\n    x = cfg.{BUCKET}\n    run_ppo(cfg)\n"
    tables = builtin()
    with_data = process_file("main.py", "main.py", compose(tables, None, "v0.9.0"), data=source.encode())
    assert NEW_BUCKET.encode() in with_data.after
    without = compose(dataclasses.replace(tables, config_objects=ConfigObjects()), None, "v0.9.0")
    result = process_file("main.py", "main.py", without, data=source.encode())
    assert result.status == "unchanged" and [f.code for f in result.findings] == ["VM115"]


@pytest.mark.parametrize("text, line, words", [
    ("takers: verl.x.f\n", 1, "takers: a list of dotted names"),
    ("takers: [verl.x.f]\nholders:\n  verl.x.C: 'a..b'\n", 3, "holders: 'verl.x.C': 'a..b' is not a name"),
    ("classes:\n  AlgoConfig: algorithm\n  verl.Bad: critic\n", 3, "classes: 'verl.Bad'"),
    ("owners: []\n", 1, "expected the mapping keys takers, holders and classes"),
])
def test_a_broken_file_names_its_line(tmp_path, text, line, words):
    path = tmp_path / "config-objects.yaml"
    path.write_text(text)
    with pytest.raises(TableError) as caught:
        load_config_objects(path, "mappings/verl/config-objects.yaml")
    assert caught.value.line == line and words in caught.value.message
    assert str(caught.value).startswith(f"mappings/verl/config-objects.yaml:{line}:")


def test_the_shipped_file_is_where_the_tables_are():
    assert (builtin_mappings_dir() / "verl" / "config-objects.yaml").is_file()
