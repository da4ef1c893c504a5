"""Draft Python API entries from two revisions: modules that disappeared, names that moved to another
module, names that are gone, and keyword parameters renamed in place.

Each side's modules are read with `pysource.bound_names` (the same reader as the shipped module facts).
A module that left without a `module-move` draft becomes a `module-removal` (a whole removed package is
one entry); a public name a module stops binding becomes a `symbol-move` when exactly one module newly
defines that name (else exactly one module defines it at all), else a `symbol-removal`; a function
whose parameter list lost one name and gained one at the same position becomes a `keyword-rename`. Hints are left for the reviewer to write.
"""

from __future__ import annotations

from migrator import history
from migrator.derive.draft import Derivation, Draft
from migrator.derive.prs import PathCommits, with_pr
from migrator.derive.pysource import bound_names, module_name
from migrator.layout import verl_layout
from migrator.mapping.modulefacts import ModuleNames, parse_token

HINT_PLACEHOLDER = "TODO: say what replaces it"


def read_modules(repo, sha: str) -> tuple[dict[str, ModuleNames], dict[str, str]]:
    """({module: ModuleNames}, {module: path}) of the Python modules under verl/ and recipe/ at `sha`."""
    layout = verl_layout()
    files = history.tree_files(repo, sha, layout.directories(layout.packages))
    paths = {}
    for path in files:
        name = module_name(path) if path.endswith(".py") else None
        if name is not None:
            paths[name] = path
    blobs = history.read_blobs(repo, [files[p] for p in paths.values()])
    modules = {}
    for name, path in paths.items():
        defined, reexported = bound_names(blobs.get(files[path], b""), name, path.endswith("/__init__.py"))
        modules[name] = ModuleNames(dict(parse_token(t) for t in defined), set(reexported))
    return modules, paths


def derive_python_api(repo, from_sha: str, to_sha: str, result: Derivation, path_commits: PathCommits,
                      fallback: int | None) -> None:
    before, before_paths = read_modules(repo, from_sha)
    after, after_paths = read_modules(repo, to_sha)
    moved = {d.old: d.fields["new"] for d in result.drafts if d.kind == "module-move"}

    def moved_to(module: str) -> str | None:
        for old, new in moved.items():
            if module == old or module.startswith(old + "."):
                return new + module[len(old):]
        return None

    def pr_for(module: str, removed: bool) -> tuple[int | None, str, str]:
        path = before_paths.get(module) or after_paths.get(module, "")
        pr, how = path_commits.for_move(path, None) if removed else _touched(path_commits, path)
        return with_pr(pr, how, "medium", fallback)

    gone = sorted(set(before) - set(after))
    result.removed_modules.update(gone)
    for module in gone:
        parent = module.rpartition(".")[0]
        if moved_to(module) is not None or (parent in gone and parent in before):
            continue  # moved, or inside a removed package that gets one entry
        pr, conf, how = pr_for(module, True)
        result.drafts.append(Draft("module-removal", module, {"hint": HINT_PLACEHOLDER}, pr, conf,
                                   f"module left between the revisions; {how}", (module,)))
    newly_defined: dict[str, list[str]] = {}
    defined_after: dict[str, list[str]] = {}
    for module, names in after.items():
        for name in names.defined:
            defined_after.setdefault(name, []).append(module)
            if not before.get(module, ModuleNames()).binds(name):
                newly_defined.setdefault(name, []).append(module)
    for module, names in sorted(before.items()):
        now = after.get(module) or after.get(moved_to(module) or "")
        for name, params in sorted(names.defined.items()):
            if name.startswith("_") or name.startswith("!"):
                continue
            if now is not None and now.binds(name):
                _keyword_renames(module, name, params, now.defined.get(name), result, pr_for)
                continue
            # the one module that newly defines the name, else the one module that defines it at all
            homes = [m for m in newly_defined.get(name, []) if m != module]
            if len(homes) != 1:
                homes = [m for m in defined_after.get(name, []) if m != module]
            ref = f"{module}:{name}"
            result.removed_symbols.add(ref)
            if now is None and len(homes) != 1:
                continue  # the module's removal entry covers it
            pr, conf, how = pr_for(module, now is None)
            if len(homes) == 1:
                result.drafts.append(Draft("symbol-move", ref, {"new": f"{homes[0]}:{name}"}, pr, conf,
                                           f"only {homes[0]} newly defines {name}; {how}", (ref,)))
            else:
                result.drafts.append(Draft("symbol-removal", ref, {"hint": HINT_PLACEHOLDER}, pr, conf,
                                           f"{module} no longer binds {name}; {how}", (ref,)))


def _touched(path_commits: PathCommits, path: str) -> tuple[int | None, str]:
    commit = path_commits.touched.get(path)
    if commit is not None and commit.pr:
        return commit.pr, f"commit {commit.sha[:9]}"
    return None, "no PR commit found"


def _keyword_renames(module, name, old_params, new_params, result: Derivation, pr_for) -> None:
    """One parameter replaced by another at the same position: a keyword rename."""
    if old_params is None or new_params is None:
        return
    removed = [p for p in old_params if p not in new_params and not p.startswith("*")]
    added = [p for p in new_params if p not in old_params and not p.startswith("*")]
    if len(removed) != 1 or len(added) != 1 or old_params.index(removed[0]) != new_params.index(added[0]):
        return
    pr, conf, how = pr_for(module, False)
    function = f"{module}:{name}"
    result.drafts.append(Draft("keyword-rename", removed[0], {"function": function, "new": added[0]}, pr, conf,
                               f"{function}: parameter {removed[0]} became {added[0]} at the same position; {how}",
                               (f"{function}({removed[0]}=)",)))
