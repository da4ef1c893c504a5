"""Time one file with N and 4N edits and print the ratio (linear: about 4; quadratic: about 16).

    python bench/edits_per_file.py                     # the engine alone (a rewriter that only finds a token)
    python bench/edits_per_file.py --kind shell -n 5000  # a real rewriter, with a throwaway key-rename table
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from migrator.edits import Edit, LocateResult  # noqa: E402
from migrator.fileprocess import process_file  # noqa: E402
from migrator.rewrite import RewriterSpec  # noqa: E402

OLD, NEW = "bench_section.old_knob", "bench_section.new_knob"
TABLE = f"""entries:
- kind: key-rename
  old: {OLD}
  new: {NEW}
  pr: 1
"""
# One line per edit, per kind: the file is padded so that rescanning it per edit would show.
LINES = {
    "engine": ("x.fake", lambda i: f"# {'x' * 60} old_name {i}\n"),
    "python": ("x.py", lambda i: f"k{i} = '{OLD}'\n"),
    "shell": ("x.sh", lambda i: f"python3 -m verl.trainer.main_ppo {OLD}={i}\n"),
    "markdown": ("x.md", lambda i: f"Set `{OLD}={i}` here.\n\n"),
}
SPEC = RewriterSpec("fake", __name__, (".fake",))


def locate(source: bytes, mappings, display: str) -> LocateResult:
    """The engine-only rewriter: every `old_name` is an edit."""
    edits, at = [], source.find(b"old_name")
    while at != -1:
        edits.append(Edit(at, at + 8, b"new_name", "key-rename", "renamed"))
        at = source.find(b"old_name", at + 1)
    return LocateResult(tuple(edits), ())


def validate(before: bytes, after: bytes) -> None:
    return None


def _mappings(work: Path, kind: str):
    if kind == "engine":
        from migrator.mapping import MappingSet

        return MappingSet(None, None, ())
    from migrator.mapping import compose, load_builtin

    table = work / "table.yaml"
    table.write_text(TABLE)
    return compose(load_builtin(), None, None, [table])


def measure(kind: str, edits: int, work: Path, mappings) -> tuple[float, int]:
    name, line = LINES[kind]
    path = work / name
    path.write_text("".join(line(i) for i in range(edits)))
    started = time.perf_counter()
    result = process_file(str(path), name, mappings, spec=SPEC if kind == "engine" else None)
    seconds = time.perf_counter() - started
    return seconds, len(result.edits)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kind", choices=sorted(LINES), default="engine")
    parser.add_argument("-n", type=int, default=20000, help="edits in the smaller file (default 20000)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        mappings = _mappings(work, args.kind)
        small, n_small = measure(args.kind, args.n, work, mappings)
        large, n_large = measure(args.kind, 4 * args.n, work, mappings)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{args.kind}: {n_small} edits {small:.3f}s, {n_large} edits {large:.3f}s, "
          f"ratio {large / small:.1f}x (linear ~4x), peak RSS {peak:.0f} MB")


if __name__ == "__main__":
    main()
