"""Code reaches a rewriter only when it spells what an entry changes: a module's every component
(`from verl.workers import rollout`), and for a symbol, keyword or signature entry also the name it changes
(`TaskRunner`). A file that only imports such a module is never parsed; one that uses the name still gets
its edit. Parses are counted, not timed."""

from __future__ import annotations

import ast
import re
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from migrator.engine import RunOptions, run
from migrator.filekind import build_prefilter
from migrator.mapping import compose, load_builtin
from migrator.prefilter import Prefilter

MAPS = compose(load_builtin(), "v0.8.0", "v0.9.0")
CHECK = build_prefilter(MAPS)

# Each needs an edit or a report from the v0.9.0 table.
NEEDS_WORK = {
    "from_import.py": b"from verl.trainer.main_ppo import TaskRunner\n\nrunner = TaskRunner()\n",
    "alias.py": b"import verl.trainer.main_ppo as m\n\nrunner = m.TaskRunner\n",
    "package_alias.py": b"from verl.trainer import main_ppo\n\nrunner = main_ppo.TaskRunner\n",
}
# verl.trainer.main_ppo is named by symbol entries only: an import of it alone has nothing to rewrite.
IMPORT_ONLY = {
    "import_only.py": b"import verl.trainer.main_ppo\n\nprint(verl.trainer.main_ppo.__file__)\n",
    "from_other_name.py": b"from verl.trainer.main_ppo import main\n\nmain()\n",
    # Words that are last names of moved modules (verl.trainer.ppo.rollout), in code that never names verl.
    "words.py": b'def rollout_reward(config, critic):\n    return config.get("rollout.critic", critic)\n',
}


@pytest.fixture
def parses(monkeypatch):
    """The sources `ast.parse` saw (jobs=1: every rewriter runs in this process)."""
    seen: list[bytes] = []
    real = ast.parse

    def spy(source, *args, **kwargs):
        seen.append(source if isinstance(source, bytes) else str(source).encode())
        return real(source, *args, **kwargs)

    monkeypatch.setattr(ast, "parse", spy)
    return seen


def test_an_import_alone_is_never_parsed_and_a_use_still_gets_its_edit(tmp_path, parses):
    for name, source in {**NEEDS_WORK, **IMPORT_ONLY}.items():
        (tmp_path / name).write_bytes(source)
    results = {r.path.rsplit("/", 1)[-1]: r for r in run(RunOptions([str(tmp_path)], write=False, jobs=1), MAPS,
                                                         prefilter=CHECK)}
    for name in IMPORT_ONLY:
        assert results[name].status == "unchanged" and not results[name].findings, name
        assert IMPORT_ONLY[name] not in parses, name
    assert results["from_import.py"].after == NEEDS_WORK["from_import.py"].replace(b"main_ppo ", b"main_ppo_v0 ")
    for name in ("alias.py", "package_alias.py"):
        assert [f.kind for f in results[name].findings] == ["symbol-move"], name
        assert "verl.trainer.main_ppo_v0" in results[name].findings[0].message


def test_keyword_renames_are_parsed_only_with_the_function_and_the_keyword(parses):
    maps = compose(load_builtin(), "v0.3.0.post1", "v0.4.0")
    check = build_prefilter(maps)
    call = (b"from verl.trainer.ppo import core_algos\n"
            b"loss = core_algos.compute_entropy_loss(logits, eos_mask=mask)\n")
    from migrator.rewrite.python import locate

    # Every Python file naming verl passes the kind's prefilter (its imports are checked at the target,
    # `python.resolution`, without a parse); the rewriter's own gates decide what is parsed.
    assert check(call, "python")
    assert not check(call, "shell")  # a launch script must spell a whole token
    for unchanged in (call.replace(b"eos_mask", b"mask"), call.replace(b"compute_entropy_loss", b"my_loss")):
        assert locate(unchanged, maps).edits == () and parses == [], unchanged  # nothing to rename
    edits = locate(call, maps).edits
    assert [(call[e.start:e.end], e.replacement) for e in edits] == [(b"eos_mask", b"response_mask")]


CHECK_ALL = build_prefilter(compose(load_builtin(), "v0.1", "v0.9.0"))


@pytest.mark.parametrize("source", [
    b"from verl.trainer.ppo import rollout\n",
    b"from verl . trainer . ppo import rollout\n",  # legal Python: every component is still a whole name
    b"from verl.trainer.ppo import (\n    x,\n    rollout,\n)\n",
    b"import verl.trainer.ppo.rollout\n",
])
def test_split_module_names_pass_in_every_spelling(source):
    assert CHECK_ALL(source, "python") and CHECK_ALL(source, "notebook")


@pytest.fixture(params=["ahocorasick-rs", "re-trie"])
def engine_name(request, monkeypatch):
    if request.param == "re-trie":
        monkeypatch.setitem(sys.modules, "ahocorasick_rs", None)
    return request.param


GROUPS = (("verl", "workers", "rollout"), ("verl", "trainer", "main_ppo", "TaskRunner"))
TOKENS = ("actor_rollout_ref.actor.grad_clip", "recipe.vla")


def test_groups_need_every_name_whole(engine_name):
    check = Prefilter(TOKENS, GROUPS)
    assert check.engine == engine_name
    assert check(b"from verl.workers import rollout\n")
    assert check(b"x = 1  # recipe.vla\n")  # a token alone is enough
    assert not check(b"from verl.workers import rollouts\n")  # `rollout` is not a whole name there
    assert not check(b"import verl.trainer.main_ppo\n")
    assert check(b"import verl.trainer.main_ppo as m\nm.TaskRunner\n")
    assert not check(b"rollout workers TaskRunner main_ppo trainer\n")  # no `verl`: nothing imports it
    assert check.matches(b"verl.workers rollout recipe.vla") == [("recipe.vla", 21, 31)]  # tokens only


def test_groups_pickle():
    import pickle

    check = pickle.loads(pickle.dumps(Prefilter(TOKENS, GROUPS)))
    assert check.groups == Prefilter(TOKENS, GROUPS).groups and check(b"verl.workers.rollout")


NAMES = sorted({name for group in GROUPS for name in group})


def _fallback_prefilter() -> Prefilter:
    saved = sys.modules.get("ahocorasick_rs")
    sys.modules["ahocorasick_rs"] = None  # import fails: the pure-Python fallback
    try:
        return Prefilter(TOKENS, GROUPS)
    finally:
        if saved is None:
            del sys.modules["ahocorasick_rs"]
        else:
            sys.modules["ahocorasick_rs"] = saved


BOTH_ENGINES = (Prefilter(TOKENS, GROUPS), _fallback_prefilter())


@given(st.lists(st.sampled_from([*NAMES, *TOKENS, "x", "_", ".", " ", "\n", "verlx", "Runner"]), max_size=12))
def test_engines_match_a_whole_name_reference(words):
    data = "".join(words).encode()

    def whole(token):
        return re.search(rb"(?:(?<![A-Za-z0-9_])|(?<=\\[A-Za-z0-9_]))" + re.escape(token.encode())
                         + rb"(?![A-Za-z0-9_])", data) is not None

    expected = any(whole(t) for t in TOKENS) or any(all(whole(n) for n in g) for g in GROUPS)
    assert [check.engine for check in BOTH_ENGINES] == ["ahocorasick-rs", "re-trie"]
    assert [check(data) for check in BOTH_ENGINES] == [expected, expected]
