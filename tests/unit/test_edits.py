"""The engine's rule for unsafe edits (migrator/edits.py): held back and reported as a person's step without
--unsafe-fixes, applied and reported as made with it; the edits of one fix are said once."""

from __future__ import annotations

from migrator.edits import Edit, Finding, Unsafe, apply_edits, settle_unsafe

SOURCE = b"bash examples/old.sh trainer.total_epochs=2\n"
MOVE = Unsafe(made=(Finding(5, "path-move", "moved; the new script trains something else", code="VM104"),),
              held=(Finding(5, "path-move", "edit by hand: the new script trains something else", code="VM103"),))
PATH = Edit(5, 20, b"examples/new.sh", "path-move", "examples/old.sh -> examples/new.sh", unsafe=MOVE)
PRESET = Edit(0, 0, b"MODE=x ", "path-move", "env presets for examples/new.sh", unsafe=MOVE)
RENAME = Edit(21, 41, b"trainer.epochs", "key-rename", "trainer.total_epochs -> trainer.epochs")


def test_without_unsafe_fixes_an_unsafe_fix_is_held_and_its_manual_step_said_once():
    kept, findings = settle_unsafe([PRESET, PATH, RENAME], unsafe_fixes=False)
    assert kept == [RENAME]
    assert findings == list(MOVE.held)
    assert apply_edits(SOURCE, kept)[0] == b"bash examples/old.sh trainer.epochs=2\n"


def test_with_unsafe_fixes_every_edit_of_the_fix_is_applied_and_said_once_as_made():
    kept, findings = settle_unsafe([PRESET, PATH, RENAME], unsafe_fixes=True)
    assert kept == [PRESET, PATH, RENAME]
    assert findings == list(MOVE.made)
    assert apply_edits(SOURCE, kept)[0] == b"MODE=x bash examples/new.sh trainer.epochs=2\n"


def test_two_fixes_are_each_said_and_a_silent_fix_says_nothing():
    pin_defaults = Unsafe(made=(), held=(Finding(0, "default-change", "defaults changed", code="VM030"),))
    pin = Edit(44, 44, b" a.b=1", "default-pin", "pin a.b", unsafe=pin_defaults)
    in_comment = Edit(5, 20, b"examples/new.sh", "path-move", "in a comment", in_comment=True, unsafe=Unsafe())
    kept, findings = settle_unsafe([PATH, pin, in_comment], unsafe_fixes=False)
    assert kept == [] and findings == [*MOVE.held, *pin_defaults.held]
    kept, findings = settle_unsafe([PATH, pin, in_comment], unsafe_fixes=True)
    assert kept == [PATH, pin, in_comment] and findings == list(MOVE.made)


def test_safe_edits_pass_through_untouched_in_both_modes():
    for unsafe_fixes in (False, True):
        assert settle_unsafe([RENAME], unsafe_fixes) == ([RENAME], [])
