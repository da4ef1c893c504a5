"""The typed entries of a mapping table, and the field rules that validate them.

Each entry kind declares its fields as data (`FIELDS`); the loader checks a YAML mapping against
that declaration, so a new kind is one new class plus its row in `ENTRY_KINDS`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import ClassVar

from migrator.pulls import pr_url

# Hydra override keys: dotted identifiers; a trailing `.*` names a whole subtree.
KEY_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*(?:\.[A-Za-z0-9_][A-Za-z0-9_-]*)*(?:\.\*)?\Z")
# Repository paths that may be pasted into shell: no metacharacters, no whitespace, no traversal.
PATH_RE = re.compile(r"[A-Za-z0-9_.+/-]+\Z")
NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
MODULE_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*\Z")
# A Python name inside a module: `pkg.mod:Name`, or `pkg.mod:Class.method` where a member is named.
SYMBOL_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*\Z")
MEMBER_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*"
                       r"(?:\.[A-Za-z_][A-Za-z0-9_]*)?\Z")
COMMIT_RE = re.compile(r"[0-9a-f]{7,40}\Z")
# Env preset values and extra args reach a shell command line unquoted: keep them inert.
SAFE_VALUE_RE = re.compile(r"[A-Za-z0-9_./:,@%+=-]*\Z")
# Free text (hints, notes) is printed and embedded in generated stubs; one line, no control bytes.
TEXT_FORBIDDEN_RE = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")


class FieldError(ValueError):
    """A field value that breaks the table grammar; the loader adds file, line and entry."""


def check_key(value: object) -> str:
    if not isinstance(value, str) or not KEY_RE.match(value):
        raise FieldError(f"{value!r} is not a Hydra config key (dotted identifiers, optional trailing .*)")
    return value


def check_path(value: object) -> str:
    if not isinstance(value, str) or not value:
        raise FieldError(f"{value!r} is not a path")
    if "\x00" in value or "\n" in value or "\r" in value:
        raise FieldError(f"path {value!r} contains NUL or a newline")
    if value.startswith("/"):
        raise FieldError(f"path {value!r} is absolute; table paths are relative to the verl root")
    segments = value.rstrip("/").split("/")
    if any(seg in ("..", ".") for seg in segments):
        raise FieldError(f"path {value!r} contains a '.' or '..' segment")
    if not PATH_RE.match(value):
        raise FieldError(
            f"path {value!r} contains whitespace or shell metacharacters (allowed: A-Z a-z 0-9 _ . / + -)"
        )
    if "//" in value:
        raise FieldError(f"path {value!r} contains an empty segment")
    return value


def check_name(value: object) -> str:
    if not isinstance(value, str) or not NAME_RE.match(value):
        raise FieldError(f"{value!r} is not a shell variable name ([A-Za-z_][A-Za-z0-9_]*)")
    return value


def check_module(value: object) -> str:
    if not isinstance(value, str) or not MODULE_RE.match(value):
        raise FieldError(f"{value!r} is not a dotted Python module name")
    return value


def check_symbol(value: object) -> str:
    if not isinstance(value, str) or not SYMBOL_RE.match(value):
        raise FieldError(f"{value!r} is not a Python name in a module (pkg.mod:Name)")
    return value


def check_symbol_or_name(value: object) -> str:
    """`pkg.mod:Name`, or a bare `Name` (the same module)."""
    if isinstance(value, str) and NAME_RE.match(value):
        return value
    return check_symbol(value)


def check_member(value: object) -> str:
    if not isinstance(value, str) or not MEMBER_RE.match(value):
        raise FieldError(f"{value!r} is not a function or method in a module (pkg.mod:func or pkg.mod:Class.method)")
    return value


def check_identifier(value: object) -> str:
    if not isinstance(value, str) or not NAME_RE.match(value):
        raise FieldError(f"{value!r} is not a Python identifier")
    return value


def check_text(value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise FieldError(f"{value!r} is not a non-empty string")
    if TEXT_FORBIDDEN_RE.search(value):
        raise FieldError(f"text {value!r} must be one line without control characters")
    return value


def check_pr(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise FieldError(f"pr must be a positive integer (the verl pull request number), got {value!r}")
    return value


def check_safe_value(value: object) -> str:
    if isinstance(value, bool) or isinstance(value, (int, float)):
        value = str(value).lower() if isinstance(value, bool) else str(value)
    if not isinstance(value, str) or not SAFE_VALUE_RE.match(value):
        raise FieldError(f"value {value!r} may only use A-Z a-z 0-9 _ . / : , @ % + = -")
    return value


def check_env_presets(value: object) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, dict) or not value:
        raise FieldError("env must be a non-empty mapping of NAME: value")
    return tuple((check_name(k), check_safe_value(v)) for k, v in value.items())


def check_args(value: object) -> tuple[str, ...]:
    if not isinstance(value, list) or not value:
        raise FieldError("args must be a non-empty list of Hydra overrides")
    out = []
    for arg in value:
        if not isinstance(arg, str) or "=" not in arg:
            raise FieldError(f"arg {arg!r} is not a key=value override")
        key, _, val = arg.partition("=")
        check_key(key.lstrip("+~"))
        check_safe_value(val)
        out.append(arg)
    return tuple(out)


def check_confidence(value: object) -> str:
    if value not in ("high", "medium", "low"):
        raise FieldError(f"confidence must be 'high', 'medium' or 'low', got {value!r}")
    return value  # type: ignore[return-value]


def check_review(value: object) -> bool:
    if value is not True:
        raise FieldError(f"review must be true (drop the field once the entry is reviewed), got {value!r}")
    return True


def check_action(value: object) -> str:
    if value not in ("remove", "warn"):
        raise FieldError(f"action must be 'remove' or 'warn', got {value!r}")
    return value  # type: ignore[return-value]


@dataclass(frozen=True)
class FileCondition:
    """`when: {file-matches: [...]}`: the entry applies only to files matching any regex."""

    patterns: tuple[str, ...]
    compiled: tuple[re.Pattern[bytes], ...] = field(compare=False, repr=False)

    def matches(self, source: bytes) -> bool:
        return any(p.search(source) for p in self.compiled)


def check_when(value: object) -> FileCondition:
    if not isinstance(value, dict) or set(value) != {"file-matches"}:
        raise FieldError("when must be {file-matches: [REGEX, ...]}")
    patterns = value["file-matches"]
    if not isinstance(patterns, list) or not patterns or not all(isinstance(p, str) for p in patterns):
        raise FieldError("when.file-matches must be a non-empty list of regular expressions")
    compiled = []
    for p in patterns:
        try:
            compiled.append(re.compile(p.encode()))
        except re.error as exc:
            raise FieldError(f"when.file-matches: bad regular expression {p!r}: {exc}") from None
    return FileCondition(tuple(patterns), tuple(compiled))


@dataclass(frozen=True)
class Origin:
    """Where an entry was written: for error messages and for citing the table in reports."""

    file: str
    line: int
    release: str


@dataclass(frozen=True)
class Entry:
    KIND: ClassVar[str] = ""
    # What identifies an entry inside one table (duplicates are errors) and which family it renames in.
    FAMILY: ClassVar[str] = ""
    FIELDS: ClassVar[dict[str, tuple[bool, object]]] = {}

    pr: int
    origin: Origin
    note: str | None
    # Provenance of machine-drafted entries (`verl-migrate derive`); curated tables leave them out.
    confidence: str | None = None
    evidence: str | None = None
    review: bool = False
    commit: str | None = None  # the verl commit that made the change (short sha), where recorded

    @property
    def identity(self) -> tuple:
        return (self.FAMILY, self.old)

    @property
    def pr_url(self) -> str:
        return pr_url(self.pr)

    def describe(self) -> str:
        return f"{self.KIND} {self.old}"


def check_scope(value: object) -> tuple[str, ...]:
    """Config names, family names (`scopes.yaml`) or entry modules a key entry applies to."""
    if not isinstance(value, list) or not value:
        raise FieldError("scope must be a non-empty list of config names, family names or entry modules")
    return tuple(check_module(v) for v in value)


def check_commit(value: object) -> str:
    if not isinstance(value, str) or not COMMIT_RE.match(value):
        raise FieldError(f"commit must be a verl commit hash (7 to 40 hex digits), got {value!r}")
    return value


# Optional on key entries and the entry-point kinds: where the entry applies and the PR's commit.
SCOPED = {"scope": (False, check_scope), "commit": (False, check_commit)}
COMMON = {"pr": (True, check_pr), "note": (False, check_text), "confidence": (False, check_confidence),
          "evidence": (False, check_text), "review": (False, check_review), "commit": (False, check_commit)}


@dataclass(frozen=True)
class PathMove(Entry):
    KIND = "path-move"
    FAMILY = "path"
    FIELDS = {"old": (True, check_path), "new": (True, check_path), "env": (False, check_env_presets),
              "args": (False, check_args), **COMMON}
    old: str = ""
    new: str = ""
    env: tuple[tuple[str, str], ...] = ()
    args: tuple[str, ...] = ()

    @property
    def is_directory(self) -> bool:
        return self.old.endswith("/")


@dataclass(frozen=True)
class PathRemoval(Entry):
    KIND = "path-removal"
    FAMILY = "path"
    FIELDS = {"old": (True, check_path), "hint": (True, check_text), **COMMON}
    old: str = ""
    hint: str = ""

    @property
    def is_directory(self) -> bool:
        return self.old.endswith("/")


@dataclass(frozen=True)
class KeyRename(Entry):
    KIND = "key-rename"
    FAMILY = "key"
    FIELDS = {"old": (True, check_key), "new": (True, check_key), **COMMON, **SCOPED}
    old: str = ""
    new: str = ""
    scope: tuple[str, ...] = ()
    commit: str | None = None

    @property
    def is_subtree(self) -> bool:
        return self.old.endswith(".*")

    @property
    def identity(self) -> tuple:
        return (self.FAMILY, self.old, self.scope)


@dataclass(frozen=True)
class KeyRemoval(Entry):
    KIND = "key-removal"
    FAMILY = "key"
    FIELDS = {"old": (True, check_key), "action": (True, check_action), "hint": (True, check_text), **COMMON,
              **SCOPED}
    old: str = ""
    action: str = "warn"
    hint: str = ""
    scope: tuple[str, ...] = ()
    commit: str | None = None

    @property
    def is_subtree(self) -> bool:
        return self.old.endswith(".*")

    @property
    def identity(self) -> tuple:
        return (self.FAMILY, self.old, self.scope)


@dataclass(frozen=True)
class KeyNoAction(Entry):
    KIND = "key-no-action"
    FAMILY = "key"
    FIELDS = {"old": (True, check_key), "why": (True, check_text), **COMMON, **SCOPED}
    old: str = ""
    why: str = ""
    scope: tuple[str, ...] = ()
    commit: str | None = None

    @property
    def is_subtree(self) -> bool:
        return self.old.endswith(".*")

    @property
    def identity(self) -> tuple:
        return (self.FAMILY, self.old, self.scope)


@dataclass(frozen=True)
class EnvRename(Entry):
    KIND = "env-rename"
    FAMILY = "env"
    FIELDS = {"old": (True, check_name), "new": (True, check_name), "value": (False, check_safe_value),
              "when": (False, check_when), **COMMON}
    old: str = ""
    new: str = ""
    value: str | None = None
    when: FileCondition | None = None

    @property
    def identity(self) -> tuple:
        return (self.FAMILY, self.old, self.value)


@dataclass(frozen=True)
class EnvRemoval(Entry):
    KIND = "env-removal"
    FAMILY = "env"
    FIELDS = {"old": (True, check_name), "value": (False, check_safe_value), "when": (False, check_when),
              "hint": (False, check_text), **COMMON}
    old: str = ""
    value: str | None = None
    when: FileCondition | None = None
    hint: str | None = None

    @property
    def identity(self) -> tuple:
        return (self.FAMILY, self.old, self.value)


@dataclass(frozen=True)
class ModuleMove(Entry):
    KIND = "module-move"
    FAMILY = "module"
    FIELDS = {"old": (True, check_module), "new": (True, check_module), **COMMON}
    old: str = ""
    new: str = ""


@dataclass(frozen=True)
class ModuleRemoval(Entry):
    """A module verl no longer ships (it left the repository): imports and `-m` uses become manual steps."""

    KIND = "module-removal"
    FAMILY = "module"
    FIELDS = {"old": (True, check_module), "hint": (True, check_text), **COMMON}
    old: str = ""
    hint: str = ""


@dataclass(frozen=True)
class ModuleNoAction(Entry):
    """A module that left verl but that users do not import (vendored internals): no edit, no report."""

    KIND = "module-no-action"
    FAMILY = "module"
    FIELDS = {"old": (True, check_module), "why": (True, check_text), **COMMON}
    old: str = ""
    why: str = ""


def split_symbol(ref: str) -> tuple[str, str]:
    """`pkg.mod:Name` -> (`pkg.mod`, `Name`)."""
    module, _, name = ref.partition(":")
    return module, name


@dataclass(frozen=True)
class SymbolMove(Entry):
    """`old` (`pkg.mod:Name`) is now `new` (`pkg.mod2:Name2`): the module, the name or both changed."""

    KIND = "symbol-move"
    FAMILY = "symbol"
    FIELDS = {"old": (True, check_symbol), "new": (True, check_symbol), "hint": (False, check_text), **COMMON}
    old: str = ""
    new: str = ""
    hint: str | None = None

    @property
    def target(self) -> str:
        return self.new


@dataclass(frozen=True)
class SymbolRename(SymbolMove):
    """A symbol-move written as a rename: `new` may be a bare name (same module)."""

    KIND = "symbol-rename"
    FIELDS = {"old": (True, check_symbol), "new": (True, check_symbol_or_name), "hint": (False, check_text),
              **COMMON}

    @property
    def target(self) -> str:
        return self.new if ":" in self.new else f"{split_symbol(self.old)[0]}:{self.new}"


@dataclass(frozen=True)
class SymbolRemoval(Entry):
    """A public name a module no longer binds, with nothing that replaces it one for one."""

    KIND = "symbol-removal"
    FAMILY = "symbol"
    FIELDS = {"old": (True, check_symbol), "hint": (True, check_text), **COMMON}
    old: str = ""
    hint: str = ""


@dataclass(frozen=True)
class KeywordRename(Entry):
    """A keyword argument of `function` (`pkg.mod:func`; a class: its constructor) was renamed."""

    KIND = "keyword-rename"
    FAMILY = "keyword"
    FIELDS = {"function": (True, check_symbol), "old": (True, check_identifier), "new": (True, check_identifier),
              **COMMON}
    function: str = ""
    old: str = ""
    new: str = ""

    @property
    def identity(self) -> tuple:
        return (self.FAMILY, self.function, self.old)

    def describe(self) -> str:
        return f"{self.KIND} {self.function}({self.old}=)"


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


@dataclass(frozen=True)
class VarRename(Entry):
    KIND = "var-rename"
    FAMILY = "var"
    FIELDS = {"old": (True, check_name), "new": (True, check_name), "when": (False, check_when), **COMMON}
    old: str = ""
    new: str = ""
    when: FileCondition | None = None


ENTRY_KINDS: dict[str, type[Entry]] = {
    cls.KIND: cls
    for cls in (PathMove, PathRemoval, KeyRename, KeyRemoval, KeyNoAction, EnvRename, EnvRemoval,
                ModuleMove, ModuleRemoval, ModuleNoAction, SymbolMove, SymbolRename, SymbolRemoval, KeywordRename,
                SignatureChange, VarRename)
}

RENAME_KINDS = (PathMove, KeyRename, EnvRename, ModuleMove, VarRename, SymbolMove, KeywordRename)
