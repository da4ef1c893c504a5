"""derive drafts Python API entries from two revisions, and audit fails on a removed public module or
name that no table covers (git histories built in tmp_path)."""

from __future__ import annotations

import subprocess
import sys

import pytest
import yaml

from migrator import audit, derive, history
from migrator.mapping import load_table
from tests.helpers.history import LICENSE, History

FSDP_TOY = LICENSE + '''
class ToyActorWorker:
    def __init__(self, config, role):
        self.config = config


class ToyCriticWorker:
    def __init__(self, config):
        self.config = config
        self.model = None
        self.optimizer = None

    def update_critic(self, batch):
        for micro_batch in batch.split(4):
            self.model(micro_batch)
        return {"critic/loss": 0.0}

    def compute_values(self, batch):
        return [self.model(x) for x in batch]
'''
ALGOS_V1 = LICENSE + '''
def toy_policy_loss(old_log_prob, log_prob, eos_mask, cliprange=0.2):
    return old_log_prob


def toy_kl_penalty(logprob, ref_logprob):
    return logprob


def _private_helper():
    pass
'''
ALGOS_V2 = LICENSE + '''
def toy_policy_loss(old_log_prob, log_prob, response_mask, cliprange=0.2):
    return old_log_prob


def _private_helper():
    pass
'''
ENGINE_TOY = LICENSE + '''
class ToyActorWorker:
    def __init__(self, config, role):
        self.config = config
'''


@pytest.fixture(scope="module")
def toy(tmp_path_factory) -> History:
    h = History(tmp_path_factory.mktemp("pyapi"))
    h.write("verl/__init__.py", LICENSE)
    h.write("verl/toyworkers/__init__.py", LICENSE)
    h.write("verl/toyworkers/fsdp_toy.py", FSDP_TOY)
    h.write("verl/toyalgos/core.py", ALGOS_V1)
    h.write("verl/toyold/__init__.py", LICENSE + "VALUE = 1\nOTHER = 2\nTHIRD = 3\n")
    h.write("verl/toyold/inner.py", LICENSE + "def helper():\n    pass\n")
    h.commit("init (#1)")
    h.tag("v1")
    h.rm("verl/toyworkers/fsdp_toy.py")
    h.write("verl/toyworkers/engine_toy.py", ENGINE_TOY)
    h.commit("[BREAKING] workers: engine workers replace the fsdp ones (#201)")
    h.write("verl/toyalgos/core.py", ALGOS_V2)
    h.commit("algos: eos_mask is response_mask; drop toy_kl_penalty (#202)")
    h.rm("verl/toyold/__init__.py")
    h.rm("verl/toyold/inner.py")
    h.commit("remove toyold (#203)")
    h.tag("v2")
    return h


@pytest.fixture(scope="module")
def drafted(toy):
    return derive.derive(history.open_repo(str(toy.root)), "v1", "v2")


def drafts(derivation, kind):
    return {d.old: d for d in derivation.drafts if d.kind == kind}


def test_removed_modules_are_drafted_one_per_package(drafted):
    removals = drafts(drafted, "module-removal")
    assert set(removals) == {"verl.toyworkers.fsdp_toy", "verl.toyold"}
    assert removals["verl.toyworkers.fsdp_toy"].pr == 201 and removals["verl.toyold"].pr == 203
    assert drafted.removed_modules == {"verl.toyworkers.fsdp_toy", "verl.toyold", "verl.toyold.inner"}


def test_a_name_newly_defined_in_exactly_one_module_is_a_move(drafted):
    moves = drafts(drafted, "symbol-move")
    assert set(moves) == {"verl.toyworkers.fsdp_toy:ToyActorWorker"}
    assert moves["verl.toyworkers.fsdp_toy:ToyActorWorker"].fields == {"new": "verl.toyworkers.engine_toy:ToyActorWorker"}


def test_a_public_name_gone_from_a_module_that_stays_is_a_removal(drafted):
    assert set(drafts(drafted, "symbol-removal")) == {"verl.toyalgos.core:toy_kl_penalty"}
    assert drafts(drafted, "symbol-removal")["verl.toyalgos.core:toy_kl_penalty"].pr == 202


def test_a_parameter_replaced_at_its_position_is_a_keyword_rename(drafted):
    [rename] = \
        [d for d in drafted.drafts if d.kind == "keyword-rename"]
    assert (rename.old, rename.fields, rename.pr) == (
        "eos_mask", {"function": "verl.toyalgos.core:toy_policy_loss", "new": "response_mask"}, 202)


def test_the_draft_loads_as_a_table(drafted, tmp_path):
    path = tmp_path / "draft.yaml"
    path.write_text(derive.dump_table(drafted, "v2"))
    kinds = {e.KIND for e in load_table(path).entries}
    assert {"module-removal", "symbol-move", "symbol-removal", "keyword-rename"} <= kinds


def test_audit_fails_on_uncovered_modules_and_names(toy):
    result = audit.audit(history.open_repo(str(toy.root)), "v1", "v2", [])
    assert not result.ok
    assert result.uncovered_modules == ["verl.toyold", "verl.toyold.inner", "verl.toyworkers.fsdp_toy"]
    # names of an uncovered module are the module's entry's business
    assert result.uncovered_symbols == ["verl.toyalgos.core:toy_kl_penalty"]
    assert "  public name removed or moved: verl.toyalgos.core:toy_kl_penalty" in audit.format_report(result)


def test_audit_passes_once_the_suggestions_are_a_table(toy, tmp_path):
    repo = history.open_repo(str(toy.root))
    result = audit.audit(repo, "v1", "v2", [])
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump({"release": "main", "entries": result.suggestions}, sort_keys=False))
    covered = audit.audit(repo, "v1", "v2", list(load_table(path).entries))
    assert covered.ok, (covered.uncovered_modules, covered.uncovered_symbols)


def test_audit_cli_module_entries_cover_their_names(toy, tmp_path):
    table = tmp_path / "t.yaml"
    table.write_text(yaml.safe_dump({"release": "main", "entries": [
        {"kind": "module-removal", "old": "verl.toyold", "hint": "gone", "pr": 203},
        {"kind": "module-removal", "old": "verl.toyworkers.fsdp_toy", "hint": "use engine_toy", "pr": 201},
    ]}, sort_keys=False))
    partial = audit.audit(history.open_repo(str(toy.root)), "v1", "v2", list(load_table(table).entries))
    assert (partial.uncovered_modules, partial.uncovered_symbols) == ([], ["verl.toyalgos.core:toy_kl_penalty"])
    run = [sys.executable, "-m", "migrator", "audit", "--repo", str(toy.root), "--base", "v1", "--head", "v2",
           "--table", str(table)]
    table.write_text(table.read_text() + "- kind: symbol-removal\n  old: verl.toyalgos.core:toy_kl_penalty\n"
                     "  hint: compute the KL penalty in the loss\n  pr: 202\n")
    proc = subprocess.run(run, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout
    assert "3 Python module(s)" in proc.stdout
