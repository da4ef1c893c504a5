"""Checks the built-in verl mapping tables against the verl facts shipped under mappings/verl/facts.

Reads only data under mappings/ (plus pyyaml); does not import the migrator package.
"""

import re

import pytest
import yaml

from migrator.mapping.facts import fact_lines
from tests.helpers import REPO, yaml_data

ROOT = REPO
VERL = ROOT / "mappings" / "verl"
FACTS = VERL / "facts"

RELEASES = yaml_data(VERL / "releases.yaml")["releases"]
TABLE_RELEASES = RELEASES[1:]
CONFIGS = ["ppo_trainer", "ppo_megatron_trainer", "ppo_veomni_trainer", "ppo_torchtitan_trainer"]

FIELDS = {
    "path-move": ({"old", "new"}, {"env", "args", "note"}),
    "path-removal": ({"old", "hint"}, {"note"}),
    "key-rename": ({"old", "new"}, {"note", "manual-when", "hint"}),
    "key-removal": ({"old", "action", "hint"}, {"note"}),
    "key-no-action": ({"old", "why"}, {"note"}),
    "env-rename": ({"old", "new"}, {"value", "when", "note"}),
    "env-removal": ({"old"}, {"value", "when", "hint", "note"}),
    "module-move": ({"old", "new"}, {"note", "commit"}),
    "module-removal": ({"old", "hint"}, {"note", "commit"}),
    "module-no-action": ({"old", "why"}, {"note", "commit"}),
    "symbol-move": ({"old", "new"}, {"hint", "note", "commit"}),
    "symbol-rename": ({"old", "new"}, {"hint", "note", "commit"}),
    "symbol-removal": ({"old", "hint"}, {"note", "commit"}),
    "keyword-rename": ({"function", "old", "new"}, {"note", "commit"}),
    "signature-change": ({"function", "param", "hint"}, {"callback", "note", "commit"}),
    "var-rename": ({"old", "new"}, {"when", "note"}),
}
# Entries about entry points and their configs: checked against the entry facts (tests/tables/test_entry_facts.py).
ENTRY_POINT_KINDS = ("entry-point-move", "entry-point-removal", "config-name-move", "config-dir-move",
                     "config-dir-removal", "key-scope")
FAMILY = {
    "path-move": "paths", "path-removal": "paths",
    "key-rename": "keys", "key-removal": "keys", "key-no-action": "keys",
    "env-rename": "env", "env-removal": "env",
    "module-move": "modules", "module-removal": "modules", "module-no-action": "modules", "var-rename": "vars",
    "symbol-move": "symbols", "symbol-rename": "symbols", "symbol-removal": "symbols",
    "keyword-rename": "keywords", "signature-change": "signatures",
}
SYMBOL_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$")
VALUE_KINDS = {"value-rename", "value-removal", "value-map", "value-default", "target-move"}
KEY_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*(\.[A-Za-z_][A-Za-z0-9_-]*)*(\.\*)?$")
PATH_RE = re.compile(r"^[A-Za-z0-9_.+/-]+$")
NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
MODULE_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")
VALUE_RE = re.compile(r"^[A-Za-z0-9 _./:,@%+=-]*$")


# ---------------------------------------------------------------- loading
def load_table(rel):
    data = yaml_data(VERL / f"{rel}.yaml")
    return data


TABLES = {rel: load_table(rel) for rel in TABLE_RELEASES}


def entries(rel, *kinds):
    """main_ppo's entries: scoped key entries, the entry-point kinds and value entries are about other things."""
    return [e for e in TABLES[rel]["entries"] if (e["kind"] in kinds if kinds else e["kind"] not in VALUE_KINDS)
            and "scope" not in e and e["kind"] not in ENTRY_POINT_KINDS]


def load_keys(rel):
    """{config: {key: type}} for configs shipped for this release."""
    out = {}
    for cfg in CONFIGS:
        p = FACTS / "config-keys" / f"{rel}.{cfg}.keys"
        if p.exists():
            d = {}
            for line in fact_lines(p):
                k, t = line.split("\t")
                d[k] = t.strip()
            out[cfg] = d
    return out


KEYS = {rel: load_keys(rel) for rel in RELEASES}
TREES = {rel: set(fact_lines(FACTS / "trees" / f"{rel}.paths")) for rel in RELEASES}
BETWEEN = yaml.safe_load((FACTS / "between-releases.yaml").read_text())["paths"]
BETWEEN_PATHS = {b["path"]: b for b in BETWEEN}


def all_keys(rel):
    out = {}
    for d in KEYS[rel].values():
        out.update(d)
    return out


def removed_keys(a, b):
    """Keys present in a config at `a` and absent from every config at `b` (configs present at both)."""
    kb = all_keys(b)
    rem = set()
    for cfg, d in KEYS[a].items():
        if cfg in KEYS[b]:
            rem |= {k for k in d if k not in kb}
    return rem


def is_script(p):
    return (p.startswith("examples/") or p.startswith("recipe/")) and p.endswith(".sh")


def removed_scripts(a, b):
    return {p for p in TREES[a] if is_script(p) and p not in TREES[b]}


def key_valid(rel, key):
    """Key exists in the release's key lists, or lies under a dict/null node that takes sub-keys."""
    keys = all_keys(rel)
    if key in keys:
        return True
    parts = key.split(".")
    for i in range(len(parts) - 1, 0, -1):
        prefix = ".".join(parts[:i])
        if prefix in keys:
            return keys[prefix] in ("dict", "null")
    return False


def prefix_exists(rel, prefix):
    return any(k.startswith(prefix + ".") for k in all_keys(rel))


def covered(key, olds):
    if key in olds:
        return True
    return any(o.endswith(".*") and key.startswith(o[:-1]) for o in olds)


PAIRS = list(zip(RELEASES, RELEASES[1:]))


# ---------------------------------------------------------------- structure
@pytest.mark.parametrize("rel", TABLE_RELEASES)
def test_table_structure(rel):
    data = TABLES[rel]
    assert data["release"] == rel
    ents = entries(rel)
    assert isinstance(ents, list) and len(ents) > 0
    seen = set()
    for e in ents:
        kind = e.get("kind")
        if kind in VALUE_KINDS:
            continue  # value entries have their own fields: tests/tables/test_value_entries.py
        assert kind in FIELDS, e
        req, opt = FIELDS[kind]
        fields = set(e) - {"kind", "pr"}
        opt = opt | {"why"}  # any kind may say what proves it where verl's history does not (scripts/prove_tables.py)
        assert req <= fields, (e, req - fields)
        assert fields <= req | opt, (e, fields - req - opt)
        assert isinstance(e["pr"], int) and not isinstance(e["pr"], bool) and e["pr"] > 0, e
        fam = FAMILY[kind]
        identity = (fam, e.get("function"), e.get("old"), e.get("param"))
        assert identity not in seen, f"duplicate old in {rel}: {e}"
        seen.add(identity)
        for text_field in ("hint", "note", "why"):
            if text_field in e:
                t = e[text_field]
                assert isinstance(t, str) and t.strip(), e
                assert "\n" not in t and "$(" not in t and "`" not in t, e
        if fam == "keys":
            assert KEY_RE.match(e["old"]), e
            if "new" in e:
                assert KEY_RE.match(e["new"]), e
                assert e["old"].endswith(".*") == e["new"].endswith(".*"), e
            if kind == "key-removal":
                assert e["action"] in ("remove", "warn"), e
        elif fam == "paths":
            for f in ("old", "new"):
                if f in e:
                    p = e[f]
                    assert PATH_RE.match(p) and not p.startswith("/"), e
                    assert ".." not in p.split("/") and "." not in p.split("/"), e
            if "env" in e:
                assert isinstance(e["env"], dict) and e["env"], e
                for k, v in e["env"].items():
                    assert NAME_RE.match(k) and VALUE_RE.match(str(v)), e
            if "args" in e:
                assert isinstance(e["args"], list) and e["args"], e
                assert all(VALUE_RE.match(a) for a in e["args"]), e
        elif fam in ("env", "vars"):
            assert NAME_RE.match(e["old"]), e
            if "new" in e:
                assert NAME_RE.match(e["new"]), e
        elif fam == "modules":
            assert MODULE_RE.match(e["old"]) and MODULE_RE.match(e.get("new", "x")), e
        elif fam == "symbols":
            assert SYMBOL_RE.match(e["old"]) and (SYMBOL_RE.match(e.get("new", "m:x")) or NAME_RE.match(e["new"])), e
        elif fam in ("keywords", "signatures"):
            assert SYMBOL_RE.match(e["function"]), e
            assert all(NAME_RE.match(e[f]) for f in ("old", "new", "param") if f in e), e
        if "when" in e:
            assert set(e["when"]) == {"file-matches"}, e
            pats = e["when"]["file-matches"]
            assert isinstance(pats, list) and pats
            for p in pats:
                re.compile(p)


@pytest.mark.parametrize("rel", TABLE_RELEASES)
def test_no_chains_inside_one_table(rel):
    renames = {e["old"]: e["new"] for e in entries(rel, "key-rename", "path-move", "module-move", "env-rename", "var-rename")}
    removed = {e["old"] for e in entries(rel, "key-removal", "path-removal", "env-removal")}
    for old, new in renames.items():
        if new in renames and renames.get(new) != new:
            assert new not in renames, f"{rel}: chain {old} -> {new} -> {renames[new]}"
        assert new not in removed, f"{rel}: {new} is renamed to and removed"


# ---------------------------------------------------------------- keys
@pytest.mark.parametrize("rel", TABLE_RELEASES)
def test_new_keys_exist(rel):
    n = 0
    for e in entries(rel, "key-rename"):
        new = e["new"]
        if new.endswith(".*"):
            assert prefix_exists(rel, new[:-2]), e
        else:
            assert key_valid(rel, new), e
        n += 1
    assert n == len(entries(rel, "key-rename"))


def test_some_key_renames():
    assert sum(len(entries(rel, "key-rename")) for rel in TABLE_RELEASES) > 50


def test_old_keys_existed_earlier():
    n = 0
    for i, rel in enumerate(TABLE_RELEASES):
        earlier = RELEASES[: i + 1]
        for e in entries(rel, "key-rename", "key-removal", "key-no-action"):
            old = e["old"]
            if old.endswith(".*"):
                ok = any(prefix_exists(r, old[:-2]) for r in earlier)
            else:
                ok = any(old in all_keys(r) or key_valid(r, old) for r in earlier)
            assert ok, (rel, e)
            n += 1
    assert n > 150


def test_removals_do_not_break_valid_keys():
    """A key-removal/rename old that is still valid in the same release must be a documented deprecation."""
    n_dep = 0
    for rel in TABLE_RELEASES:
        for e in entries(rel, "key-rename", "key-removal"):
            old = e["old"]
            still = prefix_exists(rel, old[:-2]) if old.endswith(".*") else old in all_keys(rel)
            if still:
                assert "deprecat" in (e.get("note", "") + e.get("hint", "")).lower(), (rel, e)
                n_dep += 1
    assert n_dep > 0


@pytest.mark.parametrize("a,b", PAIRS)
def test_removed_keys_covered(a, b):
    rem = removed_keys(a, b)
    olds = {e["old"] for e in entries(b, "key-rename", "key-removal", "key-no-action")}
    missing = sorted(k for k in rem if not k.endswith("._target_") and not covered(k, olds))
    assert not missing, f"{a}->{b}: uncovered removed keys {missing}"
    # keys removed from one config but still valid in another get a key-no-action note
    kb = all_keys(b)
    partial = set()
    for cfg, d in KEYS[a].items():
        if cfg in KEYS[b]:
            partial |= {k for k in d if k not in KEYS[b][cfg] and k in kb and cfg in ("ppo_trainer", "ppo_megatron_trainer")}
    partial = {k for k in partial if not k.endswith("._target_")}
    assert all(covered(k, olds) for k in partial), sorted(k for k in partial if not covered(k, olds))


def test_total_removed_keys():
    total = sum(len({k for k in removed_keys(a, b) if not k.endswith("._target_")}) for a, b in PAIRS)
    assert total == 196
    assert len({k for k in removed_keys("v0.7.1", "v0.8.0") if not k.endswith("._target_")}) == 39


# ---------------------------------------------------------------- paths
@pytest.mark.parametrize("rel", TABLE_RELEASES)
def test_new_paths_exist(rel):
    for e in entries(rel, "path-move"):
        assert e["new"] in TREES[rel], e


def test_old_paths_existed_earlier():
    n = 0
    for i, rel in enumerate(TABLE_RELEASES):
        earlier = RELEASES[: i + 1]
        for e in entries(rel, "path-move", "path-removal"):
            old = e["old"]
            ok = any(old in TREES[r] for r in earlier)
            if not ok:
                b = BETWEEN_PATHS.get(old)
                ok = b is not None and b["release"] == rel and re.match(r"^[0-9a-f]{7,40}$", b["added"]) and re.match(r"^[0-9a-f]{7,40}$", b["removed"])
            assert ok, (rel, e)
            n += 1
    assert n > 250


def test_removed_modules_left_in_that_release():
    # A module-removal names a package the release before still shipped and the release itself does not.
    seen = 0
    for rel in TABLE_RELEASES:
        previous = RELEASES[RELEASES.index(rel) - 1]
        for e in entries(rel, "module-removal"):
            base = e["old"].replace(".", "/")
            shipped = lambda tree, base=base: any(p == base + ".py" or p.startswith(base + "/") for p in tree)  # noqa: E731
            assert shipped(TREES[previous]) and not shipped(TREES[rel]), (rel, e)
            seen += 1
    assert seen >= 1


def test_between_release_paths_are_in_no_release_tree():
    assert BETWEEN
    for b in BETWEEN:
        assert not any(b["path"] in t for t in TREES.values()), b
        assert b["release"] in TABLE_RELEASES


@pytest.mark.parametrize("a,b", PAIRS)
def test_removed_scripts_covered(a, b):
    rem = removed_scripts(a, b)
    olds = {e["old"] for e in entries(b, "path-move", "path-removal")}
    missing = sorted(rem - olds)
    assert not missing, f"{a}->{b}: uncovered scripts {missing}"


def test_total_removed_scripts():
    assert sum(len(removed_scripts(a, b)) for a, b in PAIRS) == 294
    assert len(removed_scripts("v0.7.1", "v0.8.0")) == 159


def test_paths_are_clean_in_trees():
    bad = sorted({p for t in TREES.values() for p in t if is_script(p) and not PATH_RE.match(p)})
    assert not bad, bad


# ---------------------------------------------------------------- composition
def compose_keys(start):
    """Apply key tables after `start` up to main in order; return {original_key: final or None}."""
    idx = RELEASES.index(start)
    state = {}  # original -> current (None = removed)
    for rel in RELEASES[idx + 1:]:
        ren = {e["old"]: e["new"] for e in entries(rel, "key-rename")}
        rem = {e["old"] for e in entries(rel, "key-removal")}
        rem_sub = [o[:-1] for o in rem if o.endswith(".*")]
        # newly seen originals
        for old in list(ren) + list(rem):
            if old not in state and old not in state.values():
                state[old] = old
        for orig, cur in list(state.items()):
            if cur is None:
                continue
            if cur in ren:
                state[orig] = ren[cur]
            elif any(o.endswith(".*") and cur.startswith(o[:-1]) for o in ren):
                o = next(o for o in ren if o.endswith(".*") and cur.startswith(o[:-1]))
                state[orig] = ren[o][:-1] + cur[len(o) - 1:]
            elif cur in rem or any(cur.startswith(p) for p in rem_sub):
                state[orig] = None
    return state


@pytest.mark.parametrize("start", RELEASES[:-1])
def test_composition_to_main(start):
    state = compose_keys(start)
    assert state
    for orig, final in state.items():
        if final is None:
            continue
        # every surviving chain ends on a key that is valid at main (or under a dict node / subtree)
        if final.endswith(".*"):
            assert prefix_exists("main", final[:-2]), (start, orig, final)
        else:
            assert key_valid("main", final) or prefix_exists("main", final), (start, orig, final)
    # no cycles: following renames from any key never revisits it
    for rel in TABLE_RELEASES:
        ren = {e["old"]: e["new"] for e in entries(rel, "key-rename", "path-move", "module-move")}
        for old in ren:
            seen, cur = {old}, ren[old]
            while cur in ren:
                assert cur not in seen, (rel, old)
                seen.add(cur)
                cur = ren[cur]


def test_path_composition_to_main():
    """Path moves chain across releases without conflicts (one destination per old path per table)."""
    for rel in TABLE_RELEASES:
        moves = entries(rel, "path-move")
        dests = {}
        for e in moves:
            dests.setdefault(e["old"], set()).add(e["new"])
        assert all(len(v) == 1 for v in dests.values())


def test_skip_rollout_chain():
    state = compose_keys("v0.7.1")
    assert state["actor_rollout_ref.rollout.skip_rollout"] == "skip.rollout.enable"
    assert compose_keys("v0.8.0")["actor_rollout_ref.rollout.skip.enable"] == "skip.rollout.enable"


# ---------------------------------------------------------------- must-have entries
def find(rel, kind, old):
    m = [e for e in entries(rel, kind) if e["old"] == old]
    assert m, (rel, kind, old)
    return m[0]


def test_must_have_entries():
    e = find("v0.8.0", "path-move", "examples/grpo_trainer/run_qwen3_30b_a3b_mindspeed.sh")
    assert e["new"] == "examples/ascend_extras/grpo_trainer/run_qwen3_30b_a3b_mindspeed.sh" and e["pr"] == 6285
    ascend = [e for e in entries("v0.8.0", "path-move") if e["new"].startswith("examples/ascend_extras/")]
    assert len(ascend) >= 3
    v = find("v0.8.0", "var-rename", "train_etp")
    assert v["new"] == "actor_etp" and v["pr"] == 6285 and v["when"]["file-matches"]
    e = find("v0.7.1", "key-rename", "actor_rollout_ref.rollout.update_weights_bucket_megabytes")
    assert e["new"] == "actor_rollout_ref.rollout.checkpoint_engine.update_weights_bucket_megabytes"
    e = find("v0.8.0", "env-removal", "VLLM_ATTENTION_BACKEND")
    assert e["value"] == "XFORMERS" and e["pr"] == 6066
    assert e["when"]["file-matches"] == [r"\bASCEND_[A-Z_]+", r"\bHCCL_[A-Z_]+"]
    e = find("v0.8.0", "key-removal", "actor_rollout_ref.rollout.engine_kwargs.vllm.enable_expert_parallel")
    assert e["action"] == "warn" and e["pr"] == 5609 and "expert_parallel_size" in e["hint"]
    assert find("v0.8.0", "key-rename", "actor_rollout_ref.rollout.skip_rollout")["new"] == "actor_rollout_ref.rollout.skip.enable"
    assert find("v0.9.0", "key-rename", "actor_rollout_ref.rollout.skip.enable")["new"] == "skip.rollout.enable"
    assert find("v0.8.0", "key-rename", "critic.model.fsdp_config.*")["new"] == "critic.fsdp.*"
    assert find("v0.7.1", "module-move", "recipe.fully_async_policy")["new"] == "verl.experimental.fully_async_policy"
    assert find("v0.7.1", "module-move", "recipe.one_step_off_policy")["new"] == "verl.experimental.one_step_off_policy"
    assert find("v0.7.0", "module-move", "verl.utils.npu_utils")["new"] == "verl.utils.npu_flash_attn_utils"
    for k in ("actor_rollout_ref.actor.ppo_micro_batch_size", "critic.ppo_micro_batch_size"):
        assert find("v0.2.0.post2", "key-removal", k)["action"] == "warn"
    assert "986" in find("v0.3.0.post1", "key-no-action", "data.val_batch_size")["why"]
    assert find("v0.6.0", "key-rename", "actor_rollout_ref.actor.grad_clip")["new"] == "actor_rollout_ref.actor.optim.clip_grad"
    assert find("v0.6.0", "key-rename", "actor_rollout_ref.actor.optim.warmup_style")["new"] == "actor_rollout_ref.actor.optim.lr_scheduler_type"
    for old in ("reward_manager.*", "custom_reward_function.*", "reward_model.rollout.*", "reward_model.enable"):
        assert find("v0.7.1", "key-rename", old)["new"].startswith("reward.")


def test_shipped_facts_size():
    total = sum(p.stat().st_size for p in FACTS.rglob("*") if p.is_file())
    # A bound against an accidental dump, not a target: twelve releases' key lists, config trees, module
    # trees, start-up proofs and config dataclasses came to 5.26 MB on 2026-12-02; a release adds ~0.3 MB.
    assert 0 < total < 6_000_000
    for rel in RELEASES:
        assert KEYS[rel].get("ppo_trainer"), rel
        assert TREES[rel], rel


# A script path a hint names as the replacement (`use examples/x/run_y.sh with ...`).
HINT_PATH = re.compile(r"(?<![\w/.-])((?:examples|recipe)/[\w./-]+\.(?:sh|py|yaml))")


def _tree_lists(rel: str, path: str) -> bool:
    """The release's tree facts list that path's root (recipe/ is a submodule from v0.7.1: not listed)."""
    root = path.split("/", 1)[0] + "/"
    return any(p.startswith(root) for p in TREES[rel])


def test_hint_paths_exist_or_are_followed():
    """A path a hint names exists at the entry's release, and where a later release lacks it a table entry
    of that release or an earlier one moves or removes it (the composition follows it: path_changes)."""
    bad, seen = [], 0
    for i, rel in enumerate(TABLE_RELEASES):
        for e in entries(rel):
            for named in HINT_PATH.findall(e.get("hint") or ""):
                if named == e.get("old") or not _tree_lists(rel, named):
                    continue
                seen += 1
                if named not in TREES[rel]:
                    bad.append((rel, e["old"], named, "not in the entry's release"))
                    continue
                for later in TABLE_RELEASES[i + 1:]:
                    if named in TREES[later] or not _tree_lists(later, named):
                        continue
                    upto = TABLE_RELEASES[i + 1: TABLE_RELEASES.index(later) + 1]
                    module = named.removesuffix(".py").replace("/", ".")
                    if not any(m["old"] == named for r in upto for m in entries(r, "path-move", "path-removal")) \
                            and not any(module.startswith(m["old"] + ".") for r in upto
                                        for m in entries(r, "module-move", "module-removal")):
                        bad.append((rel, e["old"], named, f"gone at {later} with no entry"))
                    break
    assert seen > 100 and not bad, bad


def test_a_full_parameter_script_is_never_sent_to_a_lora_one():
    bad = [(rel, e["old"]) for rel in TABLE_RELEASES for e in entries(rel, "path-removal")
           if "lora" not in e["old"].lower()
           and any("lora" in p.lower() for p in HINT_PATH.findall(e.get("hint") or ""))]
    assert not bad, bad
