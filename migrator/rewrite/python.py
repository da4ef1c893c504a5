"""Python launchers: moved modules in imports, `-m`/`runpy` module strings, Hydra overrides in string
literals (f-string literal parts included), old script paths, and config keys spelt as attribute chains.

What each construct means for the migration lives in one place, `_Locator`; two parse front-ends feed
it byte spans of the original file, so every edit is a byte span and everything else stays byte for byte:
- the stdlib `ast` (`_locate_ast`), for the top-level statements that hold an old name, whenever every
  such name sits where `ast` gives exact positions (strings, imports, names and attribute chains);
- libcst (`python_cst`), the reference: it also sees comments and f-string parts, and takes every
  file the `ast` front-end declines. libcst is imported only then (~0.1 s of start-up per process).
"""

from __future__ import annotations

import ast
import bisect
import re
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

from migrator.edits import Edit, Finding, LocateResult, SourceNotParsed
from migrator.mapping import MappingSet
from migrator.rewrite import literal, scan

if TYPE_CHECKING:
    from migrator.prefilter import Prefilter

KIND = "python"

# Calls whose string arguments are joined into one path (a path split over them cannot be edited).
PATH_JOINERS = frozenset({"os.path.join", "path.join", "osp.join", "Path", "pathlib.Path", "PurePath",
                          "PurePosixPath", "PosixPath"})
# Calls that hand their first argument to a shell (subprocess.* only with shell=True).
SHELL_CALLS = frozenset({"os.system", "os.popen"})
SUBPROCESS_CALLS = frozenset({"subprocess.run", "subprocess.call", "subprocess.Popen", "subprocess.check_call",
                              "subprocess.check_output", "subprocess.getoutput", "subprocess.getstatusoutput"})
CALLS_OF_INTEREST = PATH_JOINERS | SHELL_CALLS | SUBPROCESS_CALLS
STRING_PREFIX = re.compile(r"[A-Za-z]*")


_QUICK_CHECKS: list[tuple[MappingSet, Prefilter, bool]] = []


def _quick_check(mappings: MappingSet) -> tuple[Prefilter, bool]:
    """The prefilter's Aho-Corasick search over this rewriter's tokens (whole names; `.starts` for every
    occurrence), and whether a token spans lines. One per composed table set, built once per process:
    a flat regex alternation of hundreds of tokens cost ~0.1 s to compile in every worker."""
    from migrator.prefilter import Prefilter

    for maps, search, multiline in _QUICK_CHECKS:
        if maps is mappings:
            return search, multiline
    tokens = mappings.old_tokens() | {m.rsplit(".", 1)[-1] for m in mappings.old_modules()} \
        | {p.rstrip("/").rsplit("/", 1)[-1] for p in mappings.old_paths()}
    search, multiline = Prefilter(tokens), any("\n" in token for token in tokens)
    _QUICK_CHECKS[:] = [(mappings, search, multiline)]
    return search, multiline


_CONFIG_ROOTS: dict[int, frozenset[str]] = {}


def _config_roots(mappings: MappingSet) -> frozenset[str]:
    """The top-level config nodes of the target release (empty without shipped facts)."""
    key = id(mappings)
    if key not in _CONFIG_ROOTS:
        facts = mappings.history.facts if mappings.history is not None else None
        keys = facts.keys(mappings.to_release) if facts is not None else ()
        _CONFIG_ROOTS.clear()
        _CONFIG_ROOTS[key] = frozenset(k.split(".", 1)[0] for k in keys)
    return _CONFIG_ROOTS[key]


def _might_change(source: bytes, mappings: MappingSet) -> bool:
    """Python never nests keys, so an old dotted token, a moved module's last name (`from a import b`)
    or an old path's last segment (`os.path.join(..., "x.sh")`) must occur; this skips parsing for
    nearly every file."""
    return _quick_check(mappings)[0](source)


def locate(source: bytes, mappings: MappingSet, path: str = "") -> LocateResult:
    if not _might_change(source, mappings):
        return LocateResult((), ())
    fast = _locate_ast(source, mappings)
    if fast is not None:
        return fast
    from migrator.rewrite import python_cst

    fast = python_cst.locate_statements(source, mappings)
    return fast if fast is not None else python_cst.locate_module(source, mappings)


def _locate_statements(source: bytes, mappings: MappingSet) -> LocateResult | None:
    from migrator.rewrite import python_cst

    return python_cst.locate_statements(source, mappings)


def _locate_module(source: bytes, mappings: MappingSet) -> LocateResult:
    from migrator.rewrite import python_cst

    return python_cst.locate_module(source, mappings)


def result_of(locator: _Locator) -> LocateResult:
    """The located edits and findings in one order whichever front-end found them (the engine sorts
    them again; one order lets the front-ends be compared)."""
    edits = sorted(locator.edits, key=lambda e: (e.start, e.end, e.replacement, e.kind, e.message, e.prs,
                                                  e.in_comment))
    findings = sorted(locator.findings, key=lambda f: (f.offset, f.kind, f.message, f.hint or "", f.prs,
                                                       f.severity))
    return LocateResult(tuple(edits), tuple(findings))


# -- choosing the statements to look at --------------------------------------------------------------

# PEP 263: a coding cookie on line 1 or 2 (any cookie, even utf-8, takes the whole-file path).
_COOKIE = re.compile(rb"^[ \t\f]*#.*?coding[:=]", re.MULTILINE)


class Statements(NamedTuple):
    """The top-level statements that hold an old token, as [first line, last line, ast statements]."""

    chosen: dict[int, list]
    roots: set[str]  # `import a.b` of a moved module: every statement naming `a` is chosen too
    line_starts: list[int]
    occurrences: list[int]  # sorted offsets of every token occurrence
    outside: list[int]  # the occurrences on lines outside every statement (comments, for valid Python)


def choose_statements(source: bytes, mappings: MappingSet) -> Statements | None:
    """The top-level statements that matter, or None when the whole file must be parsed.

    Everything the locator reports lies inside a node that holds an old token (`_might_change`), and
    every node but a comment between statements lies inside one top-level statement; the stdlib `ast`
    gives each statement's lines. `import a.b` of a moved module also needs every use of the name `a`
    and every import binding it (`finish()`): those statements all contain the text `a`, so they are
    chosen too. None whenever that argument does not hold or cannot be checked cheaply: a BOM, a
    coding cookie or a `\\r` (line numbering), a file `ast` rejects (libcst's errors and encodings stay
    as they are). Tokens outside every statement's lines (a comment between statements, at the end
    of a block or of the file) are listed in `outside`.
    """
    if source.startswith(b"\xef\xbb\xbf") or b"\r" in source:
        return None
    if _COOKIE.search(b"\n".join(source.split(b"\n", 2)[:2])):
        return None
    try:
        with warnings.catch_warnings():  # invalid escapes warn; libcst never did
            warnings.simplefilter("ignore")
            tree = ast.parse(source)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    line_starts = [0]
    line_starts.extend(m.end() for m in re.finditer(rb"\n", source))
    # [first line, last line, statements]; statements sharing a line (`a = 1; b = 2`) are one span, as
    # they are one libcst SimpleStatementLine: every span is exactly one statement of libcst's.
    spans: list[list] = []
    for stmt in tree.body:
        first = min([stmt.lineno] + [d.lineno for d in getattr(stmt, "decorator_list", ())])
        if spans and first <= spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], stmt.end_lineno)
            spans[-1][2].append(stmt)
        else:
            spans.append([first, stmt.end_lineno, [stmt]])

    def covering(starts, chosen: dict) -> list[int]:
        """Add the spans holding these offsets to chosen; the offsets in no span."""
        index, outside = 0, []
        for start in sorted(starts):
            line = bisect.bisect_right(line_starts, start)
            index = bisect.bisect_left(spans, line, index, key=lambda span: span[1])
            if index == len(spans) or spans[index][0] > line:
                outside.append(start)
                continue
            chosen[index] = spans[index]
        return outside

    chosen: dict[int, list] = {}
    search, multiline = _quick_check(mappings)
    if multiline:
        return None
    occurrences = sorted(search.starts(source))
    outside = covering(occurrences, chosen)
    roots = {alias.name.split(".")[0] for span in chosen.values() for stmt in span[2] for node in ast.walk(stmt)
             if isinstance(node, ast.Import) for alias in node.names
             if alias.asname is None and "." in alias.name and _moved(mappings, alias.name)}
    if roots:
        from migrator.prefilter import occurrences as word_starts

        covering(word_starts(source, tuple(root.encode() for root in roots)), chosen)
    return Statements(chosen, roots, line_starts, occurrences, outside)


def _moved(mappings: MappingSet, module: str) -> bool:
    change = mappings.module(module)
    return change is not None and change.new is not None


# -- what each construct means ------------------------------------------------------------------------

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


class _Locator:
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
        edits, findings = literal.text_edits(self.src, start, end, self.maps, **kwargs)
        self.edits.extend(edits)
        self.findings.extend(findings)

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
                    members: list[tuple[str | None, bool, Callable[[], tuple[int, int]]]] | None) -> None:
        """`from name import members` (absolute); members None for `import *`; each member is
        (name, has an alias, span_of its name)."""
        change = self.maps.module(name)
        start, end = span
        if change is not None and change.new is None:
            self.findings.append(Finding(start, "module-removal", f"`from {name} import ...`: {name} was removed; "
                                         "change this code by hand", change.hint, change.prs))
            return
        if change is not None:
            self.edits.append(Edit(start, end, change.new.encode(), "module-move", f"{name} -> {change.new}",
                                   tuple(e.pr for e in change.entries)))
            return
        if members is None:
            return
        moved = []
        for member, has_alias, span_of in members:
            sub = self.maps.module(f"{name}.{member}") if member else None
            if sub is not None and sub.new is None:
                self.findings.append(Finding(start, "module-removal", f"`from {name} import {member}`: "
                                             f"{name}.{member} was removed; change this code by hand",
                                             sub.hint, sub.prs))
            elif sub is not None:
                moved.append((member, has_alias, span_of, sub))
        if not moved:
            return
        parents = {sub.new.rpartition(".")[0] for *_, sub in moved}
        new_parent = parents.pop() if len(parents) == 1 else None
        if new_parent is None or (new_parent != name and len(moved) != len(members)):
            olds = ", ".join(f"{name}.{member} -> {sub.new}" for member, _, _, sub in moved)
            self.findings.append(Finding(start, "module-move", f"modules imported here moved ({olds}); "
                                         "split this import by hand", None,
                                         tuple(e.pr for *_, sub in moved for e in sub.entries)))
            return
        prs = tuple(dict.fromkeys(e.pr for *_, sub in moved for e in sub.entries))
        if new_parent != name:
            self.edits.append(Edit(start, end, new_parent.encode(), "module-move", f"{name} -> {new_parent}", prs))
        for member, has_alias, span_of, sub in moved:
            last = sub.new.rpartition(".")[2]
            if last == member:
                continue
            a_start, a_end = span_of()
            text = last if has_alias else f"{last} as {member}"
            self.edits.append(Edit(a_start, a_end, text.encode(), "module-move",
                                   f"{name}.{member} -> {sub.new} (bound as {member})", prs))

    # -- names and attribute chains ------------------------------------------------------------------
    def name(self, value: str) -> None:
        """A name used outside an import and outside an attribute chain on a name."""
        self.root_uses.append((value,))

    def attribute_chain(self, names: list[str], span_of: Callable[[int], tuple[int, int]]) -> None:
        """`root.attr1.attr2...` outside an import; span_of(i) is the span of names[i]."""
        self.root_uses.append((names[0], names, span_of))
        roots = _config_roots(self.maps)
        for i in range(1, len(names) - 1):
            if i > 1 and names[i - 1] in roots:
                break  # the chain is inside the config already: `cfg.ray_kwargs.ray_init` is no `ray_init` key
            for j in range(len(names) - 1, i, -1):
                change = literal.key_target(self.maps, ".".join(names[i:j + 1]))
                if change is None:
                    continue
                start, end = span_of(i)[0], span_of(j)[1]
                if change.action == "rename":
                    self.edits.append(Edit(start, end, change.new.encode(), "key-rename",
                                           f"{change.old} -> {change.new}", change.prs))
                elif change.action == "warn":
                    self.findings.append(Finding(start, "key-warn", f"{change.old}: {literal.first_note(change)}",
                                                 change.hint, change.prs, severity="warning"))
                else:
                    self.findings.append(Finding(start, "key-removal", f"{change.old} was removed; "
                                                 "change this code by hand", change.hint, change.prs))
                return

    # -- strings and calls ---------------------------------------------------------------------------
    def string(self, literal_: StringLiteral) -> None:
        if literal_.start in self.shell_strings:
            return
        self.add_text(literal_.start + len(literal_.prefix) + literal_.quote_len, literal_.end - literal_.quote_len,
                      escapes="r" not in literal_.prefix.lower(), whole_key=True)

    def call(self, func: str, call_start: int, args: list[CallArgument]) -> None:
        """A call of one of CALLS_OF_INTEREST, before its arguments are visited."""
        if func in SHELL_CALLS or func in SUBPROCESS_CALLS:
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
        shell = func in SHELL_CALLS or func in ("subprocess.getoutput", "subprocess.getstatusoutput") or any(
            a.keyword == "shell" and a.is_true for a in args)
        if not shell or not args or args[0].string is None:
            return
        string = args[0].string
        start, end = string.start + len(string.prefix) + string.quote_len, string.end - string.quote_len
        content = self.src[start:end]
        if b"\\" in content or "b" in string.prefix.lower():
            return  # the source bytes are not the command's bytes; the plain string scan handles it
        from migrator.rewrite.markdown import code_block_edits

        self.shell_strings.add(string.start)
        code_block_edits(self.src, start, end, b"bash", self.maps, self.edits, self.findings)

    # -- `import a.b` without an alias ---------------------------------------------------------------
    def finish(self) -> None:
        """Rewrite `import old.mod` and its `old.mod.x` references together, or report a manual step."""
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


# -- the `ast` front-end ------------------------------------------------------------------------------

# One string token: optional prefix letters, then one quoted literal and nothing after it (an implicit
# concatenation `"a" "b"` is one ast.Constant but several libcst SimpleStrings).
_STRING_TOKEN = re.compile(
    rb"[A-Za-z]{0,3}(?:'''(?:[^\\']|\\.|'(?!''))*'''|\"\"\"(?:[^\\\"]|\\.|\"(?!\"\"))*\"\"\""
    rb"|'(?:[^\\'\n]|\\.)*'|\"(?:[^\\\"\n]|\\.)*\")", re.DOTALL)
_FROM_MODULE = re.compile(rb"from[ \t]+([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)[ \t]")
_IDENTIFIER_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")


def _locate_ast(source: bytes, mappings: MappingSet) -> LocateResult | None:
    """libcst's result from the stdlib `ast` of the chosen statements, or None when unsure.

    `ast` has no exact positions inside f-strings or implicitly joined strings, and it spells some
    names as plain strings (`def f`, `f(x=1)`). So it declines whenever an old token occurs inside an
    f-string or a joined string, or when a name that `import a.b` binds occurs anywhere but an
    expression name, an attribute, an import, a string or a comment. `ast` has no comments either;
    they are found from the strings it does place: a `#` outside every string token starts one.
    """
    statements = choose_statements(source, mappings)
    if statements is None:
        return None
    walker = _AstWalker(source, statements, _Locator(mappings, source))
    try:
        for index in sorted(statements.chosen):
            for stmt in statements.chosen[index][2]:
                walker.walk(stmt)
        walker.comments()
        walker.check_roots()
    except Unsure:
        return None
    locator = walker.locator
    if not {old.split(".")[0] for _, old, _, _ in locator.plain_imports} <= statements.roots:
        return None
    locator.finish()
    return result_of(locator)


class _AstWalker:
    def __init__(self, source: bytes, statements: Statements, locator: _Locator):
        self.src = source
        self.line_starts = statements.line_starts
        self.occurrences = statements.occurrences
        self.outside = statements.outside
        self.roots = statements.roots
        self._string_starts: list[int] | None = None
        self._string_spans: list[tuple[int, int]] = []
        self.locator = locator
        self.strings: list[tuple[int, int]] = []  # single string tokens
        self.opaque: list[tuple[int, int]] = []  # f-strings and joined strings
        self.imports: list[tuple[int, int]] = []
        self.root_names: set[int] = set()  # starts of expression names and attributes spelling a root
        self.chosen_ranges = [(self.line_starts[span[0] - 1],
                               self.line_starts[span[1]] if span[1] < len(self.line_starts) else len(source))
                              for _, span in sorted(statements.chosen.items())]

    def offset(self, line: int, col: int) -> int:
        return self.line_starts[line - 1] + col

    def span(self, node) -> tuple[int, int]:
        return self.offset(node.lineno, node.col_offset), self.offset(node.end_lineno, node.end_col_offset)

    def spelled(self, start: int, text: str) -> tuple[int, int]:
        """The span of `text` at start, which must be spelt exactly so (no NFKC-normalised names)."""
        raw = text.encode()
        if self.src[start:start + len(raw)] != raw:
            raise Unsure
        return start, start + len(raw)

    def string_literal(self, node) -> StringLiteral | None:
        """The node as one string token, or None (not a str/bytes constant, or several tokens)."""
        if type(node) is not ast.Constant or not isinstance(node.value, (str, bytes)):
            return None
        start, end = self.span(node)
        text = self.src[start:end]
        if not _STRING_TOKEN.fullmatch(text):
            self.opaque.append((start, end))
            return None
        prefix = STRING_PREFIX.match(text.decode("latin-1")).group()
        quote_len = 3 if text[len(prefix):len(prefix) + 3] in (b'"""', b"'''") else 1
        value = node.value
        return StringLiteral(start, end, prefix, quote_len, lambda: value)

    def walk(self, root) -> None:
        stack = [root]
        locator = self.locator
        while stack:
            node = stack.pop()
            kind = type(node)
            if kind is ast.Import:
                self.imports.append(self.span(node))
                for alias in node.names:
                    start = self.offset(alias.lineno, alias.col_offset)
                    span = self.spelled(start, alias.name)
                    locator.import_name(alias.name, alias.asname is not None, lambda span=span: span)
                continue
            if kind is ast.ImportFrom:
                self.import_from(node)
                continue
            if kind is ast.Attribute:
                self.attribute(node, stack)
                continue
            if kind is ast.Name:
                if node.id in self.roots:
                    self.root_names.add(self.spelled(self.offset(node.lineno, node.col_offset), node.id)[0])
                locator.name(node.id)
                continue
            if kind is ast.Constant:
                literal_ = self.string_literal(node)
                if literal_ is not None:
                    self.strings.append((literal_.start, literal_.end))
                    locator.string(literal_)
                continue
            if kind is ast.JoinedStr:
                self.opaque.append(self.span(node))
                continue
            if kind is ast.Call:
                self.call(node)
            stack.extend(reversed(list(ast.iter_child_nodes(node))))

    def import_from(self, node) -> None:
        start, end = self.span(node)
        self.imports.append((start, end))
        if node.level or node.module is None:
            return
        m = _FROM_MODULE.match(self.src, start, end)
        if m is None or m.group(1) != node.module.encode():
            raise Unsure
        if len(node.names) == 1 and node.names[0].name == "*":
            members = None
        else:
            members = []
            for alias in node.names:
                span = self.spelled(self.offset(alias.lineno, alias.col_offset), alias.name)
                members.append((alias.name, alias.asname is not None, lambda span=span: span))
        self.locator.import_from(node.module, m.span(1), members)

    def attribute(self, node, stack: list) -> None:
        """An outermost attribute: a chain on a name (`cfg.a.b`), or attributes of something else,
        whose names libcst counts as bare names (`f().a`)."""
        attrs = []
        current = node
        while type(current) is ast.Attribute:
            attrs.append(current.attr)
            current = current.value
        attrs.reverse()
        if type(current) is not ast.Name:
            for attr in attrs:
                self.locator.name(attr)
            if any(attr in self.roots for attr in attrs):
                raise Unsure  # a bare use of the root for libcst, at a place `check_roots` cannot count
            stack.append(current)
            return
        names = [current.id, *attrs]
        start = self.offset(current.lineno, current.col_offset)
        end = self.offset(node.end_lineno, node.end_col_offset)
        if self.src[start:end] != ".".join(names).encode():
            raise Unsure  # spaces, line breaks or parentheses inside the chain
        if names[0] in self.roots:
            self.root_names.add(start)
        ends = []
        at = start
        for name in names:
            at += len(name.encode())
            ends.append(at)
            at += 1
        for name, name_end in zip(names[1:], ends[1:]):
            if name in self.roots:
                self.root_names.add(name_end - len(name.encode()))
        self.locator.attribute_chain(names, lambda i: (ends[i] - len(names[i].encode()), ends[i]))

    def call(self, node) -> None:
        func = _dotted(node.func)
        if func not in CALLS_OF_INTEREST:
            return
        ordered = sorted([(a.lineno, a.col_offset, None, a.value if type(a) is ast.Starred else a) for a in node.args]
                         + [(k.lineno, k.col_offset, k.arg, k.value) for k in node.keywords],
                         key=lambda item: (item[0], item[1]))
        args = [CallArgument(keyword, self.string_literal(value),
                             type(value) is ast.Constant and value.value is True)
                for _, _, keyword, value in ordered]
        self.locator.call(func, self.span(node)[0], args)

    def within(self, spans: list[tuple[int, int]], offset: int) -> bool:
        return any(start <= offset < end for start, end in spans)

    def in_string(self, offset: int) -> bool:
        """Whether offset lies in a string token, f-string or joined string of the chosen statements
        (they never overlap: the walk does not enter f-strings)."""
        if self._string_starts is None:
            self._string_spans = sorted(set(self.strings + self.opaque))
            self._string_starts = [start for start, _ in self._string_spans]
        index = bisect.bisect_right(self._string_starts, offset) - 1
        return index >= 0 and offset < self._string_spans[index][1]

    def comment_start(self, offset: int, outside: bool) -> int | None:
        """Where the comment holding `offset` starts, or None when offset is not in a comment.

        On a line of a chosen statement, the first `#` outside every string token starts the comment;
        a line outside every statement holds nothing but blanks and a comment (else: Unsure)."""
        line_start = self.src.rfind(b"\n", 0, offset) + 1
        if outside:
            at = line_start
            while self.src[at:at + 1] in (b" ", b"\t", b"\f"):
                at += 1
            if self.src[at:at + 1] != b"#":
                raise Unsure
            return at
        at = self.src.find(b"#", line_start, offset)
        while at != -1:
            if not self.in_string(at):
                return at
            at = self.src.find(b"#", at + 1, offset)
        return None

    def comments(self) -> None:
        """Every token in a comment goes through the comment's text scan (once per comment); a token
        in an f-string or a joined string sends the file to libcst."""
        outside = set(self.outside)
        found: dict[int, int] = {}
        for offset in self.occurrences:
            if offset not in outside and self.within(self.opaque, offset):
                raise Unsure
            start = self.comment_start(offset, offset in outside)
            if start is None or start in found:
                continue
            end = self.src.find(b"\n", start)
            found[start] = len(self.src) if end == -1 else end
        for start, end in sorted(found.items()):
            if start == 0 and self.src.startswith(b"#!"):
                continue
            self.locator.add_text(start, end, prose=True, in_comment=True)

    def check_roots(self) -> None:
        """Every whole-word `a` of `import a.b` in the chosen statements must be an expression name or an
        attribute (both counted), inside an import, or inside a string token; anything else (`def a`,
        `f(a=1)`, a comment) is a name libcst counts and `ast` does not."""
        for root in self.roots:
            word = root.encode()
            for start, end in self.chosen_ranges:
                at = self.src.find(word, start, end)
                while at >= 0:
                    after = at + len(word)
                    whole = (at == 0 or self.src[at - 1] not in _IDENTIFIER_BYTES) and \
                        (after >= len(self.src) or self.src[after] not in _IDENTIFIER_BYTES)
                    if whole and at not in self.root_names and not self.within(self.imports, at) \
                            and not self.within(self.strings, at) and self.comment_start(at, False) is None:
                        raise Unsure
                    at = self.src.find(word, at + 1, end)


def _dotted(node) -> str | None:
    parts = []
    while type(node) is ast.Attribute:
        parts.append(node.attr)
        node = node.value
    if type(node) is not ast.Name:
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def validate(before: bytes, after: bytes) -> str | None:
    """None when the edited file still compiles."""
    try:
        compile(after, "<migrated>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as exc:
        try:
            compile(before, "<original>", "exec", dont_inherit=True)
        except (SyntaxError, ValueError):
            raise SourceNotParsed("the file does not compile with this Python before any edit") from None
        return f"the edited file would not compile: {exc}"
    return None
