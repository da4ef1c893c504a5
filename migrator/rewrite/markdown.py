"""Docs: Markdown, reStructuredText and plain text (READMEs, notes, tutorials).

Code blocks are handed to the rewriter of their language (fenced ```bash blocks and rst
`.. code-block:: bash` to the shell rewriter, python to the Python one, yaml to the YAML one), with
offsets shifted into the file; a block that does not parse, or whose rewrite would not validate,
falls back to the text scan. Everything else (prose, inline code, links, console sessions) gets the
text scan: overrides at word starts, `-m module`, script paths, and dotted keys in prose.
"""

from __future__ import annotations

import bisect
import dataclasses
import re

from migrator.edits import Edit, Finding, LocateResult, placed
from migrator.mapping import MappingSet
from migrator.rewrite import embedded
from migrator.rewrite.plain import edits_keep_validity, review_edits  # noqa: F401 - the Rewriter protocol

KIND = "markdown"

_FENCE = re.compile(rb"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<lang>[^\s`{]*)[^\n]*$", re.M)
_RST_DIRECTIVE = re.compile(rb"^(?P<indent>[ \t]*)\.\.[ \t]+(?:code-block|code|sourcecode)::[ \t]*(?P<lang>\S*)[^\n]*$",
                            re.M)
LANGUAGES = {
    b"bash": "migrator.rewrite.shell", b"sh": "migrator.rewrite.shell", b"shell": "migrator.rewrite.shell",
    b"zsh": "migrator.rewrite.shell",
    b"python": "migrator.rewrite.python", b"py": "migrator.rewrite.python", b"python3": "migrator.rewrite.python",
    b"yaml": "migrator.rewrite.yaml", b"yml": "migrator.rewrite.yaml",
}


def code_blocks(src: bytes, rst: bool) -> list[tuple[int, int, bytes]]:
    """(content start, content end, language) of each fenced (or rst directive) code block."""
    blocks = []
    pos = 0
    while True:
        m = _FENCE.search(src, pos)
        if m is None:
            break
        content_start = min(m.end() + 1, len(src))
        fence = m.group("fence")
        closer = re.compile(rb"^[ \t]*" + re.escape(fence[:1]) + rb"{" + str(len(fence)).encode() + rb",}[ \t]*\r?$",
                            re.M)
        c = closer.search(src, content_start)
        end = c.start() if c else len(src)
        blocks.append((content_start, end, m.group("lang").lower()))
        pos = c.end() if c else len(src)
    if rst:
        for m in _RST_DIRECTIVE.finditer(src):
            indent = len(m.group("indent").expandtabs())
            start = min(m.end() + 1, len(src))
            end = start
            for line in src[start:].splitlines(keepends=True):
                body = line.rstrip(b"\r\n")
                if body.strip() and len(body) - len(body.lstrip()) <= indent:
                    break
                end += len(line)
            blocks.append((start, end, m.group("lang").lower()))
    return sorted(blocks)


def locate(source: bytes, mappings: MappingSet, path: str = "") -> LocateResult:
    edits: list[Edit] = []
    findings: list[Finding] = []
    cursor = 0
    for start, end, lang in code_blocks(source, rst=path.lower().endswith(".rst")):
        if start < cursor:
            continue
        embedded.text_edits(source, cursor, start, mappings, edits, findings)
        code_block_edits(source, start, end, lang, mappings, edits, findings)
        cursor = end
    embedded.text_edits(source, cursor, len(source), mappings, edits, findings)
    return LocateResult(tuple(edits), tuple(findings))


def code_block_edits(src: bytes, start: int, end: int, lang: bytes, maps: MappingSet, edits: list,
                     findings: list) -> None:
    """A code block through its language's rewriter (`LANGUAGES`), else the text scan (`embedded`). Code
    whose indentation means something (`INDENTED`) is read without the blanks all its lines share (a
    fence in a list item, an rst directive's body), and the edits are mapped back (`_Dedented`)."""
    module_name = LANGUAGES.get(lang)
    if module_name is None:
        embedded.text_edits(src, start, end, maps, edits, findings)
        return
    import importlib

    rewriter, label = importlib.import_module(module_name), f"block.{lang.decode()}"
    block = _Dedented(src, start, end) if module_name in INDENTED else None
    if block is None or not block.indent:
        embedded.block_edits(rewriter, label, src, start, end, maps, edits, findings, rewriter_for)
        return
    inner_edits: list[Edit] = []
    inner_findings: list[Finding] = []
    embedded.block_edits(rewriter, label, block.text, 0, len(block.text), maps, inner_edits, inner_findings,
                         rewriter_for)
    edits.extend(block.edit(e) for e in inner_edits)
    findings.extend(dataclasses.replace(f, offset=block.offset(f.offset)) for f in inner_findings)


INDENTED = frozenset({"migrator.rewrite.python", "migrator.rewrite.yaml"})


def rewriter_for(language: str):
    """The rewriter of a block that a block holds (a script's Python heredoc: `LocateResult.blocks`)."""
    import importlib

    return importlib.import_module(LANGUAGES[language.encode()])


class _Dedented:
    """src[start:end] without the leading blanks every non-blank line has (`indent`; blank lines stay as
    they are), and the way back: a position at a line's start maps to after its indent, and text a
    replacement puts at the start of a line gets the indent."""

    def __init__(self, src: bytes, start: int, end: int):
        lines = src[start:end].splitlines(keepends=True)
        leads = [line[:len(line) - len(line.lstrip(b" \t"))] for line in lines if line.strip()]
        indent = leads[0] if leads else b""
        for lead in leads[1:]:
            while not lead.startswith(indent):
                indent = indent[:-1]
        self.indent, self.end = indent, end
        self.starts, self.origins, self.cuts = [], [], []
        pieces, at, origin = [], 0, start
        for line in lines:
            cut = len(indent) if line.strip() else 0  # a blank line keeps its blanks
            self.starts.append(at)
            self.origins.append(origin)
            self.cuts.append(cut)
            pieces.append(line[cut:])
            at += len(line) - cut
            origin += len(line)
        self.text = b"".join(pieces)
        self._line_starts = {at: i for i, at in enumerate(self.starts)}

    def offset(self, position: int) -> int:
        i = bisect.bisect_right(self.starts, position) - 1
        if i < 0:
            return self.origins[0] if self.origins else self.end
        return self.origins[i] + self.cuts[i] + position - self.starts[i]

    def edit(self, edit: Edit) -> Edit:
        """The edit of the dedented block as an edit of the file: the result reads, dedented, as the
        dedented block with the edit; each line it leaves with text starts with the indent."""
        text, indent = self.text, self.indent
        start, end = self.offset(edit.start), self.offset(edit.end)
        pieces = edit.replacement.split(b"\n")
        line_end = text.find(b"\n", edit.end)
        rest_of_line = text[edit.end:len(text) if line_end == -1 else line_end]  # after the edit, on its line
        at_line_start = edit.start in self._line_starts or (edit.start == len(text) and text.endswith(b"\n"))
        if at_line_start:  # what the file has of the indent before the edit
            present = self.cuts[self._line_starts[edit.start]] if edit.start in self._line_starts else 0
            first = pieces[0] + (rest_of_line if len(pieces) == 1 else b"")
            if first.strip():
                pieces[0] = indent[present:] + pieces[0]
            elif len(pieces) > 1:
                start -= present  # the line is left blank: no indent on it
        out = pieces[0]
        for i, piece in enumerate(pieces[1:], 1):
            line = piece + (rest_of_line if i == len(pieces) - 1 else b"")
            out += b"\n" + (indent if line.strip() else b"") + piece
        return placed(edit, start, end, self.offset, out)


def _fence_lines(source: bytes) -> list[bytes]:
    return [m.group().strip() for m in _FENCE.finditer(source)] + \
           [m.group().strip() for m in _RST_DIRECTIVE.finditer(source)]


def validate(before: bytes, after: bytes, mappings=None) -> str | None:
    """Textual: the edited file still decodes as before and keeps its code block structure."""
    try:
        before.decode("utf-8")
    except UnicodeDecodeError:
        return None if before.count(b"\n") == after.count(b"\n") else "line structure would change"
    try:
        after.decode("utf-8")
    except UnicodeDecodeError:
        return "the edited file would not be valid UTF-8"
    if _fence_lines(before) != _fence_lines(after):
        return "the code block fences would change"
    return None
