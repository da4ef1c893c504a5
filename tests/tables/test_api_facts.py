"""The shipped signatures of verl's moved names (facts/api/signatures.yaml) match the tables: every name the
tables move or rename a keyword of is in the file and nothing else is, each shape reads, and the cases that
call for the check (docs/python-api.md, "Uses the target does not support") are what the facts say."""

from __future__ import annotations

import pytest

from migrator.mapping import load_builtin
from migrator.mapping.apifacts import API_FACTS, parse_shape, referenced_symbols, shape_at
from migrator.mapping.facts import load_shipped_yaml
from migrator.mapping.modulefacts import expand_runs, read_module_facts

TABLES = load_builtin()
RELEASES = tuple(TABLES.releases)
SHAPES = load_shipped_yaml(TABLES.facts.directory / API_FACTS)["symbols"]


def test_the_file_holds_exactly_the_names_the_tables_reference():
    modules = read_module_facts(TABLES.facts.directory / "modules" / "verl.modules", list(RELEASES))
    assert set(SHAPES) == referenced_symbols(TABLES, modules)
    assert len(SHAPES) > 100


@pytest.mark.parametrize("symbol", sorted(SHAPES))
def test_each_shape_reads_and_each_release_has_at_most_one(symbol):
    seen = []
    for run in SHAPES[symbol]:
        assert parse_shape(run) is not None, run
        seen += expand_runs(run["releases"], list(RELEASES))
    assert len(seen) == len(set(seen)), symbol


def test_the_cases_the_check_exists_for():
    before = shape_at(SHAPES, "verl.utils.rollout_skip:RolloutSkip", "v0.8.0", RELEASES)
    after = shape_at(SHAPES, "verl.utils.skip.rollout_skip:RolloutSkip", "v0.9.0", RELEASES)
    assert before.signature == "(config,rollout_wg)" and after.signature == "(local_config,global_config)"
    assert "wrap_generate_sequences" in before.members and "wrap_generate_sequences" not in after.members
    loss = "verl.trainer.ppo.core_algos:compute_policy_loss"
    assert shape_at(SHAPES, loss, "v0.3.0.post1", RELEASES).returns == 3
    assert shape_at(SHAPES, loss, "v0.9.0", RELEASES).returns == 4
    seed_before = shape_at(SHAPES, "verl.workers.megatron_workers:set_random_seed", "v0.7.1", RELEASES)
    seed_after = shape_at(SHAPES, "verl.workers.engine.megatron.utils:set_random_seed", "v0.9.0", RELEASES)
    assert "only_rollout" in seed_before.params.positional and seed_after.signature == "(seed)"


def _writer():
    import importlib.util

    from tests.helpers import REPO

    spec = importlib.util.spec_from_file_location("extract_api_signatures", REPO / "scripts" / "extract_api_signatures.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


BASE = b"""\
class Base:
    def __init__(self, cfg, *, name=None):
        self.cfg = cfg

    def run(self):
        pass
"""
CHILD = b"""\
import torch
from dataclasses import dataclass

from verl.base import Base


class Child(Base):
    flag = True

    def go(self):
        self.done = True


class Open(torch.nn.Module):
    def __init__(self, a, b=1):
        pass


@dataclass
class Data:
    a: int
    b: int = 0


def loss(x, /, y, *rest, z=0, **kw):
    def inner():
        return 1, 2, 3
    if x:
        return x, y
    return y, x


def lazy(x):
    yield x, x
"""


def test_the_writer_reads_parameters_members_and_returned_lengths_with_verl_bases():
    release = _writer().Release({"verl.base": ("b", False), "verl.child": ("c", False)}, {"b": BASE, "c": CHILD})
    assert release.shape("verl.child:Child") == {"class": "(cfg,*,name=)", "members": "cfg done flag go run"}
    assert release.shape("verl.child:Open") == {"class": "(a,b=)", "members": "?"}  # torch's members are unknown
    assert release.shape("verl.child:Data") == {"class": "(a,b=)", "members": "a b"}
    assert release.shape("verl.child:loss") == {"function": "(x,/,y,*rest,z=,**kw)", "returns": 2}
    assert release.shape("verl.child:lazy") == {"function": "(x)"}  # a generator: no tuple length
    assert release.shape("verl.child:Base") == release.shape("verl.base:Base")  # an import followed
    assert release.shape("verl.child:missing") is None
