"""Code embedded in another file (a docs code block, a notebook cell, a shell command string in Python)
through a rewriter, with offsets shifted into the file; a block that does not parse, or whose rewrite would
not validate, gets the text scan of `literal` instead.

The caller passes the rewriter: this module names none, so every rewriter may use it without an import
cycle (the language -> rewriter table of docs code blocks is `markdown.LANGUAGES`).
"""

from __future__ import annotations

import dataclasses

from migrator.edits import LocateResult, SourceNotParsed, placed
from migrator.mapping import MappingSet
from migrator.rewrite import literal


def block_edits(rewriter, label: str, src: bytes, start: int, end: int, maps: MappingSet, edits: list,
                findings: list, rewriter_for=None) -> None:
    """`src[start:end]` through `rewriter` (a rewriter module: a `migrator.rewrite.Rewriter`) when it parses
    and validates, else the text scan. `rewriter_for(language)`: the rewriter of a block the block holds in
    turn (LocateResult.blocks: a script's Python heredoc in a README); without it such blocks are left."""
    block = src[start:end]
    try:
        located = rewriter.locate(block, maps, label)
        if located.blocks and rewriter_for is not None:
            located = with_blocks(block, located, maps, rewriter_for)
        located = _reviewed(rewriter, block, located, maps)
        after = apply(block, located.edits)
        problem = None if after == block else rewriter.validate(block, after, maps)
    except SourceNotParsed:
        located, problem = None, "unparsed"
    if located is not None and problem is None:
        edits.extend(placed(e, e.start + start, e.end + start, lambda o: o + start) for e in located.edits)
        findings.extend(dataclasses.replace(f, offset=f.offset + start) for f in located.findings)
        return
    text_edits(src, start, end, maps, edits, findings)


def with_blocks(src: bytes, located: LocateResult, maps: MappingSet, rewriter_for) -> LocateResult:
    """`located` with the edits and findings of each block it holds, through that block's rewriter."""
    edits, findings = list(located.edits), list(located.findings)
    for start, end, language in located.blocks:
        block_edits(rewriter_for(language), f"block.{language}", src, start, end, maps, edits, findings, rewriter_for)
    return LocateResult(tuple(edits), tuple(findings))


def _reviewed(rewriter, block: bytes, located: LocateResult, maps: MappingSet) -> LocateResult:
    """The block's edits after its rewriter's second look (the review the engine runs on a changed file of
    that kind): a launch command in a docs block or a Python string gets Hydra's verdict like one in a script."""
    if not located.edits:
        return located
    applied = list(located.edits)
    second = rewriter.review_edits(block, apply(block, applied), applied, maps)
    if second is None:
        return located
    kept = tuple(e for e in applied if e not in second.back_out) + tuple(second.added)
    return LocateResult(kept, tuple(located.findings) + tuple(second.findings))


def text_edits(src: bytes, start: int, end: int, maps: MappingSet, edits: list, findings: list) -> None:
    """The text scan of `src[start:end]`: prose, overrides at word starts, `-m module`, script paths."""
    if end > start:
        e, f = literal.text_edits(src, start, end, maps, prose=True)
        edits.extend(e)
        findings.extend(f)


def apply(source: bytes, edits) -> bytes:
    out, cursor = [], 0
    for edit in sorted(set(edits), key=lambda e: (e.start, e.end)):
        if edit.start < cursor:
            continue
        out.append(source[cursor:edit.start] + edit.replacement)
        cursor = edit.end
    out.append(source[cursor:])
    return b"".join(out)
