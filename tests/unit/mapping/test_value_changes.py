"""`MappingSet.value` skips the walk over every release's value entries only where no entry can apply:
what it answers is what the walk answers, for every key an entry names, every key renamed into one,
and keys no entry names, with and without siblings."""

from __future__ import annotations

import pytest

from migrator.mapping import compose, load_builtin
from migrator.mapping.value_changes import compose_value


@pytest.mark.parametrize("from_release", [None, "v0.5.0", "v0.7.1"])
def test_the_quick_answer_is_the_walks(from_release):
    maps = compose(load_builtin(), from_release, None)
    changes = maps.values
    steps = changes.steps
    entries = [e for step in steps.steps for e in step.value_entries]
    assert any(e.value_key is None for e in entries) or from_release == "v0.7.1"
    named = {e.value_key for e in entries if e.value_key is not None}
    named |= {changes.keys.final_name(k) for k in named}
    # Keys renamed into a key an entry names (the walk follows renames before it asks the entries).
    renamed_into = {e.old for step in steps.steps for e in step.table.entries
                    if getattr(e, "old", None) and (maps.key(e.old) is not None and maps.key(e.old).new in named)}
    keys = sorted(named | renamed_into | {"data.train_batch_size", "_target_", "trainer.logger", "no.such.key"})
    values = sorted({v for e in entries for v in (getattr(e, "old", None), getattr(e, "new", None),
                                                   *(old for old, _ in getattr(e, "map", ()))) if isinstance(v, str)}
                    | {"true", "x", "[console,wandb]"})
    sibling_sets = [None, *({k: v for k, v in getattr(e, "when", ())} for e in entries if getattr(e, "when", ()))]
    assert len(keys) > 5 and len(values) > 5
    asked = 0
    for key in keys:
        for value in values:
            for siblings in sibling_sets:
                walked = compose_value(steps.steps, steps.for_name(key, "key"), key, value, siblings,
                                       changes.keys.final_name)
                assert maps.value(key, value, siblings) == walked, (key, value, siblings)
                asked += walked is not None
    assert asked > 0  # some pairs change: the comparison is not between two Nones only
