"""How deeply a Python source nests, estimated from its bytes before any parser sees it.

`ast.parse`, `compile` and libcst recurse once per level of a syntax tree; deep enough, the first two
raise RecursionError or MemoryError and libcst's native parser overflows the C stack and takes the
whole process down (bench/parse_limits.py measures where; docs/robustness.md has the figures). So the
Python rewriter skips a file whose estimate is above `MAX_NESTING` before parsing it, and one above
`MAX_NESTING_FOR_LIBCST` when only libcst could read it.

The estimate is an upper bound on the depth of the tree: within one comma-separated element (the
elements of a list or of an argument list are siblings, not nested), every operator character, every
keyword that makes a node (`not`, `lambda`, `if`, `and`, ...) and every call or subscript bracket after an
operand adds one, every bracket level `BRACKET_LEVEL` (libcst spends about three times the recursion
on a level of lists, calls or subscripts as on one of operators); an indentation level adds one, and so does each `elif` of a
chain (each is an `If` inside the one before). Strings and comments count nothing, except the
replacement fields of f-strings, which are code (read as Python 3.12 reads them, which accepts every
f-string 3.10 and 3.11 accept).
"""

from __future__ import annotations

import re
import sys
from itertools import accumulate
from operator import sub

from migrator.prefilter import NAME_BYTES

# The bounds, in units of the estimate, with Python's default recursion limit (docs/robustness.md,
# bench/parse_limits.py): `ast.parse` and `compile` fail at ~3,000 (Python refuses 200 brackets or 100
# indents itself), libcst's native parser crashes the process at ~1,280 parentheses and 8,000
# operators, and libcst's position metadata (Python recursion) fails at ~336 operators or ~140 lists.
MAX_NESTING = 1000  # for any parse
MAX_NESTING_FOR_LIBCST = 250  # for the libcst front-end, which takes the files the `ast` one declines
BRACKET_LEVEL = 3
# f-strings nested deeper than CPython 3.12 reads (its MAXFSTRINGLEVEL); the scan recurses per level.
MAX_FSTRING_NESTING = 150
UNBOUNDED = sys.maxsize  # the estimate of a source nested past MAX_FSTRING_NESTING

# One token of code after optional blanks. Every alternative starts with a different byte class and
# none can fail after consuming a run, so matching is linear in the token.
_CODE = re.compile(rb"""[ \t\f]*(?:
    (?P<newline>\r\n|\r|\n)
   |(?P<continuation>\\(?:\r\n|\r|\n))
   |(?P<comment>\#[^\r\n]*)
   |(?P<string>[rRbBuUfF]{0,2}(?:'''|\"\"\"|'|\"))
   |(?P<name>[A-Za-z_\x80-\xff][A-Za-z0-9_\x80-\xff]*)
   |(?P<number>[0-9][0-9A-Za-z_.]*)
   |(?P<open>[(\[{])
   |(?P<close>[)\]}])
   |(?P<separator>[,;])
   |(?P<operator>[-+*/%@&|^~<>=!.])
   |(?P<colon>:)
   |(?P<other>.)
)""", re.VERBOSE | re.DOTALL)
_NODE_KEYWORDS = frozenset({b"not", b"and", b"or", b"if", b"else", b"lambda", b"await", b"in", b"is", b"for",
                            b"yield", b"async"})
# The rest of a plain string after its opening quote, up to and with its closing quote (or the end of
# its line, or of the file, when it has none): `[^q\\]*(?:\\.[^q\\]*)*` unrolled, never backtracking.
_STRING_REST = {
    b"'": re.compile(rb"[^'\\\r\n]*(?:\\(?:\r\n|.)[^'\\\r\n]*)*'?", re.DOTALL),
    b'"': re.compile(rb'[^"\\\r\n]*(?:\\(?:\r\n|.)[^"\\\r\n]*)*"?', re.DOTALL),
    b"'''": re.compile(rb"[^'\\]*(?:(?:\\.|'(?!''))[^'\\]*)*(?:''')?", re.DOTALL),
    b'"""': re.compile(rb'[^"\\]*(?:(?:\\.|"(?!""))[^"\\]*)*(?:""")?', re.DOTALL),
}
# In the text of an f-string: the next byte that matters.
_FSTRING_STOP = re.compile(rb"[{}\\'\"\r\n]")
_BLANKS = re.compile(rb"[ \t\f]*")
# A bracket right after one of these wraps it (a call or a subscript) instead of starting an operand.
_OPERANDS = frozenset({"name", "number", "close", "string"})


class _Element:
    """The comma-separated element being read inside one bracket (or one statement, whose `base` is
    the depth of the statement itself)."""

    __slots__ = ("base", "ops", "child", "deepest")

    def __init__(self, base: int = 0):
        self.base, self.ops, self.child, self.deepest = base, base, 0, 0

    def close(self) -> None:
        self.deepest = max(self.deepest, self.ops + self.child)


class _Statements:
    """Indentation levels and `elif` chains: the depth every statement at the current line starts at."""

    def __init__(self):
        self.widths = [0]
        self.elifs = [0]  # per level: the `elif`s of the chain open at that level
        self.elif_total = 0

    def line(self, width: int, first_word: bytes) -> int:
        while width < self.widths[-1]:
            self.widths.pop()
            self.elif_total -= self.elifs.pop()
        if width > self.widths[-1]:
            self.widths.append(width)
            self.elifs.append(0)
        if first_word == b"elif":
            self.elifs[-1] += 1
            self.elif_total += 1
        elif first_word not in (b"else", b"except", b"finally"):
            self.elif_total -= self.elifs[-1]
            self.elifs[-1] = 0
        return len(self.widths) - 1 + self.elif_total


_FIRST_WORD = re.compile(rb"[A-Za-z_]+")


class _TooDeep(Exception):
    pass


class _Scan:
    def __init__(self, source: bytes):
        self.src = source
        self.stop = ""  # why the last field scan stopped: "}", ":" (a format spec), "!" (a conversion), ""
        self.fstrings = 0  # f-strings open around the scan

    def code(self, pos: int, in_field: bool) -> tuple[int, int]:
        """(where the scan stopped, the deepest element seen). Outside a field it reads to the end;
        in an f-string's field it stops after the `}` that closes the field, or after the `:` or `!`
        that starts its format spec or conversion (`self.stop` says which)."""
        src = self.src
        end = len(src)
        statements = None if in_field else _Statements()
        stack = [_Element()]
        deepest, previous, line_start = 0, "", not in_field
        self.stop = ""
        while pos < end:
            if line_start:
                line_start = False
                width = _BLANKS.match(src, pos).end() - pos
                head = src[pos + width:pos + width + 1]
                if head and head not in b"\r\n#\\":
                    word = _FIRST_WORD.match(src, pos + width)
                    stack[0] = _Element(statements.line(width, word.group() if word else b""))
            m = _CODE.match(src, pos)
            kind, pos = m.lastgroup, m.end()
            element = stack[-1]
            if kind == "newline":
                if len(stack) == 1 and not in_field:
                    element.close()
                    deepest = max(deepest, element.deepest)
                    stack[0] = _Element()
                    line_start = True
            elif kind == "string":
                pos, depth = self._string(m.group(kind), pos)
                element.child = max(element.child, depth)
            elif kind == "name":
                if m.group(kind) in _NODE_KEYWORDS:
                    element.ops += 1
            elif kind == "open":
                if previous in _OPERANDS:
                    element.ops += 1
                stack.append(_Element())
            elif kind == "close":
                element.close()
                if len(stack) == 1:
                    deepest = max(deepest, element.deepest)
                    if in_field:
                        self.stop = "}"
                        return pos, deepest
                    stack[0] = _Element(element.ops)  # unbalanced: the parsers reject it; keep counting
                else:
                    stack.pop()
                    stack[-1].child = max(stack[-1].child, element.deepest + BRACKET_LEVEL)
            elif kind == "separator":
                element.close()
                element.ops, element.child = element.base, 0
            elif kind == "operator":
                if in_field and len(stack) == 1 and m.group(kind) == b"!" and src[pos:pos + 1] != b"=":
                    element.close()
                    self.stop = "!"
                    return pos, max(deepest, element.deepest)
                element.ops += 1
            elif kind == "colon" and in_field and len(stack) == 1:
                element.close()
                self.stop = ":"
                return pos, max(deepest, element.deepest)
            if kind not in ("continuation", "comment"):
                previous = kind
        while len(stack) > 1:  # brackets left open at the end
            inner = stack.pop()
            inner.close()
            stack[-1].child = max(stack[-1].child, inner.deepest + BRACKET_LEVEL)
        stack[0].close()
        return pos, max(deepest, stack[0].deepest)

    def _string(self, opening: bytes, pos: int) -> tuple[int, int]:
        """(the end of the string whose prefix and opening quote end at `pos`, its depth): 0 for a
        plain string; for an f-string, two more than its deepest replacement field (the string and the
        field are each a node)."""
        quote = opening.lstrip(b"rRbBuUfF")
        if b"f" not in opening.lower():
            return _STRING_REST[quote].match(self.src, pos).end(), 0
        self.fstrings += 1
        if self.fstrings > MAX_FSTRING_NESTING:
            raise _TooDeep
        try:
            return self._fstring(quote, pos)
        finally:
            self.fstrings -= 1

    def _fstring(self, quote: bytes, pos: int) -> tuple[int, int]:
        src, end = self.src, len(self.src)
        deepest, spec_fields = 0, 0  # spec_fields: fields open in a format spec (`{x:{width}}`), each to its `}`
        while pos < end:
            m = _FSTRING_STOP.search(src, pos)
            if m is None:
                return end, deepest + 2
            char, pos = m.group(), m.end()
            if char == b"\\":
                if src[pos:pos + 2] == b"\r\n":
                    pos += 2
                elif src[pos:pos + 1] in b"\\'\"\r\n" and src[pos:pos + 1]:
                    pos += 1  # an escaped quote or line end never ends the string; `\{` still opens a field
            elif char in b"\r\n":
                if len(quote) == 1:
                    return pos, deepest + 2
            elif char in b"'\"":
                if src.startswith(quote, m.start()):
                    return m.start() + len(quote), deepest + 2
            elif char == b"{":
                if src[pos:pos + 1] == b"{" and not spec_fields:
                    pos += 1
                    continue
                pos, depth = self.code(pos, in_field=True)
                deepest = max(deepest, depth + 2 * spec_fields)  # a spec is a string in the field around it
                if self.stop in (":", "!"):
                    spec_fields += 1
            elif spec_fields:
                spec_fields -= 1
            elif src[pos:pos + 1] == b"}":
                pos += 1
        return pos, deepest + 2


def nesting_depth(source: bytes) -> int:
    """The estimate (see the module's docstring), UNBOUNDED past MAX_FSTRING_NESTING; linear in the size
    of `source`."""
    try:
        return _Scan(source).code(0, in_field=False)[1]
    except _TooDeep:
        return UNBOUNDED


def nesting_depth_over(source: bytes, floor: int) -> int:
    """`nesting_depth(source)` where it may exceed `floor`; elsewhere a bound of it no greater than `floor`,
    which answers every comparison of the estimate with `floor` or more the same way. The bound reads
    the code between strings and comments a line at a time in C (`_bound`) and costs a third of the
    estimate; 15 of 2,452 Python files of verl and its users' repositories bound above 250."""
    bound = _bound(source)
    if bound is not None and bound <= floor:
        return bound
    return nesting_depth(source)


# For `_bound`: where a string or comment may start, the rest of a comment, the bytes of a name, what
# the weights keep of the code (translate deletes every other byte), and a keyword that makes a node as
# a whole word (`\b` also parts a name at a byte above 0x7f: more keywords, still a bound).
_STRING_OR_COMMENT = re.compile(rb"[#'\"]")
_COMMENT_REST = re.compile(rb"[^\r\n]*")
_PREFIX_BYTES = frozenset(b"rRbBuUfF")
_NAME_BYTES = NAME_BYTES | frozenset(range(0x80, 0x100))  # a byte above 0x7f is a name's too, as in `_CODE`
_TRIPLE_QUOTES = (b"'''", b'"""')
_JOINED_LINE = re.compile(rb"\\(?:\r\n|\r|\n)")
_INDENT = re.compile(rb"\n[ \t\f]+")
_NODE_KEYWORD = re.compile(rb"\b(?:" + b"|".join(sorted(_NODE_KEYWORDS)) + rb")\b")
_INNERMOST_PAIR = re.compile(rb"[(\[{][)\]}]")
_PAIRING_ROUNDS = 64


def _all_bytes_but(kept: bytes) -> bytes:
    return bytes(b for b in range(256) if b not in kept)


_BUT_WEIGHED = _all_bytes_but(b"-+*/%@&|^~<>=.([{\n")  # an operator, or a bracket's own +1 (a call)
_BUT_OPENS = _all_bytes_but(b"([{\n")
_BUT_CLOSES = _all_bytes_but(b")]}\n")
_BUT_BRACKETS = _all_bytes_but(b"([{)]}")


def _bound(source: bytes) -> int | None:
    """An upper bound of `nesting_depth(source)`, or None where it cannot tell cheaply (brackets that do not
    pair, `.` before a string prefix, f-strings nested past the limit). The estimate of a statement is its
    base (indentation levels, at most the indentation's width, and open `elif`s, at most every `elif` of
    the file) plus, along one path of brackets, the operators, node keywords and calls of each level
    and `BRACKET_LEVEL` a level, plus the depth of the string at its end: at most the statement's
    operators, keywords and opening brackets (each 1 + `BRACKET_LEVEL`) and the file's deepest f-string
    (its exact depth, by the estimate's own reading of f-strings). Plain strings and comments weigh nothing."""
    scan = None
    code: list[bytes] = []
    pos = deepest_string = 0
    while True:
        found = _STRING_OR_COMMENT.search(source, pos)
        if found is None:
            code.append(source[pos:])
            break
        at = found.start()
        if source[at] == 0x23:  # `#`
            code.append(source[pos:at])
            pos = _COMMENT_REST.match(source, at).end()
            continue
        quote = source[at:at + 3]
        if quote not in _TRIPLE_QUOTES:
            quote = source[at:at + 1]
        start = at  # the string's prefix: one or two prefix letters that begin a token (no name byte before)
        if at and source[at - 1] in _PREFIX_BYTES:
            first = at - 2 if at > 1 and source[at - 2] in _PREFIX_BYTES else at - 1
            before = source[first - 1] if first else None
            if before == 0x2E:  # `.`: of a number (`1.f"x"` is a number and a string) or an operator
                return None
            if before is None or before not in _NAME_BYTES:
                start = first
        code.append(source[pos:start])
        code.append(b" ")  # an operand that weighs nothing, and parts the words around it
        opening = source[start:at] + quote
        if b"f" in opening or b"F" in opening:
            if scan is None:
                scan = _Scan(source)
            try:
                pos, depth = scan._string(opening, at + len(quote))
            except _TooDeep:
                return None
            deepest_string = max(deepest_string, depth)
        else:
            pos = _STRING_REST[quote].match(source, at + len(quote)).end()
    text = _JOINED_LINE.sub(b" ", b"".join(code))
    if b"\r" in text:
        text = text.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    brackets = text.translate(None, _BUT_BRACKETS)
    for _ in range(_PAIRING_ROUNDS):  # every bracket pairs with one after it (the estimate reads every kind alike)
        paired = _INNERMOST_PAIR.sub(b"", brackets)
        if len(paired) == len(brackets):
            break
        brackets = paired
    if brackets:  # unpaired, or nested deeper than the rounds (each a pass over the brackets) reach
        return None
    base = max(map(len, _INDENT.findall(b"\n" + text)), default=0) + text.count(b"elif")
    text = _NODE_KEYWORD.sub(b"~", text)  # one operator byte each
    opens = list(map(len, text.translate(None, _BUT_OPENS).split(b"\n")))
    closes = map(len, text.translate(None, _BUT_CLOSES).split(b"\n"))
    weights = map(len, text.translate(None, _BUT_WEIGHED).split(b"\n"))
    # Statements end at the lines where no bracket is open; a statement weighs its lines' weights.
    total = list(accumulate(map(lambda weight, opened: weight + BRACKET_LEVEL * opened, weights, opens), initial=0))
    ends = [line + 1 for line, depth in enumerate(accumulate(map(sub, opens, closes))) if depth == 0]
    heaviest = max(map(sub, [total[end] for end in ends], [total[start] for start in [0, *ends[:-1]]]))
    return base + heaviest + deepest_string
