"""Reading a YAML file: its lines in bytes, its composed node trees with the pure-Python loader's
marks, its `# @package` header, and the tree of block-mapping keys the planner works on."""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field

import yaml

_PACKAGE = re.compile(rb"\A(?:[ \t]*(?:#[^\n]*)?\r?\n)*?[ \t]*#[ \t]*@package[ \t]+(?P<package>[^\s]+)")
STR_TAG = "tag:yaml.org,2002:str"
MAP_TAG = "tag:yaml.org,2002:map"


# -- reading the file -------------------------------------------------------------------------------

class Lines:
    """Line starts in bytes, and (line, column in characters) -> byte offset."""

    def __init__(self, source: bytes, base: int):
        self.src = source
        self.raw = source[base:].splitlines(keepends=True) or [b""]
        self.text = [line.decode("utf-8") for line in self.raw]
        self.starts = []
        cursor = base
        for line in self.raw:
            self.starts.append(cursor)
            cursor += len(line)
        if self.raw[-1].endswith((b"\n", b"\r")):
            self.raw.append(b"")
            self.text.append("")
            self.starts.append(cursor)
        # Inserted lines end like most of the file's lines (CR-only files exist).
        crlf = source.count(b"\r\n")
        counts = {b"\r\n": crlf, b"\r": source.count(b"\r") - crlf, b"\n": source.count(b"\n") - crlf}
        self.newline = max((b"\n", b"\r\n", b"\r"), key=lambda ending: counts[ending])

    def byte(self, mark) -> int:
        line = min(mark.line, len(self.text) - 1)
        return self.starts[line] + len(self.text[line][:mark.column].encode("utf-8"))

    def after(self, line: int) -> int:
        return self.starts[line] + len(self.raw[line])

    def indent(self, line: int) -> int:
        raw = self.raw[line]
        return len(raw) - len(raw.lstrip(b" "))

    def is_comment(self, line: int) -> bool:
        return self.raw[line].lstrip().startswith(b"#")


def package_prefix(source: bytes) -> tuple[str, ...] | None:
    """The key path a Hydra config's `# @package` header puts it under; None when it cannot be known."""
    m = _PACKAGE.match(source)
    if m is None:
        return ()
    package = m.group("package").decode("ascii", "replace")
    if package == "_global_":
        return ()
    if package.startswith("_") or not re.fullmatch(r"[A-Za-z0-9_.-]+", package):
        return None
    return tuple(package.split("."))


def node_last_line(node) -> int:
    """The last line holding bytes of `node` (block collections end where the next token starts)."""
    if isinstance(node, yaml.MappingNode) and not node.flow_style and node.value:
        return node_last_line(node.value[-1][1])
    if isinstance(node, yaml.SequenceNode) and not node.flow_style and node.value:
        return node_last_line(node.value[-1])
    end = node.end_mark
    if end.column == 0 and end.line > node.start_mark.line:
        return end.line - 1
    return end.line


def is_block_mapping(node) -> bool:
    """A block mapping of keys: `!!set` (a mapping of members to nulls) and other tags are no config."""
    return isinstance(node, yaml.MappingNode) and not node.flow_style and node.tag == MAP_TAG


def is_flow_mapping(node) -> bool:
    return isinstance(node, yaml.MappingNode) and bool(node.flow_style) and node.tag == MAP_TAG


def is_empty_null(node) -> bool:
    return isinstance(node, yaml.ScalarNode) and node.tag == "tag:yaml.org,2002:null" and node.value in ("", "~") \
        and node.start_mark.index == node.end_mark.index


@dataclass
class Key:
    """One single-line string key of a block mapping, with the lines it takes."""

    raw: tuple[str, ...]  # the keys as written, from the document root (what the loaded data is indexed by)
    path: tuple[str, ...]  # full config path of this key
    local: tuple[str, ...]  # the key as written (flat dotted keys have several components)
    key: yaml.ScalarNode
    value: yaml.Node
    mapping: "BlockMapping"
    first_line: int = 0  # with the comments right above it
    last_line: int = 0
    children: "BlockMapping | None" = None  # the value, when it is a block mapping


@dataclass
class BlockMapping:
    """A block mapping node and its keys, at config path `path`."""

    raw: tuple[str, ...]
    path: tuple[str, ...]
    node: yaml.MappingNode
    owner: Key | None
    keys: list[Key] = field(default_factory=list)

    @property
    def column(self) -> int:
        return self.keys[0].key.start_mark.column if self.keys else self.node.start_mark.column


# -- parsing ------------------------------------------------------------------------------------------

# libyaml when PyYAML has it: composing verl's generated 1,000-line configs in pure Python was most of a
# run over verl's tree. Its nodes, events and data equal the pure-Python loader's on every YAML file of
# five verl releases and of this project, once each mark's line and column are recomputed from its
# index: libyaml counts an implicit line break at the end of a file without one (tests/unit/rewrite/yaml/test_rewriter.py).
_FAST_LOADER = getattr(yaml, "CSafeLoader", None) if getattr(yaml, "__with_libyaml__", False) else None
_LINE_BREAK = re.compile(r"\r\n|\r|\n|\x85|\u2028|\u2029")  # the pure-Python reader's line breaks


def compose_all(text: str) -> list:
    """The documents' node trees, with the pure-Python loader's marks."""
    if _FAST_LOADER is None:
        return list(yaml.compose_all(text))
    documents = list(yaml.compose_all(text, Loader=_FAST_LOADER))
    starts = [0] + [m.end() for m in _LINE_BREAK.finditer(text)]
    stack = [d for d in documents if d is not None]
    seen: set[int] = set()
    while stack:
        node = stack.pop()
        if id(node) in seen:  # an alias shares its anchor's node
            continue
        seen.add(id(node))
        node.start_mark = _mark_at(node.start_mark.index, starts)
        node.end_mark = _mark_at(node.end_mark.index, starts)
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                stack.append(key)
                stack.append(value)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
    return documents


def _mark_at(index: int, line_starts: list[int]) -> yaml.Mark:
    line = bisect.bisect_right(line_starts, index) - 1
    return yaml.Mark("<unicode string>", index, line, index - line_starts[line], None, None)


# The deepest nesting the passes over a file's data take (copies, comparisons and rewrites recurse
# once per level; libyaml refuses 1,000 levels itself): bench/parse_limits.py, docs/robustness.md.
MAX_NESTING = 200


def nesting_depth(documents: list) -> int:
    """How many collections deep the documents' nodes go (an alias counts where its anchor is)."""
    deepest, stack, seen = 0, [(d, 1) for d in documents if d is not None], set()
    while stack:
        node, depth = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        deepest = max(deepest, depth)
        if isinstance(node, yaml.MappingNode):
            stack.extend((child, depth + 1) for pair in node.value for child in pair)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((item, depth + 1) for item in node.value)
    return deepest


def duplicate_key(documents: list) -> str | None:
    """`duplicate key a.b at line N` for the first key a mapping repeats: PyYAML keeps the last value
    silently (Hydra refuses the file), so no key path of such a file means one thing."""
    stack = [(d, "") for d in documents if d is not None]
    seen: set[int] = set()
    while stack:
        node, path = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            names: set[str] = set()
            for key, value in node.value:
                name = key.value if isinstance(key, yaml.ScalarNode) else None
                child = f"{path}.{name}" if path else str(name)
                if name is not None and name != "<<":
                    if name in names:
                        return f"duplicate key {child} at line {key.start_mark.line + 1}"
                    names.add(name)
                stack.append((value, child))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((item, f"{path}[{i}]") for i, item in enumerate(node.value))
    return None


def has_anchors(text: str) -> bool:
    events = yaml.parse(text, Loader=_FAST_LOADER) if _FAST_LOADER is not None else yaml.parse(text)
    return any(isinstance(ev, yaml.AliasEvent) or getattr(ev, "anchor", None) for ev in events)


class _DataLoader(_FAST_LOADER or yaml.SafeLoader):
    """The safe loader, but a value Python cannot make stays its text (an integer longer than Python
    converts, 4,300 digits by default; a date like 2001-13-45): the data check compares the files' data,
    and such a value is the same text in both."""


def _or_text(construct):
    def constructor(loader, node):
        try:
            return construct(loader, node)
        except ValueError:
            return node.value

    return constructor


_DataLoader.add_constructor("tag:yaml.org,2002:int", _or_text(yaml.constructor.SafeConstructor.construct_yaml_int))
_DataLoader.add_constructor("tag:yaml.org,2002:timestamp",
                            _or_text(yaml.constructor.SafeConstructor.construct_yaml_timestamp))


def load_all(text: str) -> list:
    return list(yaml.load_all(text, Loader=_DataLoader))

