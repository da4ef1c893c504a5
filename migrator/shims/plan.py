"""Which shims a composed `MappingSet` calls for, each built by its generator (`shell`, `pymodule`, `keys`).

Deprecation policy: a shim is kept in the release whose table records the change and in the next
release, and removed in the release after that (a path moved in v0.8.0 keeps a stub in v0.8.0 and
v0.9.0; the following release drops it). So `--to T` composes, by default, only the tables of T and
the release before it (`policy_from_release`).
"""

from __future__ import annotations

from migrator.mapping.kind import Role
from migrator.mapping.kinds.entry_point import ENTRY_POINT
from migrator.mapping.kinds.module import MODULE
from migrator.mapping.kinds.path import PATH
from migrator.shims import keys, pymodule, shell
from migrator.shims.model import GeneratedFile, ShimPlan, unreleased_of


def policy_from_release(releases: tuple[str, ...], to_release: str) -> str:
    """The default --from for shims: the release two before --to (tables of --to and the one before)."""
    idx = releases.index(to_release)
    return releases[max(0, idx - 2)]


def plan_shims(mappings, releases: tuple[str, ...], tree_paths: set[str] | None = None,
               keys_module: str | None = None) -> ShimPlan:
    """Every shim the composed tables call for; what gets no shim is explained in `notes`."""
    plan = ShimPlan(owned=stub_paths(mappings))
    unreleased = unreleased_of(mappings)
    for old in sorted(mappings.old_paths()):
        change = mappings.path(old)
        if change is None:
            continue
        if old.endswith("/"):
            what = f"moved to {change.new}" if change.new else "removed"
            plan.notes.append(f"{old}: directory {what}: no stub (a directory has no single script to "
                              "forward; verl-migrate rewrites the paths inside it)")
            continue
        if not old.endswith(".sh"):
            plan.notes.append(f"{old}: not a shell script (.sh): no stub")
            continue
        plan.files.append(shell.stub(change, mappings.to_release, releases, unreleased))
    for old in sorted(mappings.old_modules()):
        change = mappings.module(old)
        if change is None:
            continue
        if change.new is None:
            plan.files.append(pymodule.removed_stub(change, mappings.to_release, releases, unreleased))
            continue
        files, note = pymodule.stubs(change, mappings.to_release, releases, tree_paths, unreleased)
        plan.files.extend(files)
        if note:
            plan.notes.append(note)
    for entry in mappings.entries():
        if entry.unit.family is not ENTRY_POINT:
            continue
        # A stub module could start the new entry point, but the old command line's overrides mean the
        # old config's keys: a stub that ran them unchanged would fail in Hydra or train differently.
        what = f"moved to {entry.new}" if entry.unit.role is Role.MOVE else "removed"
        plan.notes.append(f"entry point {entry.old}: {what}: no stub (its overrides need the key remap and "
                          "pinned defaults that verl-migrate writes into the script)")
    if keys_module is not None:
        plan.files.append(keys.module_file(mappings, releases, keys_module))
    plan.owned = plan.owned | {f.relpath for f in plan.files}
    seen: dict[str, GeneratedFile] = {}
    for f in plan.files:
        if f.relpath in seen:
            raise ValueError(f"two shims want the same file {f.relpath} ({seen[f.relpath].old} and {f.old})")
        seen[f.relpath] = f
    return plan


def stub_paths(mappings) -> frozenset[str]:
    """Where the generators put a stub for any entry of any release's table (and the user tables)."""
    history = getattr(mappings, "history", None)
    tables = list(history.tables.values()) if history is not None else []
    paths = set()
    for table in tables + list(mappings.tables):
        for entry in table.entries:
            if entry.unit.family is PATH and entry.old.endswith(".sh"):
                paths.add(entry.old)
            elif entry.unit.family is MODULE and entry.unit.role is Role.MOVE:
                base = entry.old.replace(".", "/")
                paths.update((f"{base}.py", f"{base}/__init__.py", f"{base}/__main__.py"))
    return frozenset(paths)
