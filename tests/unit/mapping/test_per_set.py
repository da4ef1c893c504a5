"""`per_table_set`: a value derived from a table set is computed once for the set and once for each state of
the views made of it per file, never once per view, and never shared between states or sets."""

from __future__ import annotations

from migrator.mapping import compose, load_builtin
from migrator.mapping.per_set import per_table_set
from tests.helpers.tables import held_on_ascend_table


def test_views_of_one_state_share_a_value_and_other_states_get_their_own(tmp_path):
    mappings = compose(load_builtin(), None, "v0.9.0", [held_on_ascend_table(tmp_path)])
    calls = []

    @per_table_set
    def action(maps):
        calls.append(maps)
        return maps.key("a.b").action

    npu = b"export ASCEND_RT_VISIBLE_DEVICES=0\npython3 -m verl.trainer.main_ppo a.b=1\n"
    assert action(mappings) == "rename"
    views = [mappings.for_file(npu) for _ in range(3)]
    assert len({id(v) for v in views}) == 3 and all(v.viewed is mappings for v in views)
    assert [action(v) for v in views] == ["warn"] * 3  # the held rename, as each file sees it
    assert action(mappings.for_file(b"a.b=1\n")) == "rename" and action(mappings) == "rename"
    assert len(calls) == 2  # the set, and one state of its views
    assert action(views[0].launching(True)) == "warn" and views[0].launching(True).viewed is mappings
    assert len(calls) == 3  # another state: derived for it
    other = compose(load_builtin(), None, "v0.9.0", [held_on_ascend_table(tmp_path)])
    assert action(other) == "rename" and len(calls) == 4  # another set
