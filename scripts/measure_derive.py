"""Precision and recall of `verl-migrate derive` against curated tables (maintainer tool, not shipped).

    python scripts/measure_derive.py REPO FROM TO CURATED_TABLE.yaml

Path moves are compared as (old, new) pairs; key renames as concrete (old key, new key) pairs, with
subtree entries expanded over the keys of the FROM configs. Only curated entries whose old name exists
at FROM count towards recall (a script added and moved between two releases is invisible to a diff).
"""

import sys
from pathlib import Path

from migrator import derive, history
from migrator.mapping import load_table
from migrator.mapping.compose import MappingSet


def main(repo_path, from_rev, to_rev, curated_path):
    repo = history.open_repo(repo_path)
    d = derive.derive(repo, from_rev, to_rev)
    curated = MappingSet("a", "b", (load_table(Path(curated_path)),))
    before_paths = {p for p in history.tree_files(repo, from_rev, ("examples/", "recipe/")) if derive.is_script(p)}
    keys_before = derive.ConfigKeys(repo).at(from_rev)

    got_paths = {(x.old, x.fields["new"]) for x in d.drafts if x.kind == "path-move"}
    want_paths = set()
    for p in sorted(before_paths):
        change = curated.path(p)
        if change is not None and change.new:
            want_paths.add((p, change.new))
    report("path moves", got_paths, want_paths)
    for level in ("high", "medium", "low"):
        got = {(x.old, x.fields["new"]) for x in d.drafts if x.kind == "path-move" and x.confidence == level}
        hit = len(got & want_paths)
        print(f"  {level}: {len(got)} moves, {hit} correct")

    derived = MappingSet("a", "b", (load_table_text(derive.dump_table(d)),))
    got_keys, want_keys = set(), set()
    for k in sorted(keys_before):
        for ms, out in ((derived, got_keys), (curated, want_keys)):
            change = ms.key(k)
            if change is not None and change.action == "rename":
                out.add((k, change.new))
    report("key renames", got_keys, want_keys)
    removed = {x.old for x in d.drafts if x.kind == "path-removal"}
    curated_removed = {p for p in before_paths if (c := curated.path(p)) is not None and c.new is None}
    report("path removals (old only)", removed, curated_removed)


def load_table_text(text):
    import tempfile
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        f.write(text)
    return load_table(Path(f.name))


def report(label, got, want):
    hit = got & want
    precision = len(hit) / len(got) if got else 1.0
    recall = len(hit) / len(want) if want else 1.0
    print(f"{label}: derived {len(got)}, curated {len(want)}, correct {len(hit)}, "
          f"precision {precision:.2f}, recall {recall:.2f}")
    for item in sorted(got - want):
        print(f"   extra   {item}")
    for item in sorted(want - got):
        print(f"   missed  {item}")


if __name__ == "__main__":
    main(*sys.argv[1:])
