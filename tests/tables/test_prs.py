"""Every table entry's `pr:` is a verl pull request that shipped by the entry's release and touched what it names.

Checks the tables under mappings/verl/ (and the drafts) against mappings/verl/facts/prs.tsv, which
scripts/extract_verl_prs.py writes from verl's git history. Reads only data under mappings/.
"""

from __future__ import annotations

import pytest
import yaml

from tests.helpers import REPO, yaml_data

ROOT = REPO
VERL = ROOT / "mappings" / "verl"
RELEASES = yaml_data(VERL / "releases.yaml")["releases"]
RANK = {r: i for i, r in enumerate(RELEASES)}


def load_facts() -> dict[int, tuple[str, str, set[str], set[str]]]:
    """PR -> (commit, first release, relevant files touched, key names added or deleted)."""
    facts = {}
    for line in (VERL / "facts" / "prs.tsv").read_text().splitlines():
        if line.startswith("#") or not line.strip():
            continue
        pr, commit, release, touched, names = (line.split("\t") + ["", ""])[:5]
        facts[int(pr)] = (commit, release, set(filter(None, touched.split(";"))), set(filter(None, names.split(";"))))
    return facts


FACTS = load_facts()


def table_entries():
    """(release, entry) for every entry of the release tables (and of a values draft, when one is kept)."""
    for rel in RELEASES[1:]:
        for entry in yaml_data(VERL / f"{rel}.yaml")["entries"]:
            yield rel, entry
    drafts = VERL / "drafts" / "values.yaml"
    if drafts.exists():
        for rel, group in yaml.safe_load(drafts.read_text())["releases"].items():
            for entry in group:
                yield rel, entry


ENTRIES = list(table_entries())
# Package moves per release (recipe.fully_async_policy -> verl.experimental.fully_async_policy, #4795):
# a later PR of the same release that removed a submodule touched it under the package's new name.
PACKAGE_MOVES = {rel: {e["old"]: e["new"] for r, e in ENTRIES if r == rel and e["kind"] == "module-move"}
                 for rel in RELEASES[1:]}


def moved_name(module: str, rel: str) -> str | None:
    for old, new in PACKAGE_MOVES.get(rel, {}).items():
        if module.startswith(old + "."):
            return new + module[len(old):]
    return None


def module_files(module: str) -> set[str]:
    stem = module.replace(".", "/")
    return {stem + ".py", stem + "/"}


def expected_touches(entry: dict, rel: str = "") -> set[str] | None:
    """What the entry's PR must have touched (any one of them); None for kinds with nothing to check."""
    kind = entry["kind"]
    names = [entry[f] for f in ("old", "new") if isinstance(entry.get(f), str)]
    if kind.startswith("module-"):
        names += [m for m in (moved_name(n, rel) for n in names) if m]
    if "file" in entry:  # value entries name the verl file that reads or checks the value
        return {entry["file"]}
    if kind.startswith("path-"):
        return set(names)
    if kind.startswith("module-"):
        return set().union(*(module_files(n) for n in names))
    if kind == "target-move":
        return set().union(*(module_files(n.rpartition(".")[0]) for n in names))
    if kind.startswith("key-"):
        return {"<config>"}
    return None


def key_names(entry: dict) -> set[str]:
    """Names the PR of a key, value or target entry must add or delete: each key's last real component
    (the parent of `_target_`; for value maps, of the old and new key), for a key rename the components
    old and new do not share (`ray_init` -> `ray_kwargs`), and the literal old and new values of value
    and target entries (class names for class paths; patterns are not searched)."""
    kind = entry.get("kind", "")
    if not kind.startswith(("key-", "value-", "target-")):
        return set()
    keyed = [entry.get(f) for f in ("old", "new")] if kind.startswith("key-") else [entry.get("old-key"), entry.get("new-key")]
    parts = [[p for p in k.split(".") if p not in ("*", "_target_")] for k in keyed
             if isinstance(k, str) and not k.startswith("-")]
    out = {p[-1] for p in parts if p}
    if len(parts) == 2 and kind.startswith("key-"):
        out |= set(parts[0]) ^ set(parts[1])
    if not kind.startswith("key-"):
        for field in ("old", "new"):
            value = entry.get(field)
            if isinstance(value, str) and value.replace(".", "").replace("_", "").isalnum():
                out.add(value.rpartition(".")[2])
    return out


def touched_any(touched: set[str], wanted: set[str]) -> bool:
    if "<config>" in wanted and any(t.endswith((".yaml", ".py")) and "config/" in t for t in touched):
        return True
    return bool(touched & wanted)


def entry_id(item):
    rel, entry = item
    return f"{rel}:{entry['kind']}:{entry.get('old', entry.get('old-key', entry.get('key', '?')))}"


def test_facts_cover_every_pr_the_tables_name():
    missing = sorted({int(e["pr"]) for _, e in ENTRIES} - set(FACTS))
    assert not missing, f"run scripts/extract_verl_prs.py: PRs without facts {missing}"


@pytest.mark.parametrize("item", ENTRIES, ids=entry_id)
def test_entry_pr_shipped_by_its_release_and_touched_what_it_names(item):
    rel, entry = item
    if entry.get("repo") == "verl-recipe":
        pytest.skip("a verl-recipe PR: checked by scripts/check_entry_coverage.py --recipe-repo")
    commit, shipped, touched, names = FACTS[int(entry["pr"])]
    assert commit != "-", f"no commit in verl's history names PR #{entry['pr']}"
    assert shipped in RANK and RANK[shipped] <= RANK[rel], f"PR #{entry['pr']} first shipped in {shipped}, not by {rel}"
    wanted = expected_touches(entry, rel)
    if wanted is not None:
        assert touched_any(touched, wanted), f"PR #{entry['pr']} ({commit}) touched none of {sorted(wanted)}"
    if key_names(entry):
        assert key_names(entry) & names, f"PR #{entry['pr']} ({commit}) added or deleted none of {sorted(key_names(entry))}"
    if "release" in entry:
        assert entry["release"] == rel, f"entry says release {entry['release']} but is listed under {rel}"
    if "commit" in entry:
        assert str(entry["commit"]).startswith(commit[:7]) or commit.startswith(str(entry["commit"])), (
            f"PR #{entry['pr']} is commit {commit}, not {entry['commit']}")


def test_the_check_rejects_a_wrong_pr():
    # PR 6285 moved one mindspeed script in v0.8.0: it cannot account for a v0.3.0.post1 key.
    commit, shipped, touched, names = FACTS[6285]
    assert RANK[shipped] > RANK["v0.3.0.post1"]
    assert not touched_any(touched, {"examples/ppo_trainer/run_qwen2-7b.sh"})
    assert not key_names({"kind": "key-removal", "old": "data.val_batch_size"}) & names
