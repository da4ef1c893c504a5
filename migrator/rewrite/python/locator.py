"""What each Python construct means for the migration, whichever parse front-end reports it.

Both front-ends (`ast_front`, `cst_front`) tell one `Locator` what they see, with byte spans of the
original file, so both produce the same edits and findings.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cached_property
from typing import NamedTuple

from migrator.edits import Edit, Finding, LocateResult
from migrator.mapping import MappingSet
from migrator.rewrite import launch_gate, literal, scan
from migrator.rewrite.python.config_access import METHODS, config_roots, locate_config_keys, might_spell_keys
from migrator.rewrite.shell_strings import SHELL_KEYWORD, SHELL_STRING_CALLS

# Calls whose string arguments are joined into one path (a path split over them cannot be edited).
PATH_JOINERS = frozenset({"os.path.join", "path.join", "osp.join", "Path", "pathlib.Path", "PurePath",
                          "PurePosixPath", "PosixPath"})
# The subprocess calls: each hands its first argument to a shell with `shell=True` (`SHELL_STRING_CALLS`
# always do).
SUBPROCESS_CALLS = frozenset({"subprocess.run", "subprocess.call", "subprocess.Popen", "subprocess.check_call",
                              "subprocess.check_output", "subprocess.getoutput", "subprocess.getstatusoutput"})
CALLS_OF_INTEREST = PATH_JOINERS | SHELL_STRING_CALLS | SUBPROCESS_CALLS
STRING_PREFIX = re.compile(r"[A-Za-z]*")


def result_of(locator: Locator) -> LocateResult:
    """The located edits and findings in one order whichever front-end found them (the engine sorts
    them again; one order lets the front-ends be compared)."""
    edits = sorted(locator.edits, key=lambda e: (e.start, e.end, e.replacement, e.kind, e.message, e.prs,
                                                  e.in_comment))
    findings = sorted(locator.findings, key=lambda f: (f.offset, f.kind, f.message, f.hint or "", f.prs,
                                                       f.severity))
    return LocateResult(tuple(edits), tuple(findings))


class StringLiteral(NamedTuple):
    """One string token (prefix and quotes included), as libcst's SimpleString."""

    start: int
    end: int
    prefix: str
    quote_len: int
    value: Callable[[], object]  # its evaluated value (str or bytes), computed only when asked


class CallArgument(NamedTuple):
    keyword: str | None
    string: StringLiteral | None  # the value when it is one string token
    is_true: bool  # the value is the name `True`


class Unsure(Exception):
    """The `ast` front-end cannot give libcst's exact spans here; libcst decides."""


def member_target(maps: MappingSet, module: str, member: str):
    """Where `from module import member` goes: (new `mod:name` or None when removed, entries, hint, kind),
    or None when it stays. A symbol entry decides first, then a module entry for `module.member` (a
    submodule, or any name of a moved package), then the module's own entry."""
    symbol = maps.symbol(f"{module}:{member}")
    if symbol is not None and symbol.explicit:
        kind = "symbol-removal" if symbol.new is None else "symbol-move"
        return symbol.new, symbol.entries, symbol.hint or _hint(symbol.entries), kind
    sub = maps.module(f"{module}.{member}")
    if sub is not None:
        if sub.new is None:
            return None, sub.entries, sub.hint, "module-removal"
        parent, _, last = sub.new.rpartition(".")
        return f"{parent}:{last}", sub.entries, None, "module-move"
    if symbol is not None:
        return symbol.new, symbol.entries, symbol.hint, "module-removal" if symbol.new is None else "module-move"
    return None


def _hint(entries) -> str | None:
    return next((e.hint for e in reversed(entries) if getattr(e, "hint", None)), None)


def _prs(entries) -> tuple[int, ...]:
    return tuple(dict.fromkeys(e.pr for e in entries))


def _kind(placed) -> str:
    return "symbol-move" if any(e.FAMILY == "symbol" for p in placed for e in p[5]) else "module-move"


# What an override's own edits are (its key renamed, its value renamed or mapped, a class path moved), and
# the rest of its word.
_OVERRIDE_EDITS = frozenset({"key-rename", "value-rename", "value-map", "target-move"})
_WORD_END = re.compile(rb"\S*")


class Locator:
    """The edits and findings for the constructs a front-end reports, in byte spans of the file.

    Spans of attribute chains and import names are asked for only when an edit needs them (`span_of`),
    since computing one costs a position lookup in libcst.
    """

    def __init__(self, maps: MappingSet, source: bytes):
        self.maps = maps
        self.src = source
        self.edits: list[Edit] = []
        self.findings: list[Finding] = []
        # `import a.b` (no alias) of moved modules: (name span, old, new, prs); resolved in finish().
        self.plain_imports: list[tuple[tuple[int, int], str, str, tuple[int, ...]]] = []
        self.kept_roots: set[str] = set()  # root names some untouched import still binds
        # (root name,) for a bare name; (root name, names, span_of) for an attribute chain on a name.
        self.root_uses: list[tuple] = []
        self.shell_strings: set[int] = set()  # starts of string tokens already handled as shell commands

    def add_text(self, start: int, end: int, **kwargs) -> None:
        if kwargs.get("whole_key"):
            change = literal.whole_key_change(self.maps, self.src[start:end])
            if change is not None and change.action == "rename":
                return  # a key spelt as a string: renamed or reported with its other spellings (config_access)
        edits, findings = literal.text_edits(self.src, start, end, self.maps, **kwargs)
        if edits and not kwargs.get("in_comment") and not launch_gate.hydra_reads(self.src[start:end],
                                                                                  self.launches_verl):
            edits = self._overrides_by_hand(start, end, edits, kwargs.get("span_starts_word", True),
                                            kwargs.get("escapes", False))
        self.edits.extend(edits)
        self.findings.extend(findings)

    @cached_property
    def launches_verl(self) -> bool:
        return self.maps.file_launches_verl or launch_gate.launches_verl(self.src)

    def _overrides_by_hand(self, start: int, end: int, edits: list[Edit], span_starts_word: bool,
                           escapes: bool) -> list[Edit]:
        """The edits of `key=value` overrides in a string verl's Hydra does not read (a file that launches
        nothing, prose, a help text): manual steps with the exact replacement, as in shell; the string's
        other edits (paths, modules, `${...}` interpolations) stand."""
        overrides = [(m.start("key"), _WORD_END.match(self.src, m.end(), end).end())
                     for m in literal.override_matches(self.src, start, end, span_starts_word, escapes)
                     if m.group("eq") is not None]
        kept = []
        for edit in edits:
            if edit.kind in _OVERRIDE_EDITS and any(a <= edit.start < b for a, b in overrides):
                self.findings.append(launch_gate.edit_not_read(edit, self.src[edit.start:edit.end]))
            else:
                kept.append(edit)
        return kept

    # -- imports -------------------------------------------------------------------------------------
    def import_name(self, name: str | None, has_alias: bool, span_of: Callable[[], tuple[int, int]]) -> None:
        """One name of `import a.b.c [as d]`."""
        change = self.maps.module(name) if name else None
        if change is None:
            if not has_alias and name:
                self.kept_roots.add(name.split(".")[0])
            return
        prs = tuple(e.pr for e in change.entries)
        start, end = span_of()
        if change.new is None:
            self.findings.append(Finding(start, "module-removal", f"`import {name}`: {name} was removed; "
                                         "change this code by hand", change.hint, prs))
            return
        if has_alias:
            self.edits.append(Edit(start, end, change.new.encode(), "module-move", f"{name} -> {change.new}", prs))
        elif "." not in name:
            self.edits.append(Edit(start, end, f"{change.new} as {name}".encode(), "module-move",
                                   f"{name} -> {change.new} (bound as {name})", prs))
        else:
            self.plain_imports.append(((start, end), name, change.new, prs))

    def import_from(self, name: str, span: tuple[int, int],
                    members: list[tuple[str | None, str | None, Callable[[], tuple[int, int]]]] | None,
                    statement: tuple[int, int] | None = None) -> None:
        """`from name import members` (absolute); members None for `import *`; each member is
        (name, its `as` name or None, span_of its name); `statement`: the span of the whole statement."""
        start, end = span
        if members is None:
            change = self.maps.module(name)
            if change is not None and change.new is None:
                self.findings.append(Finding(start, "module-removal", f"`from {name} import *`: {name} was removed; "
                                             "change this code by hand", change.hint, change.prs))
            elif change is not None:
                self.edits.append(Edit(start, end, change.new.encode(), "module-move", f"{name} -> {change.new}",
                                       change.prs))
            return
        change = self.maps.module(name)
        if change is not None and change.new is None and not any(
                getattr(self.maps.symbol(f"{name}:{member}"), "explicit", False) for member, _, _ in members if member):
            self.findings.append(Finding(start, "module-removal", f"`from {name} import ...`: {name} was removed; "
                                         "change this code by hand", change.hint, change.prs))
            return
        # Where each member goes: (new module, new name, entries, hint); entries () means it stays.
        placed = []
        for member, alias, span_of in members:
            if member is None:
                return
            target = member_target(self.maps, name, member)
            if target is None:
                placed.append((member, alias, span_of, name, member, (), None))
                continue
            new, entries, hint, kind = target
            if new is None:
                self.findings.append(Finding(start, kind, f"`from {name} import {member}`: {name}.{member} was "
                                             "removed; change this code by hand", hint, _prs(entries)))
                placed.append((member, alias, span_of, name, member, (), None))
                continue
            module, _, new_name = new.rpartition(":")
            placed.append((member, alias, span_of, module, new_name, entries, hint))
        if not any(p[5] for p in placed):
            return
        groups: dict[str, list] = {}
        for p in placed:
            groups.setdefault(p[3], []).append(p)
        prs = _prs(e for p in placed for e in p[5])
        olds = ", ".join(f"{name}.{p[0]} -> {p[3]}.{p[4]}" for p in placed if p[5])
        hints = "; ".join(dict.fromkeys(p[6] for p in placed if p[6]))
        message = olds + (f" ({hints})" if hints else "")
        if len(groups) == 1:
            (module,) = groups
            if module != name:
                plain = all(p[4] == p[0] for p in placed) and _kind(placed) == "module-move"
                self.edits.append(Edit(start, end, module.encode(), _kind(placed),
                                       f"{name} -> {module}" if plain else message, prs))
            for member, alias, span_of, _, new_name, entries, _ in placed:
                if new_name != member:
                    a_start, a_end = span_of()
                    text = new_name if alias is not None else f"{new_name} as {member}"
                    self.edits.append(Edit(a_start, a_end, text.encode(), _kind(placed),
                                           f"{name}.{member} -> {module}.{new_name} (bound as {alias or member})",
                                           _prs(entries)))
            return
        lines = [f"from {module} import " + ", ".join(
            new_name if (alias or member) == new_name else f"{new_name} as {alias or member}"
            for member, alias, _, _, new_name, _, _ in group) for module, group in groups.items()]
        split = self.split_statement(statement, lines)
        if split is None:
            self.findings.append(Finding(start, _kind(placed), f"names imported here moved to different modules "
                                         f"({olds}); split this import by hand", hints or None, prs))
            return
        self.edits.append(Edit(*split, _kind(placed), f"{message} (import split)", prs))

    def split_statement(self, statement: tuple[int, int] | None, lines: list[str]) -> tuple[int, int, bytes] | None:
        """The edit that replaces a statement alone on its line(s) by `lines`, at its indentation and with
        its line ending; None where that would lose something (a comment inside, `;`-joined statements)."""
        if statement is None:
            return None
        start, end = statement
        line_start = self.src.rfind(b"\n", 0, start) + 1
        line_end = self.src.find(b"\n", end)
        line_end = len(self.src) if line_end == -1 else line_end
        indent, rest = self.src[line_start:start], self.src[end:line_end].rstrip(b"\r")
        if indent.strip(b" \t") or b"#" in self.src[start:end] or (rest.strip() and not rest.lstrip().startswith(b"#")):
            return None
        newline = b"\r\n" if self.src[line_end - 1:line_end + 1] == b"\r\n" else b"\n"
        return start, end, (newline + indent).join(line.encode() for line in lines)

    # -- names and attribute chains ------------------------------------------------------------------
    def name(self, value: str) -> None:
        """A name used outside an import and outside an attribute chain on a name."""
        self.root_uses.append((value,))

    def attribute_chain(self, names: list[str], span_of: Callable[[int], tuple[int, int]]) -> None:
        """`root.attr1.attr2...` outside an import; span_of(i) is the span of names[i]."""
        self.root_uses.append((names[0], names, span_of))
        if names[-1] in METHODS:  # `cfg.a.b.get(...)`: `get` is DictConfig's, no key `a.b.get`
            names = names[:-1]
        roots = config_roots(self.maps)
        for i in range(1, len(names) - 1):
            if i > 1 and names[i - 1] in roots:
                break  # the chain is inside the config already: `cfg.ray_kwargs.ray_init` is no `ray_init` key
            for j in range(len(names) - 1, i, -1):
                change = literal.key_target(self.maps, ".".join(names[i:j + 1]))
                if change is None:
                    continue
                start = span_of(i)[0]
                if change.action == "rename":
                    pass  # renamed or reported with every other spelling of the key (config_access)
                elif change.action == "warn":
                    self.findings.append(Finding(start, "key-warn", f"{change.old}: {literal.first_note(change)}",
                                                 change.hint, change.prs, severity="warning"))
                else:
                    self.findings.append(Finding(start, "key-removal", f"{change.old} was removed; "
                                                 "change this code by hand", change.hint, change.prs))
                return

    # -- strings and calls ---------------------------------------------------------------------------
    def string(self, literal_: StringLiteral, continues_after: bool = False) -> None:
        """`continues_after`: an implicitly joined string that may go on with a name follows it."""
        if literal_.start in self.shell_strings:
            return
        self.add_text(literal_.start + len(literal_.prefix) + literal_.quote_len, literal_.end - literal_.quote_len,
                      escapes="r" not in literal_.prefix.lower(), whole_key=True, continues_after=continues_after)

    def call(self, func: str, call_start: int, args: list[CallArgument]) -> None:
        """A call of one of CALLS_OF_INTEREST, before its arguments are visited."""
        if func in SHELL_STRING_CALLS or func in SUBPROCESS_CALLS:
            self.shell_command(func, args)
        if func not in PATH_JOINERS or len(args) < 2:
            return
        pieces = []
        for arg in args:
            if arg.string is None:
                return
            value = arg.string.value()
            if not isinstance(value, str):
                return
            pieces.append(value.strip("/"))
        joined = "/".join(pieces).encode("utf-8", "replace")
        for path_start, path_end, change in scan.find_paths(joined, 0, len(joined), self.maps):
            old = joined[path_start:path_end].decode("ascii")
            where = f"moved to {change.new}" if change.new else f"was removed ({change.hint})"
            self.findings.append(Finding(call_start, "path-move" if change.new else "path-removal",
                                         f"{func}(...) builds {old}, which {where}; edit the pieces by hand",
                                         None, change.prs))

    def shell_command(self, func: str, args: list[CallArgument]) -> None:
        """A command string run by a shell goes through the shell rewriter (env presets, removals)."""
        shell = func in SHELL_STRING_CALLS or any(
            a.keyword == SHELL_KEYWORD and a.is_true for a in args)
        if not shell or not args or args[0].string is None:
            return
        string = args[0].string
        start, end = string.start + len(string.prefix) + string.quote_len, string.end - string.quote_len
        content = self.src[start:end]
        if b"\\" in content or "b" in string.prefix.lower():
            return  # the source bytes are not the command's bytes; the plain string scan handles it
        from migrator.rewrite import embedded
        from migrator.rewrite import shell as shell_rewriter

        self.shell_strings.add(string.start)
        embedded.block_edits(shell_rewriter, "block.bash", self.src, start, end, self.maps, self.edits,
                             self.findings)

    # -- `import a.b` without an alias ---------------------------------------------------------------
    def finish(self, no_keys: list[tuple[int, int]] = ()) -> None:
        """Rewrite `import old.mod` and its `old.mod.x` references together, or report a manual step;
        config keys in every spelling, over the whole file (config_access), unless the only names of keys
        it holds are inside `no_keys` (sorted spans of strings that `cannot_spell_key`)."""
        self.finish_plain_imports()
        if might_spell_keys(self.src, self.maps, no_keys):
            edits, findings = locate_config_keys(self.src, self.maps)
            self.edits.extend(edits)
            self.findings.extend(findings)

    def finish_plain_imports(self) -> None:
        """`import old.mod` (no alias) and its `old.mod.x` references."""
        by_root: dict[str, list] = {}
        for span, old, new, prs in self.plain_imports:
            by_root.setdefault(old.split(".")[0], []).append((span, old, new, prs))
        for root, imports in by_root.items():
            olds = sorted({old for _, old, _, _ in imports}, key=len, reverse=True)
            rewrites, stray = [], False
            for use in self.root_uses:
                if use[0] != root:
                    continue
                if len(use) == 1:  # a bare `root` name
                    stray = True
                    continue
                _, names, span_of = use
                match = next((o for o in olds if ".".join(names[:o.count(".") + 1]) == o), None)
                if match is None:
                    stray = True
                else:
                    rewrites.append((span_of, match))
            if stray and root not in self.kept_roots:
                for span, old, new, prs in imports:
                    self.findings.append(Finding(
                        span[0], "module-move",
                        f"`import {old}`: {old} moved to {new}, and this file also uses `{root}` for other things; "
                        f"change the import to `import {new}` and its `{old}.` references by hand", None, prs))
                continue
            news = {old: (new, prs) for _, old, new, prs in imports}
            for span, old, new, prs in imports:
                self.edits.append(Edit(span[0], span[1], new.encode(), "module-move", f"{old} -> {new}", prs))
            for span_of, old in rewrites:
                new, prs = news[old]
                start, end = span_of(0)[0], span_of(old.count("."))[1]
                self.edits.append(Edit(start, end, new.encode(), "module-move", f"{old} -> {new} (reference)", prs))
