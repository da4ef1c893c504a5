"""The stdlib `ast` front-end of the Python rewriter: libcst's result without libcst, or None.

It walks only the statements `choose_statements` picks and tells `Locator` what it sees; whenever
`ast` cannot give libcst's exact spans it declines (`Unsure`) and the libcst front-end decides.
"""

from __future__ import annotations

import ast
import bisect
import re
import warnings

from migrator.edits import LocateResult
from migrator.mapping import MappingSet
from migrator.mapping.per_set import per_table_set
from migrator.prefilter import Prefilter
from migrator.rewrite.python.config_access import cannot_spell_key
from migrator.rewrite.python.locator import (
    CALLS_OF_INTEREST,
    STRING_PREFIX,
    CallArgument,
    Locator,
    StringLiteral,
    Unsure,
    result_of,
)
from migrator.rewrite.python.parsed import child_nodes
from migrator.rewrite.python.statements import Statements, choose_statements

# One string token: optional prefix letters, then one quoted literal and nothing after it (an implicit
# concatenation `"a" "b"` is one ast.Constant but several libcst SimpleStrings).
STRING_TOKEN = re.compile(
    rb"[A-Za-z]{0,3}(?:'''(?:[^\\']|\\.|'(?!''))*'''|\"\"\"(?:[^\\\"]|\\.|\"(?!\"\"))*\"\"\""
    rb"|'(?:[^\\'\n]|\\.)*'|\"(?:[^\\\"\n]|\\.)*\")", re.DOTALL)
_FROM_MODULE = re.compile(rb"from[ \t]+([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)[ \t]")
_IDENTIFIER_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")


@per_table_set
def _text_tokens(maps: MappingSet) -> Prefilter:
    return Prefilter(maps.old_tokens_for("python"))


def locate_ast(source: bytes, mappings: MappingSet) -> LocateResult | None:
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
    walker = _AstWalker(source, statements, Locator(mappings, source))
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
    locator.finish(sorted(walker.no_keys))
    return result_of(locator)


class _AstWalker:
    def __init__(self, source: bytes, statements: Statements, locator: Locator):
        self.src = source
        self.line_starts = statements.line_starts
        self.occurrences = statements.occurrences
        self.whole = statements.whole
        self.outside = statements.outside
        self.roots = statements.roots
        self._string_starts: list[int] | None = None
        self._text_token_starts: list[int] | None = None  # where an old token of Python text starts
        self._string_spans: list[tuple[int, int]] = []
        self.locator = locator
        self.strings: list[tuple[int, int]] = []  # single string tokens
        self.no_keys: list[tuple[int, int]] = []  # those of them that cannot spell a config key (overrides)
        self.opaque: list[tuple[int, int]] = []  # joined strings, f-strings `fstring_parts` declines
        self.fstrings: list[tuple[int, int]] = []  # f-string tokens whose literal parts went to the locator
        self.fields: list[tuple[int, int]] = []  # their replacement fields
        self.imports: list[tuple[int, int]] = []
        self.root_names: set[int] = set()  # starts of expression names and attributes spelling a root
        self._sorted_spans: dict[int, tuple[list[int], list[int], int]] = {}
        self._line_comments: dict[int, int | None] = {}
        self.chosen_ranges = [(self.line_starts[span[0] - 1],
                               self.line_starts[span[1]] if span[1] < len(self.line_starts) else len(source))
                              for _, span in sorted(statements.chosen.items())]

    def offset(self, line: int, col: int) -> int:
        return self.line_starts[line - 1] + col

    def holds_text_token(self, start: int, end: int) -> bool:
        """Does src[start:end] hold an old token a Python file's text can carry (`old_tokens_for`), whole or
        not? A string holding none gets nothing from the text scan (`literal.text_edits` acts only on old
        keys, modules, symbols, paths and values, each spelt in the text it edits: the prefilter's own
        contract, which lets no file holding none through); a launcher's list of override strings is mostly
        such strings (90% of the launcher tree's)."""
        if self._text_token_starts is None:
            self._text_token_starts = sorted(_text_tokens(self.locator.maps).starts(self.src))
        at = bisect.bisect_left(self._text_token_starts, start)
        return at < len(self._text_token_starts) and self._text_token_starts[at] < end

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
        if not STRING_TOKEN.fullmatch(text):
            return None  # joined strings: the walk reads their pieces (`joined`)
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
                    self.string_token(literal_.start, literal_.end, len(literal_.prefix), literal_.quote_len)
                    if self.holds_text_token(literal_.start, literal_.end):
                        locator.string(literal_)
                elif isinstance(node.value, (str, bytes)):
                    self.joined(*self.span(node))
                continue
            if kind is ast.JoinedStr:
                self.fstring(node)
                continue
            if kind is ast.Call:
                self.call(node)
            stack.extend(reversed(child_nodes(node)))

    def string_token(self, start: int, end: int, prefix_len: int, quote_len: int) -> None:
        self.strings.append((start, end))
        if cannot_spell_key(self.src[start + prefix_len + quote_len:end - quote_len]):
            self.no_keys.append((start, end))

    def fstring(self, node) -> None:
        """One f-string token: its literal parts as libcst's FormattedStringText (an old token inside a
        replacement field sends the file to libcst, `comments`); anything else is opaque."""
        start, end = self.span(node)
        text = self.src[start:end]
        if not STRING_TOKEN.fullmatch(text):
            self.joined(start, end)
            return
        parts = fstring_parts(text)
        if parts is None:
            self.opaque.append((start, end))
            return
        self.fstring_token(start, end, parts, False)

    def fstring_token(self, start: int, end: int, parts: list[tuple[bool, int, int]], continued: bool) -> None:
        """What libcst's visit of one FormattedString tells the locator; `continued`: a piece of joined
        strings that starts with name text follows it."""
        self.fstrings.append((start, end))
        raw = "r" not in STRING_PREFIX.match(self.src[start:end].decode("latin-1")).group().lower()
        previous_is_text = True
        for index, (is_text, part_start, part_end) in enumerate(parts):
            if not is_text:
                self.field(start + part_start, start + part_end)
                previous_is_text = False
                continue
            self.locator.add_text(start + part_start, start + part_end, span_starts_word=previous_is_text,
                                  escapes=raw, whole_key=len(parts) == 1,
                                  continues_after=index < len(parts) - 1 or continued)
            previous_is_text = True

    def joined(self, start: int, end: int) -> None:
        """Implicitly joined strings (`"a" "b"`, `"a" f"{x}"`): each piece as libcst's SimpleString or
        FormattedString in a ConcatenatedString, or opaque when a piece cannot be read so."""
        pieces = []
        for piece_start, piece_end in _joined_pieces(self.src, start, end) or ():
            text = self.src[piece_start:piece_end]
            prefix = STRING_PREFIX.match(text.decode("latin-1")).group()
            if "f" in prefix.lower():
                parts = fstring_parts(text)
                if parts is None:
                    break
                pieces.append((piece_start, piece_end, prefix, parts))
            else:
                pieces.append((piece_start, piece_end, prefix, None))
        else:
            if pieces:
                starts_name = [_starts_with_name_text(self.src, *piece) for piece in pieces]
                for index, (piece_start, piece_end, prefix, parts) in enumerate(pieces):
                    continued = index + 1 < len(pieces) and starts_name[index + 1]
                    if parts is not None:
                        self.fstring_token(piece_start, piece_end, parts, continued)
                        continue
                    text = self.src[piece_start:piece_end]
                    quote_len = 3 if text[len(prefix):len(prefix) + 3] in (b'"""', b"'''") else 1
                    self.string_token(piece_start, piece_end, len(prefix), quote_len)
                    self.locator.string(StringLiteral(piece_start, piece_end, prefix, quote_len,
                                                      lambda text=text: _evaluated(text)), continues_after=continued)
                return
        self.opaque.append((start, end))

    def field(self, start: int, end: int) -> None:
        """A replacement field that is one name or attribute chain on a name (`{x}`, `{self.a.b!r:>8}`) is
        what libcst tells the locator; an old token anywhere else in a field sends the file to libcst."""
        m = _SIMPLE_FIELD.fullmatch(self.src, start, end)
        if m is None:
            self.fields.append((start, end))
            return
        names = m.group(1).decode().split(".")
        at = m.start(1)
        if len(names) == 1:
            self.locator.name(names[0])
        else:
            ends = []
            for name in names:
                at += len(name)
                ends.append(at)
                at += 1
            self.locator.attribute_chain(names, lambda i: (ends[i] - len(names[i]), ends[i]))
        self.fields.append((start, m.start(1)))  # a token elsewhere in the field: libcst decides
        self.fields.append((m.end(1), end))

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
                members.append((alias.name, alias.asname, lambda span=span: span))
        self.locator.import_from(node.module, m.span(1), members, (start, end))

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
        """Is offset in one of `spans` (the walk's lists, complete once it ends)? By bisection on
        a sorted copy made once per list: one scan per token made a long line quadratic."""
        index = self._sorted_spans.get(id(spans))
        if index is None or index[2] != len(spans):
            ordered = sorted(spans)
            index = self._sorted_spans[id(spans)] = ([s for s, _ in ordered], _running_max_end(ordered), len(spans))
        at = bisect.bisect_right(index[0], offset) - 1
        return at >= 0 and offset < index[1][at]

    def in_string(self, offset: int) -> bool:
        """Whether offset lies in a string token, f-string or joined string of the chosen statements
        (they never overlap: the walk does not enter f-strings)."""
        if self._string_starts is None:
            self._string_spans = sorted(set(self.strings + self.opaque + self.fstrings))
            self._string_starts = [start for start, _ in self._string_spans]
        index = bisect.bisect_right(self._string_starts, offset) - 1
        return index >= 0 and offset < self._string_spans[index][1]

    def comment_start(self, offset: int, outside: bool) -> int | None:
        """Where the comment holding `offset` starts, or None when offset is not in a comment.

        On a line of a chosen statement, the first `#` outside every string token starts the comment;
        a line outside every statement holds nothing but blanks and a comment (else: Unsure)."""
        line_start = self.line_starts[bisect.bisect_right(self.line_starts, offset) - 1]
        if outside:
            at = line_start
            while self.src[at:at + 1] in (b" ", b"\t", b"\f"):
                at += 1
            if self.src[at:at + 1] != b"#":
                raise Unsure
            return at
        if line_start not in self._line_comments:  # the first `#` outside strings, found once per line
            line_end = self.src.find(b"\n", line_start)
            line_end = len(self.src) if line_end == -1 else line_end
            at = self.src.find(b"#", line_start, line_end)
            while at != -1 and self.in_string(at):
                at = self.src.find(b"#", at + 1, line_end)
            self._line_comments[line_start] = None if at == -1 else at
        at = self._line_comments[line_start]
        return at if at is not None and at < offset else None

    def comments(self) -> None:
        """Every token in a comment goes through the comment's text scan (once per comment); a whole-name
        token in an f-string or a joined string sends the file to libcst (one glued to more name characters,
        `rollout_is_mean`, is no name any rewrite edits there)."""
        outside = set(self.outside)
        found: dict[int, int] = {}
        for offset in self.occurrences:
            if offset not in outside and offset in self.whole and (
                    self.within(self.opaque, offset) or self.within(self.fields, offset)):
                raise Unsure
            start = self.comment_start(offset, offset in outside)
            if start is None or start in found:
                continue
            end = self.src.find(b"\n", start)
            end = len(self.src) if end == -1 else end - (self.src[end - 1:end] == b"\r")  # `\r\n` ends it too
            found[start] = end
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


# Between the pieces of implicitly joined strings: blanks, line breaks, continuations and comments (a comment
# there always ends its line: the next piece is on a later one). Each comment is delimited by `#` and its line
# break, so no two ways of splitting a gap exist (linear by structure, tests/unit/test_regex_linearity.py).
_GAP = re.compile(rb"(?:[ \t\f\n]|\\\n|#[^\n]*\n)*")


def _joined_pieces(source: bytes, start: int, end: int) -> list[tuple[int, int]] | None:
    """The string tokens of implicitly joined strings spanning [start, end), or None."""
    pieces = []
    at = start
    while at < end:
        m = STRING_TOKEN.match(source, at, end)
        if m is None:
            return None
        pieces.append((at, m.end()))
        at = _GAP.match(source, m.end(), end).end()
    return pieces if len(pieces) > 1 and pieces[-1][1] == end else None


def _evaluated(text: bytes):
    """A string token's value, as libcst's `SimpleString.evaluated_value` (`ast.literal_eval`)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.literal_eval(text.decode("utf-8"))


def _starts_with_name_text(source: bytes, start: int, end: int, prefix: str, parts) -> bool:
    """cst_front's `_starts_with_name_text` for one piece: does it start with a character a file name can
    hold, or with an f-string field?"""
    if parts is None:
        try:
            value = _evaluated(source[start:end])
        except Exception:  # noqa: BLE001 - as libcst's evaluated_value: assume the worst
            return True
        first = value[:1]
        if isinstance(first, bytes):
            first = first.decode("latin-1")
        return bool(first) and (first.isalnum() or first in "_.+/-\\")
    if not parts:
        return False
    is_text, part_start, _ = parts[0]
    if not is_text:
        return True
    first = source[start + part_start:start + part_start + 4].decode("utf-8", "ignore")[:1]
    return bool(first) and (first.isalnum() or first in "_.+/-\\")


# `{name.attr ... [=] [!conversion] [:spec]}` with no bracket, string or nested field (`fstring_parts` declined those).
_SIMPLE_FIELD = re.compile(rb"\{[ \t]*([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)[ \t]*(?:=[ \t]*)?"
                           rb"(?:![rsa])?(?::[^{}]*)?\}")
_FIELD_STOPS = frozenset(b"'\"\\#{")


def fstring_parts(token: bytes) -> list[tuple[bool, int, int]] | None:
    """The parts of one f-string token as libcst splits them: (is literal text, start, end) in the
    token, or None when the simple reading below might not be libcst's. Literal text keeps `{{`, `}}`
    and escapes (`\\N{DASH}` outside raw strings); a replacement field runs from its `{` to the `}`
    that closes it, its format spec included. A field holding a quote, a backslash, `#` or another `{`
    (a nested string, f-string, dict or spec field) is declined."""
    prefix = STRING_PREFIX.match(token.decode("latin-1")).group()
    raw = "r" in prefix.lower()
    quote = 3 if token[len(prefix):len(prefix) + 3] in (b'"""', b"'''") else 1
    at, end = len(prefix) + quote, len(token) - quote
    parts: list[tuple[bool, int, int]] = []
    text_start = at
    while at < end:
        char = token[at]
        if char == 0x5C:  # backslash
            if not raw and token[at + 1:at + 3] == b"N{":
                close = token.find(b"}", at, end)
                if close == -1:
                    return None
                at = close + 1
            else:
                at += 1 if token[at + 1:at + 2] in (b"{", b"}") else 2
        elif char == 0x7B:  # {
            if token[at + 1:at + 2] == b"{":
                at += 2
                continue
            field = _field_end(token, at + 1, end)
            if field is None:
                return None
            if at > text_start:
                parts.append((True, text_start, at))
            parts.append((False, at, field))
            at = text_start = field
        elif char == 0x7D:  # }: `}}` in a valid f-string
            at += 2
        else:
            at += 1
    if at != end:
        return None
    if end > text_start:
        parts.append((True, text_start, end))
    return parts


def _field_end(token: bytes, at: int, end: int) -> int | None:
    """Where the replacement field whose `{` is just before `at` ends (after its `}`), or None."""
    depth, spec = 0, False
    while at < end:
        char = token[at]
        if char in _FIELD_STOPS:
            return None
        if char == 0x7D and (spec or depth == 0):  # }
            return at + 1
        if not spec:
            if char in b"([":
                depth += 1
            elif char in b")]":
                depth -= 1
            elif char == 0x3A and depth == 0:  # `:` starts the format spec
                spec = True
        at += 1
    return None


def _running_max_end(ordered: list[tuple[int, int]]) -> list[int]:
    """For spans sorted by start, the furthest end among each span and those before it."""
    out, furthest = [], -1
    for _, end in ordered:
        furthest = max(furthest, end)
        out.append(furthest)
    return out


def _dotted(node) -> str | None:
    parts = []
    while type(node) is ast.Attribute:
        parts.append(node.attr)
        node = node.value
    if type(node) is not ast.Name:
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))
