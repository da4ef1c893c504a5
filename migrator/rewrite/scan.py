"""Token scanners shared by rewriters: Hydra override keys, repository paths and `-m module`.

They work on bytes between two offsets, so the caller's spans are exact source positions.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from migrator.mapping import KeyChange, MappingSet, PathChange

_COMPONENT = rb"[A-Za-z0-9_][A-Za-z0-9_-]*"
_KEY_ANY = rb"[A-Za-z_][A-Za-z0-9_-]*(?:\." + _COMPONENT + rb")*"
_KEY_DOTTED = rb"[A-Za-z_][A-Za-z0-9_-]*(?:\." + _COMPONENT + rb")+"

# `[+|++|~]key=...` or `~key` at the very start of a word.
OVERRIDE_AT_START = re.compile(rb"(?P<prefix>~|\+\+|\+)?(?P<key>" + _KEY_ANY + rb")(?:(?P<eq>=)|(?=[\s\"'\\]|\Z))")
# The same inside running text (several overrides in one string); keys must be dotted there.
OVERRIDE_IN_TEXT = re.compile(rb"(?P<prefix>~|\+\+|\+)?(?P<key>" + _KEY_DOTTED + rb")(?:(?P<eq>=)|(?=[\s\"'\\]|\Z))")
# A dotted key anywhere in prose or comments, not part of a longer dotted name.
KEY_IN_PROSE = re.compile(rb"(?<![A-Za-z0-9_.-])" + _KEY_DOTTED + rb"(?![A-Za-z0-9_-]|\.[A-Za-z0-9_])")
MODULE_RE = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
MODULE_AFTER_DASH_M = re.compile(rb"(?<![A-Za-z0-9_-])-m[ \t]+(?P<module>[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+)")
PATH_TOKEN = re.compile(rb"[A-Za-z0-9_.+/-]+")


def is_override(m: re.Match) -> bool:
    """A key match is an override when `=` follows, or when it is a `~key` deletion."""
    return m.group("eq") is not None or m.group("prefix") == b"~"


def find_keys_in_prose(src: bytes, start: int, end: int, maps: MappingSet,
                       context=None) -> Iterator[tuple[int, int, KeyChange]]:
    """`context`: the entry point the prose's keys belong to (None: main_ppo's)."""
    for m in KEY_IN_PROSE.finditer(src, start, end):
        change = maps.key(m.group().decode("ascii"), context)
        if change is not None:
            yield m.start(), m.end(), change


def find_paths(src: bytes, start: int, end: int, maps: MappingSet) -> Iterator[tuple[int, int, PathChange]]:
    """Old paths that end a path token on a `/` boundary (never a prefix of a longer name)."""
    if src.find(b"/", start, end) < 0:
        return  # every path holds a `/`: most pieces a walk hands over (`a.b.c=1`) hold none
    for m in PATH_TOKEN.finditer(src, start, end):
        token = m.group().rstrip(b".")
        if b"/" not in token:
            continue
        positions = [0] + [i + 1 for i, b in enumerate(token) if b == 0x2F]  # after each '/'
        for offset in positions:
            candidate = token[offset:]
            if not candidate or candidate.startswith(b"/"):
                continue
            change = maps.path(candidate.decode("ascii"))
            if change is not None:
                yield m.start() + offset, m.start() + len(token), change
                break
