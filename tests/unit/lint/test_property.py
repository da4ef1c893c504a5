"""Lint never crashes and always places findings inside the file, whatever the script looks like."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from migrator.lint.facts import load_facts
from migrator.lint.runner import lint_source
from migrator.mapping import compose, load_builtin

MAPPINGS = compose(load_builtin(), None, "v0.9.0")
TOKENS = ["python3", "-m", "verl.trainer.main_ppo", "--config-name=ppo_megatron_trainer", "model_engine=megatron",
          "trainer.nnodes=1", "+a.b=1", "~trainer.logger", "actor_rollout_ref.actor.megatron.tp=2", "\\", "\\  # c",
          "\n", " ", "if", "then", "fi", "for", "x", "in", "do", "done", ";", "$x", "${y:-1}", "${z}", "(", ")",
          "\"", "'", "#", "source", "examples/no.sh", "verl/x.py", "arr=(", "<<EOF", "EOF", "x=1", "é"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(TOKENS), max_size=40).map(" ".join))
def test_findings_stay_inside_the_file(text):
    src = text.encode()
    report = lint_source(src, "p.sh", load_facts(), MAPPINGS, "v0.9.0")
    lines = src.split(b"\n")
    for f in report.findings:
        assert 1 <= f.line <= len(lines)
        assert 1 <= f.col <= len(lines[f.line - 1]) + 1
        assert f.code in {"VM001", "VM002", "VM003", "VM112", "VM005", "VM006", "VM007",
                          "VM101", "VM151"}
