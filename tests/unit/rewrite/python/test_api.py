"""Python rewriter, verl's API: symbols moved or renamed in imports, attribute chains and strings, keyword
renames at call sites that provably reach the function, and the signature changes a person must make.

The test releases (tests/fixtures/tables/rewriters_releases) plus tests/fixtures/tables/python_api.yaml."""

from __future__ import annotations

import ast
from functools import lru_cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from migrator.fileprocess import process_file
from migrator.mapping import compose
from migrator.mapping.load import load_release_index
from tests.helpers.rewrite import FIXTURES, TEST_RELEASES

API_TABLE = FIXTURES / "tables" / "python_api.yaml"
GOLDEN = sorted((FIXTURES / "python_api").glob("*.in.py"))


@lru_cache(maxsize=1)
def mappings():
    return compose(load_release_index(TEST_RELEASES), None, "v0.9.0", [API_TABLE])


def run(source: str):
    return process_file("user.py", "user.py", mappings(), data=source.encode())


def check_transformed(before: str, after: str) -> None:
    result = run(before)
    assert result.status == "changed", (result.status, result.reason, result.findings)
    assert result.after.decode() == after
    compile(result.after, "user.py", "exec")
    assert run(result.after.decode()).status == "unchanged"


def check_noop(source: str) -> None:
    result = run(source)
    assert result.status == "unchanged", (result.reason, result.after)


def findings(source: str) -> list[str]:
    return [f.format().split(":", 1)[1] for f in run(source).findings]


@pytest.mark.parametrize(("before", "after"), [
    # a symbol moved: the import names its new module
    ("from verl.workers.fsdp_workers import ActorRolloutRefWorker\n",
     "from verl.workers.engine_workers import ActorRolloutRefWorker\n"),
    # renamed in the same module: the local name stays
    ("from verl.utils.torch_functional import get_eos_mask\nm = get_eos_mask(x)\n",
     "from verl.utils.torch_functional import get_response_mask as get_eos_mask\nm = get_eos_mask(x)\n"),
    ("from verl.utils.torch_functional import get_eos_mask as gm\n",
     "from verl.utils.torch_functional import get_response_mask as gm\n"),
    # moved and renamed, `as` name kept
    ("from verl.workers.rollout.utils import is_valid_ipv6_address as v6\n",
     "from verl.utils.net_utils import is_ipv6 as v6\n"),
    # split: two names go to different modules (indentation and line ending kept)
    ("from verl.workers.rollout.utils import get_free_port, run_server\n",
     "from verl.utils.net_utils import get_free_port\nfrom verl.workers.rollout.utils import run_server\n"),
    ("try:\r\n    from verl.workers.rollout.utils import (\r\n        run_server as rs,\r\n        get_free_port,\r\n    )"
     "  # ports\r\nexcept ImportError:\r\n    pass\r\n",
     "try:\r\n    from verl.workers.rollout.utils import run_server as rs\r\n"
     "    from verl.utils.net_utils import get_free_port  # ports\r\nexcept ImportError:\r\n    pass\r\n"),
    # module move carries the symbols; a symbol entry of the moved module renames on top
    ("from verl.utils.old_reward_score.gsm8k import compute_score, extract\n",
     "from verl.utils.reward_score.gsm8k import compute_gsm8k_score as compute_score, extract\n"),
    # attribute chains through module aliases
    ("import verl.utils.torch_functional as F\nm = F.get_eos_mask(x)\n",
     "import verl.utils.torch_functional as F\nm = F.get_response_mask(x)\n"),
    ("import verl.utils.torch_functional\nm = verl.utils.torch_functional.get_eos_mask(x)\n",
     "import verl.utils.torch_functional\nm = verl.utils.torch_functional.get_response_mask(x)\n"),
    ("from verl.utils import torch_functional as tf\nm = tf.get_eos_mask(x)\n",
     "from verl.utils import torch_functional as tf\nm = tf.get_response_mask(x)\n"),
    ("import verl.utils.old_reward_score.gsm8k as g\ns = g.compute_score(a, b)\n",
     "import verl.utils.reward_score.gsm8k as g\ns = g.compute_gsm8k_score(a, b)\n"),
    # strings: entry points and dotted names
    ('fn = "verl.utils.torch_functional:get_eos_mask"\n', 'fn = "verl.utils.torch_functional:get_response_mask"\n'),
    ('cfg = {"_target_": "verl.workers.fsdp_workers.ActorRolloutRefWorker"}\n',
     'cfg = {"_target_": "verl.workers.engine_workers.ActorRolloutRefWorker"}\n'),
    ('m = importlib.import_module("verl.utils.old_reward_score.gsm8k")\n',
     'm = importlib.import_module("verl.utils.reward_score.gsm8k")\n'),
    # keyword renames where the call reaches the function
    ("from verl.trainer.ppo.core_algos import compute_policy_loss\nl = compute_policy_loss(a, eos_mask=m)\n",
     "from verl.trainer.ppo.core_algos import compute_policy_loss\nl = compute_policy_loss(a, response_mask=m)\n"),
    ("import verl.trainer.ppo.core_algos as ca\nl = ca.compute_policy_loss(a, eos_mask=m)\n",
     "import verl.trainer.ppo.core_algos as ca\nl = ca.compute_policy_loss(a, response_mask=m)\n"),
    ("import verl.trainer.ppo.core_algos\nl = verl.trainer.ppo.core_algos.compute_policy_loss(eos_mask=m)\n",
     "import verl.trainer.ppo.core_algos\nl = verl.trainer.ppo.core_algos.compute_policy_loss(response_mask=m)\n"),
])
def test_transformed(before, after):
    check_transformed(before, after)


@pytest.mark.parametrize("source", [
    # a same-named function of the user's own: never the table's
    "def compute_policy_loss(a, eos_mask=None):\n    return a\n\nl = compute_policy_loss(1, eos_mask=2)\n",
    "from my_lib import compute_policy_loss\nl = compute_policy_loss(1, eos_mask=2)\n",
    "from verl.trainer.ppo.core_algos import compute_policy_loss\n"
    "def compute_policy_loss(a, eos_mask=None):\n    return a\nl = compute_policy_loss(1, eos_mask=2)\n",
    "from verl.trainer.ppo.core_algos import compute_value_loss\nl = compute_value_loss(eos_mask=2)\n",
    "import verl.utils.torch_functional as F\nm = F.masked_mean(x)\n",
    "from verl.utils.torch_functional import masked_mean\n",
    "from .torch_functional import get_eos_mask\n",
    "get_eos_mask = lambda x: x\nm = get_eos_mask(1)\n",
    'name = "verl.utils.torch_functional.get_eos_mask_v2"\n',
    "class Loop:\n    async def run(self, messages, sampling_params):\n        return messages\n",
])
def test_noop(source):
    check_noop(source)


def test_removed_module_is_reported_with_its_hint():
    assert findings("from verl.trainer.fsdp_sft_trainer import FSDPSFTTrainer\n") == [
        "1:6: `from verl.trainer.fsdp_sft_trainer import ...`: verl.trainer.fsdp_sft_trainer was removed; "
        "change this code by hand (use verl.trainer.sft_trainer) [verl#5382]"]
    assert run("from verl.trainer.fsdp_sft_trainer import FSDPSFTTrainer\n").status == "unchanged"


def test_removed_module_with_a_moved_symbol_moves_it_and_reports_the_rest():
    result = run("from verl.workers.fsdp_workers import ActorRolloutRefWorker, CriticWorker\n")
    assert result.after.decode() == ("from verl.workers.engine_workers import ActorRolloutRefWorker\n"
                                     "from verl.workers.fsdp_workers import CriticWorker\n")
    assert [f.kind for f in result.findings] == ["module-removal"]
    assert "verl.workers.fsdp_workers.CriticWorker was removed" in result.findings[0].message


def test_removed_symbol_is_reported_never_edited():
    result = run("from verl.trainer.ppo.ray_trainer import RayPPOTrainer, compute_reward\n")
    assert result.status == "unchanged"
    assert [(f.kind, f.hint) for f in result.findings] == [("symbol-removal", "rewards are computed by the reward loop")]
    result = run("import verl.trainer.ppo.ray_trainer as rt\nrt.compute_reward(batch)\n")
    assert result.status == "unchanged" and [f.kind for f in result.findings] == ["symbol-removal"]


def test_symbol_moved_out_of_an_aliased_module_is_reported():
    result = run("import verl.workers.rollout.utils as ru\nport = ru.get_free_port()\n")
    assert result.status == "unchanged"
    assert [f.message for f in result.findings] == [
        "verl.workers.rollout.utils.get_free_port moved to verl.utils.net_utils.get_free_port; "
        "import it from verl.utils.net_utils"]


def test_signature_changes_are_reported_where_provable():
    source = ("from verl.experimental.agent_loop.agent_loop import AgentLoopBase\n"
              "from verl.trainer.ppo.ray_trainer import RayPPOTrainer\n"
              "class Loop(AgentLoopBase):\n    async def run(self, messages, sampling_params):\n        pass\n"
              "t = RayPPOTrainer(config, reward_fn=rf)\n")
    assert findings(source) == [
        "4:25: Loop.run overrides verl.experimental.agent_loop.agent_loop:AgentLoopBase.run, whose parameter "
        "messages is gone; change this method by hand (run(self, sampling_params, **kwargs) gets the messages "
        "as kwargs['raw_prompt']) [verl#2810]",
        "6:27: verl.trainer.ppo.ray_trainer:RayPPOTrainer(..., reward_fn=...): reward_fn was removed; change this "
        "call by hand (configure the reward manager in the config instead) "
        "[verl#5237]"]
    assert run(source).status == "unchanged"


def test_signature_change_needs_the_class_from_verl():
    check_noop("class AgentLoopBase:\n    pass\nclass Loop(AgentLoopBase):\n    async def run(self, messages):\n"
               "        pass\n")
    check_noop("from verl.trainer.ppo.ray_trainer import RayPPOTrainer\nt = RayPPOTrainer(config, tokenizer=tok)\n")


def test_split_that_would_lose_a_comment_is_a_manual_step():
    result = run("from verl.workers.rollout.utils import (  # helpers\n    get_free_port,\n    run_server,\n)\n")
    assert result.status == "unchanged"
    assert "split this import by hand" in result.findings[0].message


@pytest.mark.parametrize("path", GOLDEN, ids=[p.name for p in GOLDEN])
def test_golden(path):
    result = run(path.read_text())
    out = path.with_name(path.name.replace(".in.", ".out."))
    expected = out.read_text() if out.exists() else path.read_text()
    assert (result.after or path.read_bytes()).decode() == expected
    expected_findings = path.with_name(path.name.split(".in.")[0] + ".findings").read_text().splitlines()
    assert [f.format().split(":", 1)[1] for f in result.findings] == expected_findings
    if out.exists():
        compile(result.after, path.name, "exec")
        assert run(result.after.decode()).status == "unchanged"


@lru_cache(maxsize=None)
def builtin(from_release: str, to_release: str):
    from migrator.mapping import load_builtin

    return compose(load_builtin(), from_release, to_release)


@pytest.mark.parametrize("from_release, to_release, source, kind, pr", [
    ("v0.7.0", "v0.7.1", "from verl.trainer.fsdp_sft_trainer import FSDPSFTTrainer\n", "module-removal", 5382),
    ("v0.7.0", "v0.7.1", 'subprocess.run(["python3", "-m", "verl.trainer.fsdp_sft_trainer", "x=1"])\n',
     "module-removal", 5382),
    ("v0.7.0", "v0.7.1", "from verl.trainer.ppo.ray_trainer import RayPPOTrainer\n"
     "trainer = RayPPOTrainer(config=cfg, tokenizer=tok, val_reward_fn=fn)\n", "signature-change", 5237),
    ("v0.5.0", "v0.6.0", "from verl.experimental.agent_loop import AgentLoopBase\n"
     "class MyLoop(AgentLoopBase):\n    async def run(self, messages, sampling_params):\n        pass\n",
     "signature-change", 2810),
    ("v0.5.0", "v0.6.0", "from verl.experimental.agent_loop.agent_loop import AgentLoopBase\n"
     "class MyLoop(AgentLoopBase):\n    async def run(self, messages, sampling_params):\n        pass\n",
     "signature-change", 2810),
    ("v0.7.0", "v0.7.1", "from verl.trainer.ppo.ray_trainer import RayPPOTrainer\n"
     "trainer = RayPPOTrainer(config=cfg, tokenizer=tok, reward_fn=fn)\n", "signature-change", 5237),
    # a custom reward function: verl passes extra_info since v0.3.0.post1; the file imports nothing of verl
    ("v0.2.0.post2", "v0.3.0.post1", "def compute_score(data_source, solution_str, ground_truth):\n    return 1.0\n",
     "signature-change", 266),
])
def test_builtin_tables_report_the_known_breaks(from_release, to_release, source, kind, pr):
    result = process_file("user.py", "user.py", builtin(from_release, to_release), data=source.encode())
    assert result.status == "unchanged"
    assert [(f.kind, f.prs) for f in result.findings] == [(kind, (pr,))]


def test_builtin_tables_rename_eos_mask_and_move_workers():
    source = ("from verl.trainer.ppo import core_algos\nfrom verl.workers.fsdp_workers import ActorRolloutRefWorker\n"
              "adv = core_algos.compute_gae_advantage_return(token_level_rewards=r, values=v, eos_mask=m, gamma=1.0,"
              " lam=1.0)\n")
    result = process_file("user.py", "user.py", builtin("v0.3.0.post1", "v0.9.0"), data=source.encode())
    assert result.after.decode() == source.replace("eos_mask=", "response_mask=").replace(
        "verl.workers.fsdp_workers", "verl.workers.engine_workers")


def test_bare_module_names_outside_imports_keep_the_fast_front_end():
    """`actor`, `utils`, `math` are last names of modules verl moved: inside an f-string or an identifier
    they must not send the file to libcst (that made a 170-file corpus 40x slower)."""
    from migrator.rewrite.python.ast_front import locate_ast
    from migrator.rewrite.python.statements import might_change

    maps = builtin("v0.1", "v0.9.0")
    source = (b"import math\nclass T:\n    def f(self, datasets):\n"
              b"        print(f\"{self.actor_rollout_wg} {math.pi} utils reward\")\n")
    assert might_change(source, maps)
    result = locate_ast(source, maps)
    assert result is not None and not result.edits and not result.findings


# Names imported from modules of the table (moved, renamed, with keyword renames or signature changes) and
# their uses: calls with keywords, subclasses, module aliases. The walk is skipped where only names without
# keyword or signature entries are imported (their moves are the import's); the result must not change.
_API_PIECES = [
    "from verl.workers.rollout.utils import get_free_port, is_valid_ipv6_address\n",
    "port = get_free_port(host='x')\n",
    "from verl.trainer.ppo.core_algos import compute_policy_loss\n",
    "loss = compute_policy_loss(eos_mask=m, logits=l)\n",
    "from verl.experimental.agent_loop.agent_loop import AgentLoopBase\n",
    "class Loop(AgentLoopBase):\n    def __init__(self, c):\n        super().__init__(dataset_config=c)\n"
    "    async def run(self, messages, sampling_params):\n        pass\n",
    "from verl.trainer.ppo.ray_trainer import RayPPOTrainer, compute_reward\n",
    "class T(get_free_port, RayPPOTrainer):\n    def __init__(self, reward_fn=None):\n        pass\n",
    "t = RayPPOTrainer(config=c, reward_fn=f)\n",
    "import verl.workers.rollout.utils as ru\n",
    "p = ru.get_free_port()\n",
    "from verl.utils.torch_functional import get_eos_mask\n",
    "mask = get_eos_mask(response_id=r, eos_token=2)\n",
    "get_free_port = 1\n",
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_API_PIECES), min_size=1, max_size=6))
def test_the_api_walk_is_skipped_only_where_it_finds_nothing(pieces):
    from migrator.rewrite.python.api import locate_api

    source = "".join(pieces).encode()
    assert locate_api(source, mappings()) == _walked_for_every_binding(source, mappings())


def _walked_for_every_binding(source: bytes, maps):
    """The API pass without the skip: every file that binds a name of the table's modules is walked."""
    from migrator.rewrite.python import api

    if not api._may_use(source, maps):
        return [], []
    tree = ast.parse(source)
    bindings = api._Bindings(tree, api._api_modules(maps))
    if not bindings.modules and not bindings.names:
        return [], []
    walker = api._ApiWalker(source, maps, bindings)
    walker.walk(tree)
    return walker.edits, walker.findings


def test_a_name_changes_calls_when_a_keyword_or_signature_entry_reaches_it():
    maps = mappings()
    assert maps.changes_calls("verl.trainer.ppo.core_algos:compute_policy_loss")  # a keyword rename
    assert maps.changes_calls("verl.trainer.ppo.ray_trainer:RayPPOTrainer")  # a signature change
    assert maps.changes_calls("verl.experimental.agent_loop.agent_loop:AgentLoopBase")  # a method's, a keyword
    assert not maps.changes_calls("verl.workers.rollout.utils:get_free_port")  # moved, nothing else
    assert not maps.changes_calls("verl.trainer.ppo.ray_trainer:compute_reward")  # removed
    assert not maps.changes_calls("os:getcwd")
