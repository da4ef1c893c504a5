"""A script whose only old token is a value default's (`main_ppo`, with `--from`) is planned without the
full walk (`DefaultEdits.plan_alone`): whatever the script, that plan is the walk's, edit for edit and
finding for finding; a script holding any other old token gets the walk."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from migrator.edits import SourceNotParsed
from migrator.filekind import ALL_ENTRIES, DEFAULTS_ALONE
from migrator.fileprocess import process_file
from migrator.rewrite.shell import locator
from migrator.tablecache import composed

MAPPINGS, PREFILTER = composed("v0.5.0", "v0.9.0", ())
FIXTURES = Path(__file__).parents[3] / "fixtures"


def both_plans(source: bytes):
    """The walk's plan and the plan of defaults alone: each a LocateResult, or the reason it parsed none."""
    maps = MAPPINGS.for_file(source)

    def plan(view):
        try:
            return locator.locate(source, view)
        except SourceNotParsed as exc:
            return str(exc)

    return plan(maps), plan(maps.defaults_alone())


# Overrides of keys no table changes, and the words around a launch that decide where a default goes.
argument = st.sampled_from([
    "trainer.nnodes=1", "data.train_batch_size=8", '"trainer.logger=[console,wandb]"', "'data.max_prompt_length=512'",
    "trainer.experiment_name=${NAME}_x", '"$@"', "$@", '"${ARGS[@]}"', "$EXTRA", "--config-name=ppo_trainer",
    "-cn ppo_megatron_trainer", "--config-path=$PWD/conf", "actor_rollout_ref.rollout.name=sglang",
    "+trainer.my_flag=1", "--max_steps 3", "2>&1", "| tee log.txt", "# main_ppo note",
])
entry = st.sampled_from(["python3 -m verl.trainer.main_ppo", "python -m verl.trainer.main_ppo",
                         "python3 $VERL/verl/trainer/main_ppo.py", "torchrun --nproc_per_node 2 -m verl.trainer.main_ppo",
                         "python3 -m verl.trainer.main_ppo_fork", "python3 -m my.main_ppo"])


@st.composite
def launch(draw) -> str:
    args = draw(st.lists(argument, max_size=5))
    if draw(st.booleans()):
        return draw(entry) + "".join(" \\\n    " + a for a in args) + "\n"
    return " ".join([draw(entry), *args]) + "\n"


@st.composite
def fragment(draw) -> str:
    pick = draw(st.integers(0, 9))
    body = draw(launch())
    if pick == 0:
        return f"train() {{\n    {body}}}\ntrain trainer.nnodes=2\n"
    if pick == 1:
        return f'OUT=$({body.strip()})\necho "$OUT"\n'
    if pick == 2:
        return f'bash -c "{body.strip()}"\n'
    if pick == 3:
        return f'if [ -n "$X" ]; then\n  {body}fi\n'
    if pick == 4:
        return f"# {body}"
    if pick == 5:
        return 'echo "run verl.trainer.main_ppo next"\n'
    if pick == 6:
        return f'CMD="{body.strip()}"\n$CMD data.seed=1\n'
    if pick == 7:
        return f"for i in 1 2; do\n  {body}done\n"
    if pick == 8:
        return body.replace("\n", "\r\n")
    return body


# A launch that always gets the default: with it in a script, equal plans cannot be two empty ones.
PLAIN_LAUNCH = "python3 -m verl.trainer.main_ppo trainer.nnodes=1\n"


@settings(max_examples=300, deadline=None)
@given(st.lists(fragment(), min_size=1, max_size=4), st.booleans())
def test_the_plan_of_defaults_alone_is_the_walks(fragments, with_plain_launch):
    source = ("#!/bin/bash\nset -x\n" + (PLAIN_LAUNCH if with_plain_launch else "") + "".join(fragments)).encode()
    assume(PREFILTER.scope(source, "shell") != ALL_ENTRIES)  # a script holding another token is walked
    full, alone = both_plans(source)
    assert alone == full
    if with_plain_launch:
        assert any(e.kind == "value-default" and e.start == len("#!/bin/bash\nset -x\n") + len(PLAIN_LAUNCH) - 1
                   for e in full.edits)


SCRIPTS = sorted(p for p in FIXTURES.rglob("*") if p.suffix in (".sh", ".bash"))


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_every_fixture_script_gets_the_same_plan_either_way_where_it_holds_no_other_token(path):
    source = path.read_bytes()
    if PREFILTER.scope(source, "shell") == ALL_ENTRIES:
        pytest.skip("holds an old token: always walked")
    full, alone = both_plans(source)
    assert alone == full


def test_the_scope_is_what_decides_the_walk(monkeypatch, tmp_path):
    """A launch holding an old key is walked (its key renamed); a launch holding none is not, and gets the
    default all the same."""
    plain = b"#!/bin/bash\npython3 -m verl.trainer.main_ppo \\\n    trainer.nnodes=1\n"
    old = b"#!/bin/bash\npython3 -m verl.trainer.main_ppo \\\n    trainer.npu_profile.options.level=level1\n"
    assert PREFILTER.scope(plain, "shell") == DEFAULTS_ALONE and PREFILTER.scope(old, "shell") == ALL_ENTRIES
    walked = []  # the locator's walks (the review's own walk plans no defaults)
    real_walk = locator.ScriptWalker.walk
    monkeypatch.setattr(locator.ScriptWalker, "walk",
                        lambda self: (self.defaults is not None and walked.append(1)) or real_walk(self))
    for name, source in (("plain.sh", plain), ("old.sh", old)):
        (tmp_path / name).write_bytes(source)
    result = process_file(str(tmp_path / "plain.sh"), "plain.sh", MAPPINGS, PREFILTER)
    assert not walked
    assert [e.kind for e in result.edits] == ["value-default"]
    assert result.after.endswith(b"    trainer.nnodes=1 \\\n    actor_rollout_ref.rollout.name=vllm\n")
    result = process_file(str(tmp_path / "old.sh"), "old.sh", MAPPINGS, PREFILTER)
    assert walked == [1]
    assert "key-rename" in [e.kind for e in result.edits]


def test_a_python_heredoc_is_still_handed_to_the_python_rewriter():
    """The Python rewriter judges a heredoc's program by its own tokens (an import of verl's), which the
    shell prefilter does not search for: such a script is walked."""
    source = (b"#!/bin/bash\npython3 - <<'PY'\nimport verl.trainer.main_ppo\nPY\n"
              b"python3 -m verl.trainer.main_ppo trainer.nnodes=1\n")
    assert PREFILTER.scope(source, "shell") == DEFAULTS_ALONE
    full, alone = both_plans(source)
    assert alone == full and [kind for _, _, kind in alone.blocks] == ["python"]
