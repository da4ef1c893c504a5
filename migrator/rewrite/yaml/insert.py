"""The blocks a key move inserts at one offset of a YAML file, nested under any missing parents."""

from __future__ import annotations

from dataclasses import dataclass, field

from migrator.mapping import KeyChange
from migrator.rewrite.yaml.document import Key


@dataclass
class Insert:
    """Blocks inserted at one offset: at the end of mapping `path`, whose keys sit at `column`."""

    offset: int
    column: int
    path: tuple[str, ...]
    step: int
    tree: dict = field(default_factory=dict)  # name -> subtree; "" -> list of blocks
    moved: list = field(default_factory=list)

    def indent_of(self, new: tuple[str, ...]) -> int:
        return self.column + (len(new) - 1 - len(self.path)) * self.step

    def add(self, new: tuple[str, ...], block: list[bytes], key: Key, change: KeyChange) -> None:
        node = self.tree
        for name in new[len(self.path):-1]:
            node = node.setdefault(name, {})
        node.setdefault("", []).append(block)
        self.moved.append((key, change))

    def render(self, newline: bytes) -> bytes:
        out: list[bytes] = []

        def emit(node: dict, column: int) -> None:
            for block in node.get("", []):
                out.extend(block)
            for name, child in node.items():
                if name:
                    out.append(b" " * column + name.encode() + b":")
                    emit(child, column + self.step)

        emit(self.tree, self.column)
        return b"".join(line + newline for line in out)
