"""`signature-change`: a change to a verl function's signature a person must make, reported where it provably
applies (a call passing a dropped keyword, an override with a dropped parameter, a user's function verl
now calls with an argument it does not take)."""

from __future__ import annotations

from dataclasses import dataclass

from migrator.mapping.fields import COMMON, FieldError, check_identifier, check_member, check_text, split_symbol
from migrator.mapping.kind import Code, Entry, EntryKind, Family, Group, Role, Row, Section
from migrator.mapping.kinds.symbol import PYTHON_API, python_api_intro
from migrator.mapping.presentation import dotted, links, table_section

SIGNATURE = Family("signature")


def check_callback(value: object) -> tuple[str, ...]:
    if not isinstance(value, list) or not value:
        raise FieldError("callback must be a non-empty list of parameter names")
    return tuple(check_identifier(name) for name in value)


@dataclass(frozen=True)
class SignatureChange(Entry):
    """A signature change a person must make, reported where it provably applies: `function`
    `pkg.mod:func` (or a class: its constructor) called with keyword `param`, or `pkg.mod:Class.method`
    overridden in a subclass with a parameter named `param`. With `callback` (the leading parameters of
    users' functions that verl calls in place of `function`), `param` is an argument verl now passes:
    a user's top-level function of that shape that takes neither `param` nor `**kwargs` is reported."""

    KIND = "signature-change"
    FAMILY = "signature"
    FIELDS = {"function": (True, check_member), "param": (True, check_identifier), "hint": (True, check_text),
              "callback": (False, check_callback), **COMMON}
    function: str = ""
    param: str = ""
    hint: str = ""
    callback: tuple[str, ...] | None = None

    @property
    def identity(self) -> tuple:
        return (self.FAMILY, self.function, self.param)

    @property
    def old(self) -> str:
        return self.function

    @property
    def symbol(self) -> str:
        """The module-level name: `pkg.mod:Class` for `pkg.mod:Class.method`."""
        module, name = split_symbol(self.function)
        return f"{module}:{name.partition('.')[0]}"

    @property
    def method(self) -> str | None:
        return split_symbol(self.function)[1].partition(".")[2] or None

    def describe(self) -> str:
        return f"{self.KIND} {self.function}({self.param})"


def tokens(entry, mappings):
    return (split_symbol(entry.symbol)[0],)


def spelled(entry):
    """The module components, the module-level name and the parameter: a call or an override spells them."""
    module, name = split_symbol(entry.symbol)
    return ((*module.split("."), name, entry.param),)


def with_callback(entries) -> tuple:
    """The signature changes among `entries` about users' functions verl calls in place of `function`."""
    return tuple(e for e in entries if e.unit.family is SIGNATURE and e.callback)


def entries(mappings) -> list:
    """Each signature change, as the table states it (the function as named before that release)."""
    return sorted((e for e in mappings.entries() if e.unit.family is SIGNATURE), key=lambda e: (e.function, e.param))


def row(entry: SignatureChange, mappings) -> Row:
    return Row({"family": "signature", "function": entry.function, "old": f"{entry.function}({entry.param})",
                "new": None, "action": "manual", "hint": entry.hint, "prs": [entry.pr],
                "releases": [entry.origin.release]}, (entry,))


SIGNATURES = Group("signature", 70, lambda mappings: [row(e, mappings) for e in entries(mappings)])


def notes_rows(mappings) -> list[dict]:
    return [{"function": e.function, "param": e.param, "hint": e.hint, "prs": [e.pr]} for e in entries(mappings)]


SIGNATURE_CHANGES = Section(
    "signature_changes", 82, "Signature changes to make by hand", notes_rows,
    table_section(["Function", "Parameter", "What to do", "PR"],
                  lambda w, r: [w.code(dotted(r["function"])), w.code(r["param"]), w.text(r["hint"]),
                                links(w, r["prs"])]),
    "signature change", 90, parent=PYTHON_API, parent_intro=python_api_intro)

SIGNATURE_CHANGE = EntryKind(
    SignatureChange, family=SIGNATURE, role=Role.REPORT, rules=(), tokens=tokens, spelled=spelled,
    codes=(Code("VM127", "manual", "changed signature (a dropped parameter, a new argument verl passes): change this "
                "code by hand"),),
    shown_in=SIGNATURES, row=row, notes=SIGNATURE_CHANGES, position=520,
    example={"kind": "signature-change", "function": "verl.utils.a:make", "param": "size",
             "hint": "size is gone: pass length", "pr": 16})
