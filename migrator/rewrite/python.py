"""Python launchers: moved modules in imports, `-m`/`runpy` module strings, Hydra overrides in string
literals (f-string literal parts included), old script paths, and config keys spelt as attribute chains.

Parsed with libcst, used only to *locate*: positions come from `PositionProvider` (characters per
line) and are converted to byte offsets of the original file, so every edit is a byte span and
everything else stays byte for byte.
"""

from __future__ import annotations

import ast
import bisect
import re
import warnings

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

from migrator.edits import Edit, Finding, LocateResult, SourceNotParsed
from migrator.mapping import MappingSet
from migrator.rewrite import literal, scan

KIND = "python"

# Calls whose string arguments are joined into one path (a path split over them cannot be edited).
PATH_JOINERS = frozenset({"os.path.join", "path.join", "osp.join", "Path", "pathlib.Path", "PurePath",
                          "PurePosixPath", "PosixPath"})
# Calls that hand their first argument to a shell (subprocess.* only with shell=True).
SHELL_CALLS = frozenset({"os.system", "os.popen"})
SUBPROCESS_CALLS = frozenset({"subprocess.run", "subprocess.call", "subprocess.Popen", "subprocess.check_call",
                              "subprocess.check_output", "subprocess.getoutput", "subprocess.getstatusoutput"})
_NEWLINE = re.compile(r"\r\n|\r|\n")
_STRING_PREFIX = re.compile(r"[A-Za-z]*")


_QUICK_CHECKS: list[tuple[MappingSet, re.Pattern, tuple[bytes, ...] | None]] = []


def _quick_check(mappings: MappingSet) -> tuple["_TokenSearch", tuple[bytes, ...] | None]:
    """One pattern matching any of the prefilter's tokens, and the tokens (None if one spans lines)."""
    for maps, pattern, tokens in _QUICK_CHECKS:
        if maps is mappings:
            return pattern, tokens
    tokens = mappings.old_tokens() | {m.rsplit(".", 1)[-1] for m in mappings.old_modules()} \
        | {p.rstrip("/").rsplit("/", 1)[-1] for p in mappings.old_paths()}
    ordered = tuple(t.encode() for t in sorted(tokens, key=len, reverse=True))
    pattern = _TokenSearch(tokens)
    if any(b"\n" in token for token in ordered):
        ordered = None
    _QUICK_CHECKS[:] = [(mappings, pattern, ordered)]
    return pattern, ordered


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


class _TokenSearch:
    """`.search(source)` over the tokens as whole names, through the prefilter's Aho-Corasick engine
    (a flat regex alternation of hundreds of tokens costs ~0.1 s to compile in every worker)."""

    def __init__(self, tokens):
        from migrator.prefilter import Prefilter

        self._prefilter = Prefilter(tokens)

    def search(self, source: bytes):
        return True if self._prefilter(source) else None


def _might_change(source: bytes, mappings: MappingSet) -> bool:
    """Python never nests keys, so an old dotted token, a moved module's last name (`from a import b`)
    or an old path's last segment (`os.path.join(..., "x.sh")`) must occur; this skips libcst for
    nearly every file."""
    return _quick_check(mappings)[0].search(source) is not None


def locate(source: bytes, mappings: MappingSet, path: str = "") -> LocateResult:
    if not _might_change(source, mappings):
        return LocateResult((), ())
    fast = _locate_statements(source, mappings)
    return fast if fast is not None else _locate_module(source, mappings)


def _locate_module(source: bytes, mappings: MappingSet) -> LocateResult:
    """The whole file through libcst: the reference behaviour the fast path must reproduce."""
    bom = 3 if source.startswith(b"\xef\xbb\xbf") else 0
    try:
        module = cst.parse_module(source[bom:])
        text = source[bom:].decode(module.encoding)
    # SyntaxError: a bad coding cookie (tokenize.detect_encoding raises it through libcst).
    except (cst.ParserSyntaxError, SyntaxError, UnicodeDecodeError, LookupError) as exc:
        raise SourceNotParsed(f"not parsable as Python: {str(exc).splitlines()[0] if str(exc) else exc}") from None
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    locator = _PythonLocator(_Offsets(text, module.encoding, bom), mappings, source,
                             wrapper.resolve(PositionProvider))
    wrapper.module.visit(locator)
    locator.finish()
    return LocateResult(tuple(locator.edits), tuple(locator.findings))


# PEP 263: a coding cookie on line 1 or 2 (any cookie, even utf-8, takes the whole-file path).
_COOKIE = re.compile(rb"^[ \t\f]*#.*?coding[:=]", re.MULTILINE)


def _locate_statements(source: bytes, mappings: MappingSet) -> LocateResult | None:
    """The same result as `_locate_module`, from libcst on only the top-level statements that matter.

    Everything the locator reports lies inside a node that holds an old token (`_might_change`), and
    every node but a comment between statements lies inside one top-level statement; the stdlib `ast`
    (about 20x cheaper than libcst) gives each statement's lines, and those whole lines, parsed alone,
    give the same nodes at the same columns. `import a.b` of a moved module also needs every use of the
    name `a` and every import binding it (`finish()`): those statements all contain the text `a`, so
    they are parsed too, and one locator visits every snippet in file order and then finishes.
    None (take the whole-file path) whenever that argument does not hold or cannot be checked cheaply:
    a BOM, a coding cookie or a `\\r` (line numbering), a file `ast` rejects (libcst's errors and
    encodings stay as they are), a token outside every statement's lines (a comment between statements,
    at the end of a block or of the file), a snippet libcst does not parse into exactly its statements,
    and an `import a.b` the `ast` pre-pass did not see.
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

    def covering(starts: set[int], must_cover: bool, chosen: dict) -> bool:
        """Add the spans holding these offsets to chosen; False when one is in no span."""
        index = 0
        for line in sorted({bisect.bisect_right(line_starts, start) for start in starts}):
            index = bisect.bisect_left(spans, line, index, key=lambda span: span[1])
            if index == len(spans) or spans[index][0] > line:
                if must_cover:
                    return False
                continue
            chosen[index] = spans[index]
        return True

    chosen: dict[int, list] = {}
    tokens = _quick_check(mappings)[1]
    if tokens is None or not covering(_occurrences(source, tokens), True, chosen):
        return None
    roots = {alias.name.split(".")[0] for span in chosen.values() for stmt in span[2] for node in ast.walk(stmt)
             if isinstance(node, ast.Import) for alias in node.names
             if alias.asname is None and "." in alias.name and mappings.module(alias.name) is not None}
    if roots:
        covering(_occurrences(source, tuple(root.encode() for root in roots)), False, chosen)
    offsets = _Offsets(source.decode("utf-8"), "utf-8", 0)
    positions = _SnippetPositions()
    locator = _PythonLocator(offsets, mappings, source, positions)
    for index in sorted(chosen):
        first, last, _ = chosen[index]
        start = line_starts[first - 1]
        snippet = source[start:line_starts[last] if last < len(line_starts) else len(source)]
        if snippet[:1] in (b" ", b"\t", b"\f", b"#"):
            return None
        try:
            module = cst.parse_module(snippet)
        except Exception:  # noqa: BLE001 - any surprise means: let the whole-file path decide
            return None
        if len(module.body) != 1 or module.header or module.footer or module.encoding != "utf-8":
            return None
        wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
        positions.add(wrapper.resolve(PositionProvider), first - 1)
        wrapper.module.visit(locator)
    if not {old.split(".")[0] for _, old, _, _ in locator.plain_imports} <= roots:
        return None
    locator.finish()
    return LocateResult(tuple(locator.edits), tuple(locator.findings))


def _occurrences(source: bytes, words: tuple[bytes, ...]) -> set[int]:
    """Every offset where one of words starts (`bytes.find` per word: 5x faster than a big alternation)."""
    found = set()
    for word in words:
        at = source.find(word)
        while at >= 0:
            found.add(at)
            at = source.find(word, at + 1)
    return found


class _SnippetPositions:
    """PositionProvider results of several snippets, as lines of the whole file."""

    def __init__(self):
        self.parts: list[tuple] = []

    def add(self, positions, line_shift: int) -> None:
        self.parts.append((positions, line_shift))

    def __getitem__(self, node) -> CodeRange:
        for positions, shift in self.parts:
            found = positions.get(node)
            if found is not None:
                return CodeRange((found.start.line + shift, found.start.column),
                                 (found.end.line + shift, found.end.column))
        raise KeyError(node)


class _Offsets:
    """libcst (line, column-in-characters) -> byte offset in the original file."""

    def __init__(self, text: str, encoding: str, base: int):
        self.encoding = encoding
        self.lines: list[str] = []
        self.byte_starts: list[int] = []
        pos, cursor = 0, base
        for m in _NEWLINE.finditer(text):
            line = text[pos:m.end()]
            self.lines.append(line)
            self.byte_starts.append(cursor)
            cursor += len(line.encode(encoding))
            pos = m.end()
        self.lines.append(text[pos:])
        self.byte_starts.append(cursor)

    def byte(self, line: int, column: int) -> int:
        text = self.lines[line - 1]
        return self.byte_starts[line - 1] + len(text[:column].encode(self.encoding))


def dotted_name(node) -> str | None:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        base = dotted_name(node.value)
        return f"{base}.{node.attr.value}" if base is not None else None
    return None


class _PythonLocator(cst.CSTVisitor):
    def __init__(self, offsets: _Offsets, maps: MappingSet, source: bytes, positions):
        super().__init__()
        self.positions = positions
        self.offsets = offsets
        self.maps = maps
        self.src = source
        self.edits: list[Edit] = []
        self.findings: list[Finding] = []
        self.inner_attributes: set[int] = set()
        self.in_import = 0
        # `import a.b` (no alias) of moved modules: (alias node, old, new); resolved in finish().
        self.plain_imports: list[tuple[cst.ImportAlias, str, str, tuple[int, ...]]] = []
        self.kept_roots: set[str] = set()  # root names some untouched import still binds
        self.root_uses: list[tuple[str, cst.CSTNode]] = []  # (root name, outermost Name/Attribute)
        self.shell_strings: set[int] = set()  # string nodes already handled as shell commands

    # -- positions ---------------------------------------------------------------------------------
    def span(self, node) -> tuple[int, int]:
        pos = self.positions[node]
        return self.offsets.byte(pos.start.line, pos.start.column), self.offsets.byte(pos.end.line, pos.end.column)

    def add_text(self, start: int, end: int, **kwargs) -> None:
        edits, findings = literal.text_edits(self.src, start, end, self.maps, **kwargs)
        self.edits.extend(edits)
        self.findings.extend(findings)

    # -- imports -------------------------------------------------------------------------------------
    def visit_Import(self, node: cst.Import) -> None:
        self.in_import += 1
        for alias in node.names:
            name = dotted_name(alias.name)
            change = self.maps.module(name) if name else None
            if change is None:
                if alias.asname is None and name:
                    self.kept_roots.add(name.split(".")[0])
                continue
            prs = tuple(e.pr for e in change.entries)
            start, end = self.span(alias.name)
            if alias.asname is not None:
                self.edits.append(Edit(start, end, change.new.encode(), "module-move", f"{name} -> {change.new}", prs))
            elif "." not in name:
                self.edits.append(Edit(start, end, f"{change.new} as {name}".encode(), "module-move",
                                       f"{name} -> {change.new} (bound as {name})", prs))
            else:
                self.plain_imports.append((alias, name, change.new, prs))

    def leave_Import(self, original_node: cst.Import) -> None:
        self.in_import -= 1

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        self.in_import += 1
        if node.relative or node.module is None:
            return
        name = dotted_name(node.module)
        if name is None:
            return
        change = self.maps.module(name)
        start, end = self.span(node.module)
        if change is not None:
            self.edits.append(Edit(start, end, change.new.encode(), "module-move", f"{name} -> {change.new}",
                                   tuple(e.pr for e in change.entries)))
            return
        if isinstance(node.names, cst.ImportStar):
            return
        moved = []
        for alias in node.names:
            member = dotted_name(alias.name)
            sub = self.maps.module(f"{name}.{member}") if member else None
            if sub is not None:
                moved.append((alias, member, sub))
        if not moved:
            return
        parents = {sub.new.rpartition(".")[0] for _, _, sub in moved}
        new_parent = parents.pop() if len(parents) == 1 else None
        if new_parent is None or (new_parent != name and len(moved) != len(node.names)):
            olds = ", ".join(f"{name}.{member} -> {sub.new}" for _, member, sub in moved)
            self.findings.append(Finding(start, "module-move", f"modules imported here moved ({olds}); "
                                         "split this import by hand", None,
                                         tuple(e.pr for _, _, sub in moved for e in sub.entries)))
            return
        prs = tuple(dict.fromkeys(e.pr for _, _, sub in moved for e in sub.entries))
        if new_parent != name:
            self.edits.append(Edit(start, end, new_parent.encode(), "module-move", f"{name} -> {new_parent}", prs))
        for alias, member, sub in moved:
            last = sub.new.rpartition(".")[2]
            if last == member:
                continue
            a_start, a_end = self.span(alias.name)
            text = last if alias.asname is not None else f"{last} as {member}"
            self.edits.append(Edit(a_start, a_end, text.encode(), "module-move",
                                   f"{name}.{member} -> {sub.new} (bound as {member})", prs))

    def leave_ImportFrom(self, original_node: cst.ImportFrom) -> None:
        self.in_import -= 1

    # -- names and attribute chains ------------------------------------------------------------------
    def visit_Name(self, node: cst.Name) -> None:
        if not self.in_import and id(node) not in self.inner_attributes:
            self.root_uses.append((node.value, node))

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if id(node) in self.inner_attributes:
            return
        parts = []
        current = node
        while isinstance(current, cst.Attribute):
            parts.append(current.attr)
            current = current.value
            self.inner_attributes.add(id(current))
        if not isinstance(current, cst.Name):
            return
        parts.append(current)
        parts.reverse()  # [root, attr1, attr2, ...]
        self.inner_attributes.update(id(p) for p in parts)
        if self.in_import:
            return
        self.root_uses.append((current.value, node, parts))
        names = [p.value for p in parts]
        roots = _config_roots(self.maps)
        for i in range(1, len(names) - 1):
            if i > 1 and names[i - 1] in roots:
                break  # the chain is inside the config already: `cfg.ray_kwargs.ray_init` is no `ray_init` key
            for j in range(len(names) - 1, i, -1):
                change = literal.key_target(self.maps, ".".join(names[i:j + 1]))
                if change is None:
                    continue
                start, end = self.span(parts[i])[0], self.span(parts[j])[1]
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

    # -- strings and comments ------------------------------------------------------------------------
    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        if id(node) in self.shell_strings:
            return
        start, end = self.span(node)
        prefix = _STRING_PREFIX.match(node.value).group()
        quote_len = 3 if node.value[len(prefix):len(prefix) + 3] in ('"""', "'''") else 1
        self.add_text(start + len(prefix) + quote_len, end - quote_len, escapes="r" not in prefix.lower(),
                      whole_key=True)

    def visit_FormattedString(self, node: cst.FormattedString) -> None:
        raw = "r" not in node.prefix.lower()
        previous_is_text = True
        for part in node.parts:
            if isinstance(part, cst.FormattedStringText):
                start, end = self.span(part)
                self.add_text(start, end, span_starts_word=previous_is_text, escapes=raw,
                              whole_key=len(node.parts) == 1)
                previous_is_text = True
            else:
                previous_is_text = False

    def visit_Comment(self, node: cst.Comment) -> None:
        start, end = self.span(node)
        if start == 0 and node.value.startswith("#!"):
            return
        self.add_text(start, end, prose=True, in_comment=True)

    def visit_Call(self, node: cst.Call) -> None:
        func = dotted_name(node.func)
        if func in SHELL_CALLS or func in SUBPROCESS_CALLS:
            self.shell_command(node, func)
        if func not in PATH_JOINERS or len(node.args) < 2:
            return
        pieces = []
        for arg in node.args:
            if not isinstance(arg.value, cst.SimpleString):
                return
            value = arg.value.evaluated_value
            if not isinstance(value, str):
                return
            pieces.append(value.strip("/"))
        joined = "/".join(pieces).encode("utf-8", "replace")
        for path_start, path_end, change in scan.find_paths(joined, 0, len(joined), self.maps):
            old = joined[path_start:path_end].decode("ascii")
            where = f"moved to {change.new}" if change.new else f"was removed ({change.hint})"
            self.findings.append(Finding(self.span(node)[0], "path-move" if change.new else "path-removal",
                                         f"{func}(...) builds {old}, which {where}; edit the pieces by hand",
                                         None, change.prs))

    def shell_command(self, node: cst.Call, func: str) -> None:
        """A command string run by a shell goes through the shell rewriter (env presets, removals)."""
        shell = func in SHELL_CALLS or func in ("subprocess.getoutput", "subprocess.getstatusoutput") or any(
            a.keyword is not None and a.keyword.value == "shell" and isinstance(a.value, cst.Name)
            and a.value.value == "True" for a in node.args)
        if not shell or not node.args or not isinstance(node.args[0].value, cst.SimpleString):
            return
        string = node.args[0].value
        prefix = _STRING_PREFIX.match(string.value).group()
        quote_len = 3 if string.value[len(prefix):len(prefix) + 3] in ('"""', "'''") else 1
        start, end = self.span(string)
        start, end = start + len(prefix) + quote_len, end - quote_len
        content = self.src[start:end]
        if b"\\" in content or "b" in prefix.lower():
            return  # the source bytes are not the command's bytes; the plain string scan handles it
        from migrator.rewrite.markdown import code_block_edits

        self.shell_strings.add(id(string))
        code_block_edits(self.src, start, end, b"bash", self.maps, self.edits, self.findings)

    # -- `import a.b` without an alias ---------------------------------------------------------------
    def finish(self) -> None:
        """Rewrite `import old.mod` and its `old.mod.x` references together, or report a manual step."""
        by_root: dict[str, list] = {}
        for alias, old, new, prs in self.plain_imports:
            by_root.setdefault(old.split(".")[0], []).append((alias, old, new, prs))
        for root, imports in by_root.items():
            olds = sorted({old for _, old, _, _ in imports}, key=len, reverse=True)
            rewrites, stray = [], []
            for use in self.root_uses:
                if use[0] != root:
                    continue
                if len(use) == 2:  # a bare `root` name
                    stray.append(use[1])
                    continue
                _, node, parts = use
                names = [p.value for p in parts]
                match = next((o for o in olds if ".".join(names[:o.count(".") + 1]) == o), None)
                if match is None:
                    stray.append(node)
                else:
                    rewrites.append((parts, match))
            if stray and root not in self.kept_roots:
                for alias, old, new, prs in imports:
                    self.findings.append(Finding(
                        self.span(alias.name)[0], "module-move",
                        f"`import {old}`: {old} moved to {new}, and this file also uses `{root}` for other things; "
                        f"change the import to `import {new}` and its `{old}.` references by hand", None, prs))
                continue
            news = {old: (new, prs) for _, old, new, prs in imports}
            for alias, old, new, prs in imports:
                start, end = self.span(alias.name)
                self.edits.append(Edit(start, end, new.encode(), "module-move", f"{old} -> {new}", prs))
            for parts, old in rewrites:
                new, prs = news[old]
                last = parts[old.count(".")]
                start, end = self.span(parts[0])[0], self.span(last)[1]
                self.edits.append(Edit(start, end, new.encode(), "module-move", f"{old} -> {new} (reference)", prs))


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
