"""The whole names a file must spell for a module or API entry to touch it: the prefilter's groups
(`prefilter.Prefilter`). Code splits a module's dotted name (`from verl.workers import rollout`,
`import verl.trainer as t; t.main_ppo`), yet every component stays a whole name; an API entry also
needs the name it changes (`TaskRunner`) and, for keyword and signature entries, the keyword. A file
that imports `verl.trainer.main_ppo` but never names `TaskRunner` has nothing to rewrite.
"""

from __future__ import annotations

from migrator.mapping.entries import KeywordRename, SignatureChange, SymbolMove, SymbolRemoval, split_symbol


def module_groups(modules) -> set[tuple[str, ...]]:
    """Each module's components, its package first: every spelling of an absolute import or attribute
    chain holds them all."""
    return {tuple(module.split(".")) for module in modules}


def api_groups(entries) -> set[tuple[str, ...]]:
    """For each symbol, keyword and signature entry: its module's components, the symbol's name, and
    the keyword or parameter it changes (a call or an override must spell it); the package first."""
    out = set()
    for e in entries:
        if isinstance(e, (SymbolMove, SymbolRemoval)):
            (module, name), extra = split_symbol(e.old), ()
        elif isinstance(e, KeywordRename):
            (module, name), extra = split_symbol(e.function), (e.old,)
        elif isinstance(e, SignatureChange):
            (module, name), extra = split_symbol(e.symbol), (e.param,)
        else:
            continue
        out.add((*module.split("."), name, *extra))
    return out
