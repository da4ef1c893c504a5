"""The whole names a file must spell for a module or API entry to touch it: the prefilter's groups
(`prefilter.Prefilter`). Code splits a module's dotted name (`from verl.workers import rollout`,
`import verl.trainer as t; t.main_ppo`), yet every component stays a whole name; an API entry also
needs the name it changes (`TaskRunner`) and, for keyword and signature entries, the keyword. A file
that imports `verl.trainer.main_ppo` but never names `TaskRunner` has nothing to rewrite.
"""

from __future__ import annotations


def module_groups(modules) -> set[tuple[str, ...]]:
    """Each module's components, its package first: every spelling of an absolute import or attribute
    chain holds them all."""
    return {tuple(module.split(".")) for module in modules}


def api_groups(entries) -> set[tuple[str, ...]]:
    """What each entry's kind says a file must spell for it (`EntryKind.spelled`): for symbol, keyword and
    signature entries, the module's components, the name and the keyword or parameter; the package first."""
    return {group for e in entries for group in e.unit.spelled(e)}
