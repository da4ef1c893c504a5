"""The libcst front-end of the Python rewriter: the reference for what `Locator` is told.

libcst keeps comments and every f-string part, so it takes every file the `ast` front-end declines.
Positions come from `PositionProvider` (characters per line) and are converted to byte offsets of
the original file. Imported only when needed: libcst costs ~0.1 s to import.
"""

from __future__ import annotations

import re

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

from migrator.edits import LocateResult, SourceNotParsed
from migrator.mapping import MappingSet
from migrator.rewrite.python.locator import (
    CALLS_OF_INTEREST,
    STRING_PREFIX,
    CallArgument,
    Locator,
    StringLiteral,
    result_of,
)
from migrator.rewrite.python.statements import choose_statements

_NEWLINE = re.compile(r"\r\n|\r|\n")


def locate_module(source: bytes, mappings: MappingSet) -> LocateResult:
    """The whole file through libcst: the reference behaviour every shortcut must reproduce."""
    bom = 3 if source.startswith(b"\xef\xbb\xbf") else 0
    try:
        module = cst.parse_module(source[bom:])
        text = source[bom:].decode(module.encoding)
    # SyntaxError: a bad coding cookie (tokenize.detect_encoding raises it through libcst).
    except (cst.ParserSyntaxError, SyntaxError, UnicodeDecodeError, LookupError) as exc:
        raise SourceNotParsed(f"not parsable as Python: {str(exc).splitlines()[0] if str(exc) else exc}") from None
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    locator = Locator(mappings, source)
    visitor = _CstVisitor(locator, _Offsets(text, module.encoding, bom), wrapper.resolve(PositionProvider))
    wrapper.module.visit(visitor)
    locator.finish()
    return result_of(locator)


def locate_statements(source: bytes, mappings: MappingSet) -> LocateResult | None:
    """The same result as `locate_module`, from libcst on only the statements `choose_statements`
    picks: those whole lines, parsed alone, give the same nodes at the same columns. One visitor
    visits every snippet in file order and then finishes. None (take the whole-file path) where
    `choose_statements` declines, for a snippet libcst does not parse into exactly its statement,
    and for an `import a.b` the `ast` pre-pass did not see.
    """
    statements = choose_statements(source, mappings)
    if statements is None or statements.outside:
        return None  # a comment between statements belongs to no snippet
    line_starts = statements.line_starts
    positions = _SnippetPositions()
    locator = Locator(mappings, source)
    visitor = _CstVisitor(locator, _Offsets(source.decode("utf-8"), "utf-8", 0), positions)
    for index in sorted(statements.chosen):
        first, last, _ = statements.chosen[index]
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
        wrapper.module.visit(visitor)
    if not {old.split(".")[0] for _, old, _, _ in locator.plain_imports} <= statements.roots:
        return None
    locator.finish()
    return result_of(locator)


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


class _CstVisitor(cst.CSTVisitor):
    """Tells the locator what libcst sees, with spans in bytes of the original file."""

    def __init__(self, locator: Locator, offsets: _Offsets, positions):
        super().__init__()
        self.locator = locator
        self.positions = positions
        self.offsets = offsets
        self.inner_attributes: set[int] = set()
        self.in_import = 0

    def span(self, node) -> tuple[int, int]:
        pos = self.positions[node]
        return self.offsets.byte(pos.start.line, pos.start.column), self.offsets.byte(pos.end.line, pos.end.column)

    def string_literal(self, node) -> StringLiteral | None:
        if not isinstance(node, cst.SimpleString):
            return None
        start, end = self.span(node)
        prefix = STRING_PREFIX.match(node.value).group()
        quote_len = 3 if node.value[len(prefix):len(prefix) + 3] in ('"""', "'''") else 1
        return StringLiteral(start, end, prefix, quote_len, lambda: node.evaluated_value)

    # -- imports -------------------------------------------------------------------------------------
    def visit_Import(self, node: cst.Import) -> None:
        self.in_import += 1
        for alias in node.names:
            self.locator.import_name(dotted_name(alias.name), alias.asname is not None,
                                     lambda alias=alias: self.span(alias.name))

    def leave_Import(self, original_node: cst.Import) -> None:
        self.in_import -= 1

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        self.in_import += 1
        if node.relative or node.module is None:
            return
        name = dotted_name(node.module)
        if name is None:
            return
        members = None if isinstance(node.names, cst.ImportStar) else [
            (dotted_name(alias.name), alias.asname is not None, lambda alias=alias: self.span(alias.name))
            for alias in node.names]
        self.locator.import_from(name, self.span(node.module), members)

    def leave_ImportFrom(self, original_node: cst.ImportFrom) -> None:
        self.in_import -= 1

    # -- names and attribute chains ------------------------------------------------------------------
    def visit_Name(self, node: cst.Name) -> None:
        if not self.in_import and id(node) not in self.inner_attributes:
            self.locator.name(node.value)

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
        self.locator.attribute_chain([p.value for p in parts], lambda i: self.span(parts[i]))

    # -- strings, comments and calls -----------------------------------------------------------------
    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        self.locator.string(self.string_literal(node))

    def visit_FormattedString(self, node: cst.FormattedString) -> None:
        raw = "r" not in node.prefix.lower()
        previous_is_text = True
        for part in node.parts:
            if isinstance(part, cst.FormattedStringText):
                start, end = self.span(part)
                self.locator.add_text(start, end, span_starts_word=previous_is_text, escapes=raw,
                                      whole_key=len(node.parts) == 1)
                previous_is_text = True
            else:
                previous_is_text = False

    def visit_Comment(self, node: cst.Comment) -> None:
        start, end = self.span(node)
        if start == 0 and node.value.startswith("#!"):
            return
        self.locator.add_text(start, end, prose=True, in_comment=True)

    def visit_Call(self, node: cst.Call) -> None:
        func = dotted_name(node.func)
        if func not in CALLS_OF_INTEREST:
            return
        args = [CallArgument(a.keyword.value if a.keyword is not None else None, self.string_literal(a.value),
                             isinstance(a.value, cst.Name) and a.value.value == "True") for a in node.args]
        self.locator.call(func, self.span(node)[0], args)
