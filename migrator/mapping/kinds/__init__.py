"""The registry of entry kinds: every `EntryKind` declared by a module of this package (one module per
kind or small family of kinds), found by importing them all. Nothing else lists kinds; a new kind is a
new module here, its tests and its docs (docs/architecture.md, "Where a change goes").
"""

from __future__ import annotations

import importlib
import pkgutil

from migrator.mapping.kind import Code, EntryKind, Group, Section


def _import_kinds() -> dict[str, EntryKind]:
    found = []
    for module_info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{module_info.name}")
        found.extend(value for value in vars(module).values() if isinstance(value, EntryKind))
    ordered = sorted(dict.fromkeys(found), key=lambda unit: unit.position)
    names = [unit.name for unit in ordered]
    if len(set(names)) != len(names):
        raise ValueError(f"an entry kind is declared twice: {names}")
    return {unit.name: unit for unit in ordered}


KINDS: dict[str, EntryKind] = _import_kinds()


def kind_named(name: str) -> EntryKind | None:
    return KINDS.get(name)


def _finding_codes() -> dict[tuple[str, str], Code]:
    out: dict[tuple[str, str], Code] = {}
    for unit in KINDS.values():
        for key, code in unit.finding_codes().items():
            if out.setdefault(key, code) != code:
                raise ValueError(f"finding {key} has two codes: {out[key].code} and {code.code}")
    return out


# (finding kind, severity) -> the code it is reported under.
FINDING_CODES: dict[tuple[str, str], Code] = _finding_codes()


def codes() -> dict[str, Code]:
    """Every rule code a kind declares, by code (a code shared by two kinds is one rule)."""
    out: dict[str, Code] = {}
    for unit in KINDS.values():
        for code in unit.codes:
            known = out.setdefault(code.code, code)
            if (known.severity, known.title) != (code.severity, code.title):
                raise ValueError(f"{code.code} is declared twice, differently")
    return out


def finding_code(kind: str, severity: str) -> str:
    """The code of a finding of `kind` (an entry kind, or a finding kind a unit declares) and `severity`.
    Raises LookupError for a pair no unit declares: every finding has its kind's own code."""
    try:
        return FINDING_CODES[kind, severity].code
    except KeyError:
        raise LookupError(f"no entry kind declares a code for {severity} findings of kind {kind!r}") from None


def groups() -> list[Group]:
    """The `mappings show` groups, in the order they are listed."""
    found = {id(group): group for unit in KINDS.values() for group in unit.show_groups}
    return sorted(found.values(), key=lambda group: group.position)


def sections() -> list[Section]:
    """The release-notes sections, in the order the guide gives them."""
    return sorted({id(unit.notes): unit.notes for unit in KINDS.values()}.values(), key=lambda s: s.position)
