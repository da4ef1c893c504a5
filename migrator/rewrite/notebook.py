"""Jupyter notebooks: the source of code cells (Python, `!shell` lines, `%%bash` cells).

The JSON is never re-serialised: each source line is a JSON string token located in the raw text,
edits found in the decoded cell are mapped back through that token's escapes, and replacements are
JSON-escaped, so cells, outputs and metadata we do not touch keep their bytes.
"""

from __future__ import annotations

import dataclasses
import json
import re

from migrator.edits import Edit, Finding, LocateResult, SourceNotParsed, placed
from migrator.mapping import MappingSet
from migrator.rewrite import python as python_rewriter
from migrator.rewrite.embedded import block_edits
from migrator.rewrite.launch_gate import launches_verl
from migrator.rewrite.markdown import code_block_edits
from migrator.rewrite.plain import edits_keep_validity, review_edits  # noqa: F401 - the Rewriter protocol

KIND = "notebook"

_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.S)
_WS = re.compile(rb"[ \t\r\n]*")
_SCALAR = re.compile(rb"-?[0-9][0-9.eE+-]*|true|false|null")
SHELL_CELL_MAGICS = ("%%bash", "%%sh", "%%script bash", "%%script sh")


def string_tokens(src: bytes) -> dict[tuple, tuple[int, int]]:
    """Every JSON string *value* in `src` by its path (keys and indexes): the token's byte span."""
    out: dict[tuple, tuple[int, int]] = {}

    def value(pos: int, path: tuple) -> int:
        pos = _WS.match(src, pos).end()
        head = src[pos:pos + 1]
        if head == b"{":
            pos = _WS.match(src, pos + 1).end()
            if src[pos:pos + 1] == b"}":
                return pos + 1
            while True:
                m = _STRING.match(src, _WS.match(src, pos).end())
                if m is None:
                    raise ValueError("expected a key")
                key = json.loads(m.group())
                pos = _WS.match(src, m.end()).end()
                if src[pos:pos + 1] != b":":
                    raise ValueError("expected ':'")
                pos = _WS.match(src, value(pos + 1, path + (key,))).end()
                if src[pos:pos + 1] == b"}":
                    return pos + 1
                if src[pos:pos + 1] != b",":
                    raise ValueError("expected ',' or '}'")
                pos += 1
        if head == b"[":
            pos = _WS.match(src, pos + 1).end()
            if src[pos:pos + 1] == b"]":
                return pos + 1
            index = 0
            while True:
                pos = _WS.match(src, value(pos, path + (index,))).end()
                index += 1
                if src[pos:pos + 1] == b"]":
                    return pos + 1
                if src[pos:pos + 1] != b",":
                    raise ValueError("expected ',' or ']'")
                pos += 1
        if head == b'"':
            m = _STRING.match(src, pos)
            out[path] = (m.start(), m.end())
            return m.end()
        m = _SCALAR.match(src, pos)
        if m is None:
            raise ValueError(f"unexpected byte at {pos}")
        return m.end()

    value(0, ())
    return out


def _char_offsets(token: bytes) -> list[int]:
    """For a JSON string token: the byte offset (into the token) where each decoded character starts."""
    offsets = []
    i, end = 1, len(token) - 1
    while i < end:
        offsets.append(i)
        if token[i:i + 1] == b"\\":
            if token[i + 1:i + 2] == b"u":
                code = int(token[i + 2:i + 6], 16)
                i += 6
                # a high surrogate and a low one are one character; either alone is one by itself
                if 0xD800 <= code < 0xDC00 and token[i:i + 2] == b"\\u" and \
                        0xDC00 <= int(token[i + 2:i + 6], 16) < 0xE000:
                    i += 6
            else:
                i += 2
        else:
            lead = token[i]
            i += 1 if lead < 0x80 else 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4
    offsets.append(end)
    return offsets


def _parse(source: bytes):
    """The notebook's data; a number too long for Python's int (4,300 digits) stays its text, so the
    data check compares it as such."""
    return json.loads(source, parse_int=_int_or_text)


def _int_or_text(text: str):
    try:
        return int(text)
    except ValueError:
        return text


def locate(source: bytes, mappings: MappingSet, path: str = "") -> LocateResult:
    try:
        notebook = _parse(source)
        tokens = string_tokens(source)
    except (ValueError, UnicodeDecodeError) as exc:
        raise SourceNotParsed(f"not a parsable notebook: {exc}") from None
    except RecursionError:  # the decoder recurses per level of arrays and objects
        raise SourceNotParsed("not a parsable notebook: its JSON is nested too deeply") from None
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    if not isinstance(cells, list):
        raise SourceNotParsed("not a notebook: no 'cells' list")
    edits: list[Edit] = []
    findings: list[Finding] = []
    # a cell's override strings may feed a launch of another cell, or a `!` line the Python view blanks;
    # judged on the cells' text, not the JSON (whose `\"-m\", \"verl...` escapes hide a launch)
    mappings = mappings.launching(launches_verl(_code_text(cells)))
    for index, cell in enumerate(cells):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        raw_source = cell.get("source")
        if isinstance(raw_source, str):
            spans = [tokens[("cells", index, "source")]]
        elif isinstance(raw_source, list) and all(isinstance(line, str) for line in raw_source):
            spans = [tokens[("cells", index, "source", j)] for j in range(len(raw_source))]
        elif isinstance(raw_source, list):
            raise SourceNotParsed(f"not a notebook: the source of cell {index + 1} holds something that is not text")
        else:
            continue
        _cell(source, spans, mappings, edits, findings)
    return LocateResult(tuple(edits), tuple(findings))


def _code_text(cells: list) -> bytes:
    """The text of every code cell, joined (sources that are not text are left out: `locate` reports them)."""
    texts = []
    for cell in cells:
        source = cell.get("source") if isinstance(cell, dict) and cell.get("cell_type") == "code" else None
        if isinstance(source, str):
            texts.append(source)
        elif isinstance(source, list):
            texts.append("".join(line for line in source if isinstance(line, str)))
    return "\n".join(texts).encode("utf-8", _TEXT)


# A JSON string may hold a lone surrogate (`"\ud800"`): it stays one character, as three bytes, both ways.
_TEXT = "surrogatepass"
_SURROGATE = re.compile("[\ud800-\udfff]")


def _cell(src: bytes, spans: list[tuple[int, int]], maps: MappingSet, edits: list, findings: list) -> None:
    pieces = [json.loads(src[s:e]) for s, e in spans]
    text = "".join(pieces).encode("utf-8", _TEXT)
    # Where each token's decoded text starts in the cell bytes.
    starts, cursor = [], 0
    for piece in pieces:
        starts.append(cursor)
        cursor += len(piece.encode("utf-8", _TEXT))
    lines = text.splitlines(keepends=True)
    cell_edits: list[Edit] = []
    cell_findings: list[Finding] = []
    first = lines[0].strip() if lines else b""
    if first.decode("utf-8", "replace").startswith(SHELL_CELL_MAGICS):
        shell = b"#" + text[1:]  # the magic line becomes a shell comment, offsets unchanged
        code_block_edits(shell, 0, len(shell), b"bash", maps, cell_edits, cell_findings)
    else:
        python, shell_lines, pos, continued = bytearray(text), [], 0, False
        for line in lines:
            stripped = line.lstrip()
            body = line.rstrip(b"\r\n")
            if continued or stripped.startswith((b"!", b"%")):
                python[pos:pos + len(body)] = b" " * len(body)
                if continued:  # IPython joins a `!` line ending in `\` with the next: one shell command
                    shell_lines[-1] = (shell_lines[-1][0], pos + len(line))
                elif stripped.startswith(b"!"):
                    shell_lines.append((pos, pos + len(line)))
                continued = body.endswith(b"\\") and bool(shell_lines) and shell_lines[-1][1] == pos + len(line)
            pos += len(line)
        # a cell is code that runs, not a Markdown example: its imports are checked too (python.resolution)
        block_edits(python_rewriter, "cell.python", bytes(python), 0, len(python), maps, cell_edits, cell_findings)
        for start, end in shell_lines:
            shell = bytearray(text)
            bang = shell.index(b"!", start)
            shell[bang:bang + 1] = b" "
            code_block_edits(bytes(shell), start, end, b"bash", maps, cell_edits, cell_findings)
    for edit in cell_edits:
        mapped = _map_edit(src, spans, pieces, starts, text, edit)
        if mapped is None:
            findings.append(Finding(spans[0][0], edit.kind, f"{edit.message}: spans several source lines of a "
                                    "notebook cell; edit by hand", None, edit.prs))
        else:
            edits.append(mapped)
    for finding in cell_findings:
        findings.append(dataclasses.replace(finding, offset=_cell_line(spans, starts, finding.offset)))


def _cell_line(spans, starts, offset: int) -> int:
    """Where a finding at `offset` of a cell's joined source goes: the start of its source line's token."""
    j = max(i for i, s in enumerate(starts) if s <= offset) if starts else 0
    return spans[j][0]


def _map_edit(src: bytes, spans, pieces, starts, text: bytes, edit: Edit) -> Edit | None:
    for j, (token_start, token_end) in enumerate(spans):
        lo, hi = starts[j], starts[j] + len(pieces[j].encode("utf-8", _TEXT))
        inside = lo <= edit.start and edit.end <= hi and (edit.start < hi or edit.start == edit.end == hi == lo)
        if not inside:
            continue
        token = src[token_start:token_end]
        offsets = _char_offsets(token)
        piece = text[lo:hi]
        c_start = len(piece[:edit.start - lo].decode("utf-8", _TEXT))
        c_end = len(piece[:edit.end - lo].decode("utf-8", _TEXT))
        replacement = _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", json.dumps(
            edit.replacement.decode("utf-8", _TEXT), ensure_ascii=False)[1:-1]).encode("utf-8")
        # an unsafe edit's findings go where the cell's findings go: the start of the cell's source line
        return placed(edit, token_start + offsets[c_start], token_start + offsets[c_end],
                      lambda o: _cell_line(spans, starts, o), replacement)
    return None


def validate(before: bytes, after: bytes, mappings=None) -> str | None:
    """The result still parses as JSON and only code cells' `source` changed."""
    try:
        old = _parse(before)
    except (ValueError, RecursionError):
        raise SourceNotParsed("the notebook is not valid JSON before any edit") from None
    try:
        new = _parse(after)
    except (ValueError, RecursionError) as exc:
        return f"the edited notebook would not be valid JSON: {exc}"

    def without_code_sources(nb):
        cells = nb.get("cells") if isinstance(nb, dict) else None
        if isinstance(cells, list):
            for cell in cells:
                if isinstance(cell, dict) and cell.get("cell_type") == "code":
                    cell["source"] = None
        return nb

    try:
        if without_code_sources(old) != without_code_sources(new):
            return "the edit would change more than code cell sources"
    except RecursionError:  # the comparison recurses per level, here deeper in the stack than the decoder was
        raise SourceNotParsed("not a parsable notebook: its JSON is nested too deeply") from None
    return None
