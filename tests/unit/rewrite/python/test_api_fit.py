"""Uses of a moved or keyword-renamed name that its target does not support (VM129, rewrite/python/api_fit.py):
calls, tuple unpacking and members of instances, judged on the shapes of tests/fixtures/api_fit/facts."""

from __future__ import annotations

import dataclasses
from functools import lru_cache

import pytest

from migrator.fileprocess import process_file
from migrator.mapping import compose
from migrator.mapping.apifacts import Params
from migrator.mapping.facts import ReleaseFacts
from migrator.mapping.load import load_release_index
from tests.helpers.rewrite import FIXTURES, TEST_RELEASES

TABLE = FIXTURES / "tables" / "api_fit.yaml"
GOLDEN = sorted((FIXTURES / "api_fit").glob("*.in.py"))


@lru_cache(maxsize=1)
def mappings():
    tables = dataclasses.replace(load_release_index(TEST_RELEASES), facts=ReleaseFacts(FIXTURES / "api_fit" / "facts"))
    return compose(tables, None, "v0.9.0", [TABLE])


def run(source: str):
    return process_file("user.py", "user.py", mappings(), data=source.encode())


def mismatches(source: str) -> list[str]:
    found = [f for f in run(source).findings if f.kind == "api-mismatch"]
    assert all(f.code == "VM129" and f.severity == "manual" for f in found)
    return [f.format().split(":", 1)[1] for f in found]


@pytest.mark.parametrize("path", GOLDEN, ids=[p.name for p in GOLDEN])
def test_golden(path):
    result = run(path.read_text())
    assert result.after.decode() == path.with_name(path.name.replace(".in.", ".out.")).read_text()
    expected = path.with_name(path.name.split(".in.")[0] + ".findings").read_text().splitlines()
    assert [f.format().split(":", 1)[1] for f in result.findings] == expected
    assert all(f.severity == "manual" for f in result.findings if f.kind == "api-mismatch")


@pytest.mark.parametrize("source", [
    # the call fits the target: positional count within reach, keywords it has, `**kw` absorbing the rest
    "from verl.utils.rollout_skip import RolloutSkip\nRolloutSkip(a, b)\n",
    "from verl.workers.old import loose\nloose(1, b=2, zz=3)\nloose(1)\n",
    # the use did not fit the source either: a fork's own name, not what the facts describe
    "from verl.utils.rollout_skip import RolloutSkip\nRolloutSkip(a, b, c)\nRolloutSkip(extra=1, config=a, rollout_wg=b)\n",
    "from verl.trainer.ppo.core_algos import compute_policy_loss\na, b = compute_policy_loss(*args)\n",
    # unknown target shape: a base class from outside verl, or unknown members and constructor
    "from verl.workers.old import Open\no = Open(1, 2, 3)\no.run()\nx = Open(1)\nx.run()\n",
    # the name is bound again in the file: no longer provably verl's
    "from verl.utils.rollout_skip import RolloutSkip\nRolloutSkip = make()\nRolloutSkip(config=1, rollout_wg=2)\n",
    # an argument list the call does not spell: a missing argument is not provable
    "from verl.utils.rollout_skip import RolloutSkip\nRolloutSkip(**kwargs)\n",
    # the instance is assigned twice, or is a parameter too: `x.member` may be something else
    "from verl.utils.rollout_skip import RolloutSkip\ns = RolloutSkip(a, b)\ns = other\ns.dump()\n",
    "from verl.utils.rollout_skip import RolloutSkip\ndef f(s):\n    s = RolloutSkip(a, b)\n    s.dump()\n",
    # unknown arity at the target, or a length the source did not return either
    "from verl.workers.old import loose\na, b, c = loose(1)\n",
    "from verl.trainer.ppo.core_algos import compute_policy_loss\na, b = compute_policy_loss(o, n, a, m, 0.1)\n",
])
def test_no_finding_where_the_facts_do_not_prove_a_mismatch(source):
    assert mismatches(source) == []


@pytest.mark.parametrize(("source", "expected"), [
    ("from verl.workers.old import loose\nloose(1, 2, 3)\n",
     ["2:1: loose(...): verl.workers.new.loose at v0.9.0 takes (a,**kw) (at v0.8.0: (a,/,b,*args,c=,**kw)), "
      "and this call passes 3 positional arguments where it takes at most 1; change this call by hand [verl#7]"]),
    ("from verl.workers.old import loose\nx, y = loose(1, 2)\n",
     ["2:8: loose(...): verl.workers.new.loose at v0.9.0 takes (a,**kw) (at v0.8.0: (a,/,b,*args,c=,**kw)), "
      "and this call passes 2 positional arguments where it takes at most 1; change this call by hand [verl#7]"]),
    ("from verl.utils.rollout_skip import RolloutSkip as RS\nimport os\ns = RS(a, b)\nprint(s.try_load())\n",
     ["4:9: s.try_load: s is a RS, and verl.utils.skip.rollout_skip.RolloutSkip at v0.9.0 has no try_load "
      "(it had at v0.8.0); change this code by hand (read_dumped_data and wrap_generate_sequences are gone) "
      "[verl#6097]"]),
])
def test_findings_at_the_use(source, expected):
    assert mismatches(source) == expected


def test_a_parameter_list_says_what_a_call_does_that_it_refuses():
    params = Params.parse("(a,/,b,*args,c=,d,**kw)")
    assert params.misfit(1, ("b", "d"), complete=True) == []
    assert params.misfit(0, ("a", "b", "d"), complete=True) == ["leaves out the required a"]
    strict = Params.parse("(a,b=,*,c)")
    assert strict.misfit(3, ("c",), complete=True) == ["passes 3 positional arguments where it takes at most 2"]
    assert strict.misfit(1, ("z",), complete=False) == ["passes z=, which it has no parameter for"]
    assert strict.misfit(1, (), complete=True) == ["leaves out the required c"]
    assert Params.parse("?") is None


def test_the_finding_has_its_code_for_every_kind_that_can_leave_such_a_use():
    from migrator.mapping.kinds import KINDS, finding_code

    assert finding_code("api-mismatch", "manual") == "VM129"
    for kind in ("symbol-move", "symbol-rename", "module-move", "keyword-rename"):
        assert "VM129" in {code.code for code in KINDS[kind].codes}, kind
