"""Docs: Markdown, reStructuredText and plain text (READMEs, notes, tutorials).

Code blocks are handed to the rewriter of their language (fenced ```bash blocks and rst
`.. code-block:: bash` to the shell rewriter, python to the Python one, yaml to the YAML one), with
offsets shifted into the file; a block that does not parse, or whose rewrite would not validate,
falls back to the text scan. Everything else (prose, inline code, links, console sessions) gets the
text scan: overrides at word starts, `-m module`, script paths, and dotted keys in prose.
"""

from __future__ import annotations

import re

from migrator.edits import Edit, Finding, LocateResult
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
    """A code block through its language's rewriter (`LANGUAGES`), else the text scan (`embedded`)."""
    module_name = LANGUAGES.get(lang)
    if module_name is None:
        embedded.text_edits(src, start, end, maps, edits, findings)
        return
    import importlib

    embedded.block_edits(importlib.import_module(module_name), f"block.{lang.decode()}", src, start, end, maps,
                         edits, findings)


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
