"""Does a moved script train what the old one trained? The shipped proof of every script move of the
built-in tables (`mappings/verl/facts/script-moves.yaml`, written by scripts/prove_script_moves.py: both
scripts' training commands composed with Hydra at their releases and compared), and the verdict of a
chain of moves from --from to --to.

A move proven `same` is a plain move; one whose scripts differ, or that could not be proven, changes
what the run may train: the rewriters make it only with `--unsafe-fixes` and report it either way
(docs/rewriters.md, "Moved scripts that train something else").
"""

from __future__ import annotations

from dataclasses import dataclass

# How many differences a finding's message lists before it says how many more there are.
SHOWN_DIFFERENCES = 6
# How many differing keys the release notes name per move before they say how many more there are.
NOTED_KEYS = 3


@dataclass(frozen=True)
class Difference:
    key: str
    old: str  # the old script's value (the effective config at the old release), as text
    new: str  # the new script's, with the entry's env presets and args


@dataclass(frozen=True)
class MoveProof:
    """The verdict on one move, or on a chain of them. `same`: True (proven to train the same), False
    (`differences` lists what differs), None (unproven: `unproven` says why)."""

    same: bool | None
    differences: tuple[Difference, ...] = ()
    unproven: tuple[str, ...] = ()

    @property
    def plain(self) -> bool:
        return self.same is True

    @property
    def verdict(self) -> str:
        """`same`, `differs` or `unproven`: the word `mappings show`, the release notes and JSON use."""
        return {True: "same", False: "differs"}.get(self.same, "unproven")

    def ordered(self, first: tuple[str, ...] = ()) -> list[Difference]:
        """The differences, the keys under `first` (top-level config nodes: data, reward) before the others."""
        rank = {node: i for i, node in enumerate(first)}
        return sorted(self.differences, key=lambda d: rank.get(d.key.split(".")[0], len(rank)))

    def counted(self) -> str:
        """`8 settings differ`, `1 setting differs`."""
        n = len(self.differences)
        return f"{n} setting{'s' if n != 1 else ''} differ{'s' if n == 1 else ''}"

    def keys_named(self, first: tuple[str, ...] = ()) -> str:
        """The verdict in a few words, for a table cell: `same`, `differs: 8 settings (data.train_files,
        reward.reward_manager.name, ... and 5 more)`, `unproven (why)`."""
        if self.same is True:
            return "same"
        if self.same is None:
            return "unproven (" + "; ".join(self.unproven) + ")"
        keys = [d.key for d in self.ordered(first)]
        more = len(keys) - NOTED_KEYS
        n = len(keys)
        text = (f"differs: {n} setting{'s' if n != 1 else ''} ({', '.join(keys[:NOTED_KEYS])}"
                f"{f', and {more} more' if more > 0 else ''})")
        return text + ("; a step of it is unproven" if self.unproven else "")

    def summary(self, first: tuple[str, ...] = ()) -> str:
        """What differs, in one line: the keys under `first` (top-level config nodes) before the others,
        at most SHOWN_DIFFERENCES of them, then how many more."""
        if self.same is None:
            return "is not proven to train what the old script trained (" + "; ".join(self.unproven) + ")"
        ordered = self.ordered(first)
        shown = "; ".join(f"{d.key} {_value(d.old)} -> {_value(d.new)}" for d in ordered[:SHOWN_DIFFERENCES])
        more = len(ordered) - SHOWN_DIFFERENCES
        text = f"trains something else: {self.counted()} ({shown}{f'; and {more} more' if more > 0 else ''})"
        if self.unproven:
            text += "; a step of it is not proven either (" + "; ".join(self.unproven) + ")"
        return text


def _value(text: str) -> str:
    return text if len(text) <= 60 else text[:57] + "..."


def proofs_of(data) -> dict[tuple[str, str, str], MoveProof]:
    """(release of the table, old path, new path) -> its proof, from the facts file's data."""
    out = {}
    for row in (data or {}).get("moves") or ():
        if "unproven" in row:
            proof = MoveProof(None, unproven=(str(row["unproven"]),))
        else:
            proof = MoveProof(bool(row["same"]), tuple(Difference(str(d["key"]), str(d["old"]), str(d["new"]))
                                                        for d in row.get("differences") or ()))
        out[row["release"], row["old"], row["new"]] = proof
    return out


def chained(proofs: list[MoveProof | None]) -> MoveProof | None:
    """The verdict on a chain of moves: same only when every step is; the differences of each step that
    differs (a key two steps change: the first step's old value, the last one's new); None when a step has
    no proof at all (a user's table, a directory move: nothing was proven, as before)."""
    if not proofs or any(p is None for p in proofs):
        return None
    if all(p.plain for p in proofs):
        return MoveProof(True)
    unproven = tuple(reason for p in proofs for reason in p.unproven)
    merged: dict[str, Difference] = {}
    for proof in proofs:
        for d in proof.differences:
            first = merged.get(d.key)
            merged[d.key] = Difference(d.key, first.old if first else d.old, d.new)
    if not any(p.same is False for p in proofs):
        return MoveProof(None, unproven=unproven)
    changed = tuple(d for d in merged.values() if d.old != d.new)  # a later step may set a key back
    return MoveProof(False, changed or tuple(merged.values()), unproven)
