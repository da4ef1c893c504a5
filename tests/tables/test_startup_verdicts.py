"""The start-up checks as data agree with verl's own validation, on every verdict verl recorded.

mappings/verl/facts/startup-verdicts/<release>.yaml holds what verl's validators said about each generated
config (scripts/prove_startup_checks.py ran them at the release). Each case is composed again here, from
the shipped config trees, and judged by the table: per validator, the first failing check must be verl's
(the same exception and message), a passing validator must have no failing check, and a warning-severity
check fails exactly where verl warned. Reads only the committed facts, never a verl clone.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from migrator.startup import judge, load_checks
from migrator.startup.checks import run_as_verl
from migrator.verdict import release_configs
from migrator.verdict.effective import effective_config

FACTS = Path(__file__).resolve().parents[2] / "mappings" / "verl" / "facts" / "startup-verdicts"
FILES = sorted(FACTS.glob("*.yaml"))


def cases():
    for path in FILES:
        facts = yaml.safe_load(path.read_text(encoding="utf-8"))
        for n, case in enumerate(facts["cases"]):
            yield pytest.param(facts["release"], case, id=f"{facts['release']}-{n}")


def lint_verdict(outcomes, validator: str) -> dict:
    """The table's verdict on one validator, in the facts' terms."""
    mine = [o for o in outcomes if o.check.validator == validator]
    for outcome in mine:
        assert outcome.status != "unknown", f"{outcome.check.id} is unknown on a literal config: {outcome.values}"
    stop, warnings = run_as_verl(mine)
    out: dict = {"outcome": "passes"}
    if stop is not None:
        out = {"outcome": "fails", "error": stop.check.error, "message": stop.message, "check": stop.check.id}
    if warnings:
        out["warnings"] = sorted(o.message for o in warnings)
    return out


def test_every_release_with_checks_has_recorded_verdicts():
    table = load_checks()
    with_checks = {r for r in table.releases if table.at(r)}
    assert {p.stem for p in FILES} == with_checks


@pytest.mark.parametrize("release, case", list(cases()))
def test_table_agrees_with_verl(release, case):
    table = load_checks()
    configs = release_configs(release)
    config_dir, _, config_name = case["config"].rpartition("/")
    effective = effective_config(configs, config_dir, config_name, case["overrides"])
    assert effective.failure is None, effective.failure
    outcomes = judge(table, effective)
    for validator, verl in case["verdicts"].items():
        mine = lint_verdict(outcomes, validator)
        expected = {k: verl[k] for k in ("outcome", "error", "message", "warnings") if k in verl}
        got = {k: mine[k] for k in ("outcome", "error", "message", "warnings") if k in mine}
        assert got == expected, (validator, mine.get("check"), verl.get("at"))
