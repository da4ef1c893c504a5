"""Users' functions that verl calls, whose expected signature changed: a custom reward function that
takes neither `extra_info` nor `**kwargs` (v0.3.0.post1, #266), from the shipped table's
`signature-change` entry with `callback:`."""

from __future__ import annotations

from functools import lru_cache

import pytest

from migrator.filekind import build_prefilter
from migrator.fileprocess import process_file
from migrator.mapping import compose, load_builtin
from migrator.mapping.load import TableError, load_table


@lru_cache(maxsize=None)
def builtin(from_release=None, to_release="v0.9.0"):
    return compose(load_builtin(), from_release, to_release)


def reported(source: str, from_release=None, name="reward.py"):
    maps = builtin(from_release)
    result = process_file(name, name, maps, prefilter=build_prefilter(maps), data=source.encode())
    assert result.status == "unchanged"
    return [(f.line, f.col, f.code, f.message, f.hint, f.prs) for f in result.findings]


HINT = ("a custom reward function (custom_reward_function.name, default compute_score) is called as "
        "compute_score(data_source=, solution_str=, ground_truth=, extra_info=): add extra_info=None "
        "(or **kwargs) to its parameters")


def test_a_reward_function_without_extra_info_is_reported_at_its_def():
    source = "import re\n\n\ndef compute_score(data_source, solution_str, ground_truth):\n    return 1.0\n"
    assert reported(source) == [(4, 1, "VM127", "`compute_score(data_source, solution_str, ground_truth)` has the "
                                 "shape of a function verl calls in place of "
                                 "verl.utils.reward_score:_default_compute_score; since v0.3.0.post1 verl passes it "
                                 "extra_info=..., which it does not take (no `extra_info`, no `**kwargs`)",
                                 HINT, (266,))]


@pytest.mark.parametrize("source", [
    # a name the config gives it (custom_reward_function.name): the shape decides, not the name
    "def my_reward(data_source, solution_str, ground_truth, method='strict'):\n    pass\n",
    "async def compute_score(data_source, solution_str, ground_truth):\n    pass\n",
    "try:\n    import sympy\nexcept ImportError:\n    def compute_score(data_source, solution_str, ground_truth):\n"
    "        pass\n",
])
def test_other_spellings_of_the_shape_are_reported(source):
    assert [code for _, _, code, *_ in reported(source)] == ["VM127"]


@pytest.mark.parametrize("source", [
    "def compute_score(data_source, solution_str, ground_truth, extra_info=None):\n    pass\n",
    "def compute_score(data_source, solution_str, ground_truth, **kwargs):\n    pass\n",
    "def compute_score(data_source, solution_str, ground_truth, *, extra_info):\n    pass\n",
    "def compute_score(solution_str, ground_truth):\n    pass\n",  # verl's own scorers' shape, called by verl's code
    "def compute_score(data_sources, solution_strs, ground_truths, extra_infos):\n    pass\n",  # batched
    "class Scorer:\n    def compute_score(self, data_source, solution_str, ground_truth):\n        pass\n",
    "def outer():\n    def compute_score(data_source, solution_str, ground_truth):\n        pass\n",
    "def f(data_source, solution_str):\n    ground_truth = 1\n",
])
def test_functions_that_take_it_or_are_not_called_by_verl_are_left_alone(source):
    assert reported(source) == []


def test_not_reported_when_the_range_starts_after_the_change():
    assert reported("def compute_score(data_source, solution_str, ground_truth):\n    pass\n",
                    from_release="v0.3.0.post1") == []


def test_markdown_examples_are_not_checked():
    block = "```python\ndef compute_score(data_source, solution_str, ground_truth):\n    pass\n```\n"
    assert reported(block, name="README.md") == []


def test_the_call_of_verls_own_function_with_extra_info_is_no_finding():
    assert reported("from verl.utils.reward_score import _default_compute_score\n"
                    "s = _default_compute_score(data_source=d, solution_str=s, ground_truth=g, extra_info=e)\n",
                    name="user.py") == []


def test_callback_must_be_a_list_of_parameter_names(tmp_path):
    bad = tmp_path / "t.yaml"
    bad.write_text("release: v0.3.0.post1\nentries:\n  - kind: signature-change\n    function: a.b:c\n"
                   "    param: extra_info\n    callback: data_source\n    hint: h\n    pr: 1\n")
    with pytest.raises(TableError, match="callback must be a non-empty list"):
        load_table(bad)
