"""A moved script that is not proven to train what the old one trained (mappings/verl/facts/script-moves.yaml,
migrator/mapping/script_moves.py): the move changes what the run does, so it is made only with
`--unsafe-fixes`, as ruff's unsafe fixes are, and reported either way. Without it the old path stays, and
the finding (VM103, a manual step) names the exact edit and what differs; every run and `lint` report it
again until a person settles it. With it the edit is made and reported (VM104)."""

from __future__ import annotations

from migrator.edits import Finding, Unsafe
from migrator.mapping.kinds.path import SCRIPT_MOVE_DIFFERS, not_proven_same, run_command, what_the_new_script_trains
from migrator.pulls import pr_name

FACTS_FILE = "the facts' script-moves.yaml"


def unsafe_move(at: int, old: str, change, runs_script: bool, in_comment: bool) -> Unsafe | None:
    """For the edits of a move the facts do not prove the same (the new script trains something else, or
    nobody proved it does not): made only with --unsafe-fixes, and said either way (in a comment: silently,
    the comment follows the code). None for a move proven plain."""
    if not not_proven_same(change):
        return None
    if in_comment:
        return Unsafe()
    return Unsafe((made_finding(at, old, change),), (held_finding(at, old, change, runs_script),))


def what_differs(change) -> str:
    """`moved to NEW (#PR), which trains something else: ...`."""
    prs = ", ".join(pr_name(pr) for pr in change.prs)
    return f"moved to {change.new} ({prs}), which {what_the_new_script_trains(change)}"


def held_finding(at: int, old: str, change, runs_script: bool) -> Finding:
    """The move not made: a manual step that gives the exact edit (`runs_script`: `old` is the script a
    command runs, where the move's env presets and args go with it)."""
    if change.env or change.args:
        edit = f"run it as `{run_command(change.new, change.env, change.args)}`" + ("" if runs_script else
                                                                                 " (by hand here)")
    else:
        edit = f"write `{change.new}` in its place"
    return Finding(at, SCRIPT_MOVE_DIFFERS, f"{old} {what_differs(change)}; not moved: to train what the new "
                   f"script trains, {edit}", hint(change), change.prs, "manual")


def made_finding(at: int, old: str, change) -> Finding:
    """The move made with --unsafe-fixes: said, with what differs."""
    return Finding(at, SCRIPT_MOVE_DIFFERS, f"{old} {what_differs(change)}; moved (--unsafe-fixes)",
                   hint(change), change.prs, "warning")


def hint(change) -> str:
    if change.proof.same is None:
        return ("compare the two scripts before running the new one; --unsafe-fixes makes the move (the proof of "
                f"each move: {FACTS_FILE})")
    return (f"set what you want the run to keep as overrides, or keep a copy of the old script; --unsafe-fixes "
            f"makes the move (every difference: {FACTS_FILE})")
