"""Imports of verl that do not resolve at the target release, per the module facts (VM123, VM124).

After the table's edits, every absolute `import verl.x` / `from verl.x import Name` (and `recipe.x`
when the target release ships `recipe`) must name a module the release ships (or a package holding
one) and, for `from`, a name the module binds (private names and names it imports count: Python finds
them) or a submodule. One that does not gets a finding at its own place, saying whether verl removed
it (and in which release) or never had it (a fork's own name). The table's own findings and imports
inside `try: ... except ImportError:` (the file already handles a missing module; VM124, shown with
-v) are not reported as manual work. A release the facts do not know is not checked at all: the run
says so once (`unknown_release_note`), never per import.
"""

from __future__ import annotations

import ast
import bisect
import re
from functools import cached_property

from migrator.codes import finding_code
from migrator.edits import Edit, Finding, apply_edits
from migrator.layout import verl_layout
from migrator.mapping import MappingSet
from migrator.mapping.per_set import per_table_set
from migrator.rewrite.python.parsed import line_starts, lone_cr, other_encoding, parse

UNRESOLVED_CODE = "VM123"
GUARDED_CODE = "VM124"
_GUARDS = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException"})


def release_modules(maps: MappingSet) -> dict | None:
    """{release: {module: ModuleNames}} of the module facts, or None when they do not know the target."""
    history = maps.history
    if history is None or history.facts is None:
        return None
    facts = history.facts.module_names(tuple(history.releases))
    return facts if maps.to_release in facts else None


@per_table_set  # asked for every file
def import_roots(maps: MappingSet) -> set[str]:
    """The top-level packages whose imports are checked at the target: `verl`, and `recipe` while verl
    shipped it (from v0.9.0 recipes live in their own repository, which the facts do not cover)."""
    facts = release_modules(maps)
    return set() if facts is None else \
        {root for root in verl_layout().packages if any(m.split(".")[0] == root for m in facts[maps.to_release])}


def unknown_release_note(maps: MappingSet) -> str | None:
    """The one line a run prints when imports cannot be checked at its target."""
    history = maps.history
    if history is None or history.facts is None or not history.facts.has_modules or \
            history.facts.modules_cover(maps.to_release, tuple(history.releases)):
        return None
    return (f"note: verl-migrate ships no list of verl {maps.to_release}'s modules: "
            "imports of verl are not checked against it")


def unresolved_imports(source: bytes, maps: MappingSet, edits=None, findings=()) -> list[Finding]:
    """Findings for the imports that do not resolve once the table's `edits` are applied (the migration),
    or as written (`edits` None: the lint); `findings`, the table's (offsets into `source`), cover their spans."""
    if not any(root in source for root in verl_layout().package_bytes) or other_encoding(source):  # `ast` columns would not be byte offsets
        return []
    facts = release_modules(maps)
    roots = import_roots(maps)
    if facts is None or not roots:
        return []
    judge = _Judge(facts, maps, as_written=edits is None)
    after, applied, _ = apply_edits(source, list(edits or ()))
    covered = sorted(f.offset for f in findings)
    places = _Places(source, after, applied)

    def reported(start: int, end: int) -> bool:
        """Does a table finding lie in the statement at after[start:end] (the check below skips it)?"""
        first, last = places.original(start)[0], places.original(end)[0]
        at = bisect.bisect_left(covered, first)
        return at < len(covered) and covered[at] < max(last, first + 1)

    if _all_resolve_as_spelled(after, judge, roots, reported if covered else None):
        return []  # most files, migrated or not: every import line read and resolved without parsing the file
    tree = _parse(after)
    if tree is None:
        after, applied, tree = source, [], _parse(source)
        if tree is None:
            return []
        places = _Places(source, after, applied)
    out = []
    for node, guarded in _imports(tree.body, False):
        start, end, rewritten = places.span(node)
        if any(start <= offset < end for offset in covered):
            continue
        for place, message, hint, ref in judge.statement(node, roots):
            offset = places.original(places.offset(place.lineno, place.col_offset))[0]
            if rewritten:
                message += " (after the table's rewrite of this import)"
            if guarded:
                out.append(Finding(offset, "unresolved-import", message + "; the import is guarded by "
                                   "`except ImportError`", hint, severity="info", code=GUARDED_CODE))
            else:
                code = judge.code(ref)
                if code != UNRESOLVED_CODE and hint is None:  # a table's removal: its hint says what to use
                    hint = judge.removal(ref).hint
                elif hint is None and judge.as_written:  # the lint, on an import a table moves: the fix
                    hint = judge.move_hint(ref)
                out.append(Finding(offset, "unresolved-import", message, hint, code=code))
    return out


# The plain spellings of an import statement on its own line(s): `import a.b as c, d` and
# `from a.b import x as y, z` (the names in parentheses may span lines). Anything else that holds an import
# and a root word (`;`, a backslash, `import` inside other code) sends the file to the parser.
_NAME = rb"[A-Za-z_]\w*"
_DOTTED = _NAME + rb"(?:[ \t]*\.[ \t]*" + _NAME + rb")*"
_ALIASES = _DOTTED + rb"(?:[ \t]+as[ \t]+" + _NAME + rb")?(?:[ \t]*,[ \t]*" + _DOTTED + rb"(?:[ \t]+as[ \t]+" \
    + _NAME + rb")?)*"
_PLAIN_IMPORT = re.compile(
    rb"^[ \t]*(?:import[ \t]+(?P<modules>" + _ALIASES + rb")|from[ \t]+(?P<module>" + _DOTTED + rb")[ \t]+import"
    rb"[ \t]*(?:(?P<names>" + _ALIASES + rb")|\((?P<grouped>[\w \t\r\n,]*)\)))[ \t]*(?:,[ \t]*)?(?:#[^\n]*)?\r?$",
    re.MULTILINE)
_IMPORT_WORD = re.compile(rb"\bimport\b")
# A backslash that ends its line, `\r`s after it (a line `ast` ends at `\r\n`; a lone `\r` never gets here).
_CONTINUED = re.compile(rb"\\\r*(?:\n|\Z)")


def _all_resolve_as_spelled(source: bytes, judge: "_Judge", roots: set[str], reported=None) -> bool:
    """True when every line that could hold an import of a root is a plain import statement and each
    such import resolves at the target, or holds a finding of the table's (`reported(start, end)` of the
    statement's span: the check skips those): then no finding can come and the file need not be parsed.
    False means only "parse to know" (the parser decides what is code; a docstring's import is not one)."""
    if lone_cr(source):
        return False  # lines end in a lone `\r`: the parser's lines are not these
    plain_lines = set()
    line, counted = 0, 0
    for match in _PLAIN_IMPORT.finditer(source):
        line += source.count(b"\n", counted, match.start())
        counted = match.start()
        plain_lines.update(range(line, line + match.group(0).count(b"\n") + 1))
        if not _resolves(match, judge, roots) and not (reported is not None and reported(*_statement_span(match))):
            return False
    return not _other_import_lines(source, plain_lines)


def _other_import_lines(source: bytes, plain_lines: set[int]) -> bool:
    """Does a line outside `plain_lines` (0-based) hold the word `import` and a root's name, or does a line
    ending in a continuation, joined with the next, hold either? The lines with the word, and those that
    end in a backslash, are each found by one scan of the whole source (a loop over every line cost more
    than the rest of the check)."""
    packages = verl_layout().package_bytes
    line, counted = 0, 0
    for match in _IMPORT_WORD.finditer(source):
        line += source.count(b"\n", counted, match.start())
        counted = match.start()
        if line not in plain_lines and any(r in _line_at(source, match.start()) for r in packages):
            return True
    for match in _CONTINUED.finditer(source):
        following = _line_at(source, match.end()) if source.endswith(b"\n", 0, match.end()) else b""
        joined = _line_at(source, match.start()) + following
        if _IMPORT_WORD.search(joined) or any(r in joined for r in packages):
            return True
    return False


def _line_at(source: bytes, offset: int) -> bytes:
    """The line (without its `\\n`) that holds `offset`."""
    end = source.find(b"\n", offset)
    return source[source.rfind(b"\n", 0, offset) + 1:end if end >= 0 else None]


def _statement_span(match) -> tuple[int, int]:
    """Where the import statement a `_PLAIN_IMPORT` match holds starts and ends, as `ast` spans it:
    from its first keyword to its last name or closing parenthesis (no indent, no comment)."""
    text = match.group(0)
    start = match.start() + len(text) - len(text.lstrip(b" \t"))
    if match.group("grouped") is not None:
        return start, match.end("grouped") + 1
    return start, match.end("modules") if match.group("modules") is not None else match.end("names")


def _resolves(match, judge: "_Judge", roots: set[str]) -> bool:
    def dotted(text: bytes) -> str:
        return re.sub(rb"\s+", b"", text).decode("ascii", "replace")

    def aliases(text: bytes) -> list[str]:
        return [dotted(part.strip().split(b" as ")[0]) for part in text.strip().split(b",") if part.strip()]

    if match.group("modules") is not None:
        return all(m.split(".")[0] not in roots or judge.module_exists(m, judge.target)
                   for m in aliases(match.group("modules")))
    module = dotted(match.group("module"))
    if module.split(".")[0] not in roots:
        return True
    names = match.group("names") if match.group("names") is not None else match.group("grouped")
    listed = aliases(re.sub(rb"\s+", b" ", names))
    if not all(re.fullmatch(r"[A-Za-z_]\w*", n) for n in listed):
        return False
    return judge.module_exists(module, judge.target) and all(
        judge.name_exists(module, n, judge.target) for n in listed)


def _parse(source: bytes):
    try:
        return parse(source)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None


def _catches_import_error(node: ast.Try) -> bool:
    for handler in node.handlers:
        kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
        if any(k is None or (isinstance(k, ast.Name) and k.id in _GUARDS) or
               (isinstance(k, ast.Attribute) and k.attr in _GUARDS) for k in kinds):
            return True
    return False


def _imports(body, guarded: bool):
    """(import statement, whether a `try` that catches ImportError guards it: its body or a handler)."""
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node, guarded
            continue
        guard = isinstance(node, ast.Try) or type(node).__name__ == "TryStar"
        guard = guard and _catches_import_error(node)
        for field, value in ast.iter_fields(node):
            if not isinstance(value, list):
                continue
            inner = guarded or (guard and field in ("body", "handlers"))
            for item in value:
                if isinstance(item, (ast.excepthandler, ast.match_case)):
                    yield from _imports(item.body, inner)
                elif isinstance(item, ast.stmt):
                    yield from _imports([item], inner)


class _Places:
    """Offsets in the edited text mapped back to the original file."""

    def __init__(self, source: bytes, after: bytes, applied: list[Edit]):
        self.applied = sorted(applied, key=lambda e: e.start)
        self.after = after

    @cached_property
    def line_starts(self) -> list[int]:
        return line_starts(self.after)

    def offset(self, line: int, col: int) -> int:
        return self.line_starts[line - 1] + col

    def original(self, offset: int) -> tuple[int, bool]:
        """(the original offset, whether it lies in an edit's replacement)."""
        shift = 0
        for edit in self.applied:
            start = edit.start + shift
            if offset < start:
                break
            if offset < start + len(edit.replacement):
                return edit.start, True
            shift += len(edit.replacement) - (edit.end - edit.start)
        return offset - shift, False

    def span(self, node) -> tuple[int, int, bool]:
        start, first = self.original(self.offset(node.lineno, node.col_offset))
        end, last = self.original(self.offset(node.end_lineno, node.end_col_offset))
        inner = any(start <= e.start and e.end <= max(end, start + 1) for e in self.applied)
        return start, max(end, start + 1), first or last or inner


_PACKAGES: list = []  # [(the facts, {release: every dotted prefix of a module it ships})]: one per process


def _packages(facts: dict, release: str) -> frozenset[str]:
    """`a` and `a.b` for module `a.b.c`: the packages (namespace ones too) `release` ships. Kept for the
    facts in use: asked for each import that is not a module itself, which scanned every module."""
    if not _PACKAGES or _PACKAGES[0][0] is not facts:
        _PACKAGES[:] = [(facts, {})]
    known = _PACKAGES[0][1]
    if release not in known:
        known[release] = frozenset(name[:at] for name in facts[release] for at, char in enumerate(name) if char == ".")
    return known[release]


class _Judge:
    """Whether a module or name exists at the target, and what happened to it if not."""

    def __init__(self, facts: dict, maps: MappingSet, as_written: bool):
        self.facts = facts
        self.as_written = as_written
        self.maps = maps
        self.target = maps.to_release
        self.releases = [r for r in maps.history.releases if r in facts]
        self.modules = facts[self.target]

    def statement(self, node, roots):
        """(alias, message, hint) for each name of one import statement that does not resolve."""
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in roots and not self.module_exists(alias.name, self.target):
                    yield alias, self.module_message(alias.name), None, alias.name
            return
        module = node.module or ""
        if node.level or module.split(".")[0] not in roots:
            return
        if not self.module_exists(module, self.target):
            yield node, self.module_message(module), None, (module, *(a.name for a in node.names))
            return
        for alias in node.names:
            if alias.name != "*" and not self.name_exists(module, alias.name, self.target):
                yield alias, self.name_message(module, alias.name), self.elsewhere(alias.name), f"{module}:{alias.name}"

    def code(self, ref: str | tuple[str, ...]) -> str:
        """VM123; on the file as written (the lint), an import a table entry removes has the code the
        rewrite gives it (VM121 a module, VM125 a name): one problem, one code. `ref`: `module`,
        `module:Name`, or (module, the names a `from` imports: one a symbol entry moves is rewritten)."""
        if not self.as_written:
            return UNRESOLVED_CODE
        if isinstance(ref, tuple):
            module, *names = ref
            if any(getattr(self.maps.symbol(f"{module}:{name}"), "new", None) for name in names):
                return UNRESOLVED_CODE
        if self.removal(ref) is not None:
            return finding_code("module-removal" if ":" not in self._name(ref) else "symbol-removal", "manual")
        return UNRESOLVED_CODE

    @staticmethod
    def _name(ref) -> str:
        return ref[0] if isinstance(ref, tuple) else ref

    def move_hint(self, ref) -> str | None:
        """On the file as written: where a table entry moves the module or name `ref` names, as the fix."""
        name = self._name(ref)
        entry = self.maps.module(name) if ":" not in name else (
            self.maps.symbol(name) or self.maps.module(name.replace(":", ".")))
        if entry is None or entry.new is None:
            return None
        return f"moved to `{entry.new}`: run `verl-migrate --to {self.target}` on this file"

    def removal(self, ref):
        """The table's removal of the module or name `ref` names, or None."""
        ref = self._name(ref)
        entry = self.maps.module(ref) if ":" not in ref else self.maps.symbol(ref)
        return entry if entry is not None and entry.new is None else None

    def module_exists(self, module: str, release: str) -> bool:
        return module in self.facts[release] or module in _packages(self.facts, release)  # a namespace package

    def name_exists(self, module: str, name: str, release: str) -> bool:
        names = self.facts[release].get(module)
        return (names is not None and names.reaches(name)) or self.module_exists(f"{module}.{name}", release)

    def module_message(self, module: str) -> str:
        return f"`{module}` is not a module of verl {self.target} ({self.history(lambda r: self.module_exists(module, r), 'it', module)})"

    def name_message(self, module: str, name: str) -> str:
        return (f"`{module}` has no name `{name}` in verl {self.target} "
                f"({self.history(lambda r: self.name_exists(module, name, r), 'one', f'{module}:{name}')})")

    def history(self, present, pronoun: str, ref: str) -> str:
        """`it was removed in vX (no table entry)`, `it never had one: a fork's own name?`, or `it appears in vY`."""
        upto = self.releases.index(self.target)
        had = [i for i, r in enumerate(self.releases) if present(r)]
        before = [i for i in had if i < upto]
        if before:
            gone = self.releases[before[-1] + 1]
            entry = self.maps.module(ref) if ":" not in ref else self.maps.symbol(ref)
            if entry is None and ":" in ref:  # `from pkg import submodule`: the table moves it as a module
                entry = self.maps.module(ref.replace(":", "."))
            if entry is None:
                return f"removed in {gone}; no table entry"
            if self.as_written:
                return f"removed in {gone}; `verl-migrate --to {self.target}` rewrites or reports it"
            return f"removed in {gone}; its table entry does not lead to a module that has it"
        if had:
            return f"it first appears in {self.releases[had[0]]}: was the file written for a newer verl?"
        return ("no release ever had it: a fork's own module, or one from between releases?" if pronoun == "it"
                else "it never had one: a fork's own name, or one from between releases?")

    def elsewhere(self, name: str) -> str | None:
        """Where the target release defines `name`, when some module does (at most three)."""
        homes = sorted(m for m, names in self.modules.items() if name in names.defined)
        if not homes:
            return None
        return f"verl {self.target} defines `{name}` in " + ", ".join(homes[:3]) + (", ..." if len(homes) > 3 else "")
