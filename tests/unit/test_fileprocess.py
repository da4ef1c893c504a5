"""Where a finding lands in the file as the edits leave it (`written_places`): the line a write run reports."""

from __future__ import annotations

from migrator.edits import Edit, apply_edits
from migrator.fileprocess import written_places


def places(source: bytes, edits: list[Edit], offsets: list[int]):
    new, applied, _ = apply_edits(source, edits)
    return written_places(offsets, applied, new)


def test_a_line_split_before_a_place_moves_it_down():
    source = b"import a, b\nx = 1\n"
    split = Edit(0, 11, b"import a\nimport b", "module-move", "split")
    assert places(source, [split], [12, 16]) == [(3, 1), (3, 5)]


def test_a_longer_name_on_the_same_line_moves_the_column():
    source = b"k=1 old=2 z=3\n"
    assert places(source, [Edit(4, 7, b"renamed", "key-rename", "")], [10]) == [(1, 15)]


def test_a_place_inside_an_edit_is_the_start_of_its_replacement():
    source = b"ab\nold.key=1\n"
    assert places(source, [Edit(0, 2, b"a\nb", "x", ""), Edit(3, 10, b"new", "key-rename", "")], [3, 7]) == [
        (3, 1), (3, 1)]


def test_an_insertion_at_a_place_goes_before_it():
    source = b"key=1\n"
    assert places(source, [Edit(0, 0, b"+", "plus-dropped", "")], [0]) == [(1, 2)]
