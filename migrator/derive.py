"""Draft a mapping table from verl's git history between two revisions (`verl-migrate derive`).

The draft is in the tables' own format (docs/table-format.md) and loads with `load_table`; every
entry carries `confidence:`, `evidence:` and `review: true`, because it is a guess for a maintainer
to check, not a fact. It pairs:
- scripts (examples/**/*.sh, recipe/**/*.sh): git's rename detection, then the same file name in
  another folder, then normalised names, then content similarity; unpaired deletions become removals;
- config keys: the flattened generated configs at both revisions, paired by leaf name, type and
  default, with subtree moves folded into one `a.*` -> `b.*` entry;
- Python modules: renamed `.py` files under verl/ and recipe/ (license-only files ignored).
PR numbers come from the commit in from..to that made each change (`(#N)` in its subject).
"""

from __future__ import annotations

import difflib
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field

import yaml

from migrator import history
from migrator.mapping.entries import KEY_RE, MODULE_RE, PATH_RE

CONFIG_DIR = "verl/trainer/config/"
GENERATED_RE = re.compile(r"verl/trainer/config/_generated_[A-Za-z0-9_]+\.yaml\Z")
# Before v0.5.0 the trainer configs were flat files; these are their stand-ins for the generated ones.
FLAT_CONFIGS = ("verl/trainer/config/ppo_trainer.yaml", "verl/trainer/config/ppo_megatron_trainer.yaml")
# Hydra bookkeeping, not user keys.
IGNORED_TOP_KEYS = {"defaults", "hydra"}
# Variant suffixes that script consolidations drop or add (`run_qwen3-8b.sh` ~ `run_qwen3_8b_fsdp.sh`).
VARIANT_SUFFIXES = ("fsdp2", "fsdp", "megatron", "mcore", "npu", "gpu", "cuda", "ascend", "amd", "rocm",
                    "vllm", "sglang", "mindspeed", "example", "demo")
MODULE_ROOTS = ("verl/", "recipe/")
# Leaf names too common to pair on their own.
GENERIC_LEAVES = {"name", "enable", "enabled", "path", "type", "mode", "dtype", "strategy", "size", "value",
                  "_target_", "impl", "backend", "kwargs"}
KIND_ORDER = ("path-move", "path-removal", "key-rename", "key-removal", "key-no-action", "module-move")


@dataclass
class Draft:
    """One drafted entry. `covers` lists the concrete old names it stands for (subtrees: every key)."""

    kind: str
    old: str
    fields: dict
    pr: int | None
    confidence: str
    evidence: str
    covers: tuple[str, ...] = ()

    def as_yaml_dict(self) -> dict:
        out = {"kind": self.kind, "old": self.old, **self.fields, "pr": self.pr or 0,
               "confidence": self.confidence, "evidence": self.evidence, "review": True}
        return out


@dataclass
class Derivation:
    from_rev: str
    to_rev: str
    drafts: list[Draft] = field(default_factory=list)
    removed_keys: set[str] = field(default_factory=set)
    removed_scripts: set[str] = field(default_factory=set)

    def sorted_drafts(self) -> list[Draft]:
        return sorted(self.drafts, key=lambda d: (KIND_ORDER.index(d.kind), d.old))


# -- scripts ---------------------------------------------------------------------------------------

def is_script(path: str) -> bool:
    return path.endswith(".sh") and (path.startswith("examples/") or path.startswith("recipe/"))


def normalised_name(path: str) -> str:
    stem = path.rsplit("/", 1)[-1].rsplit(".", 1)[0].lower().replace("-", "_")
    changed = True
    while changed:
        changed = False
        for suffix in VARIANT_SUFFIXES:
            if stem.endswith("_" + suffix) and len(stem) > len(suffix) + 1:
                stem = stem[: -len(suffix) - 1]
                changed = True
    return stem


_TOKEN_RE = re.compile(rb"[A-Za-z0-9_.$/=-]+")


def shingles(content: bytes) -> frozenset:
    """Token 3-grams of a file, ignoring comment lines (similarity of what the script does)."""
    lines = [line for line in content.splitlines() if not line.lstrip().startswith(b"#")]
    tokens = _TOKEN_RE.findall(b"\n".join(lines))
    if len(tokens) < 3:
        return frozenset([tuple(tokens)]) if tokens else frozenset()
    return frozenset(zip(tokens, tokens[1:], tokens[2:]))


def jaccard(a: frozenset, b: frozenset) -> float:
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


def _basename(path: str) -> str:
    return path.rsplit("/", 1)[-1]


def _dirname(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else ""


@dataclass
class _Pair:
    old: str
    new: str | None
    how: str
    similarity: float
    confidence: str
    candidate: str | None = None  # removals: the best successor seen, for the hint


def pair_scripts(old_only: dict[str, bytes], new_only: dict[str, bytes], existing: dict[str, bytes],
                 git_renames: dict[str, tuple[str, int]]) -> list[_Pair]:
    """Pair deleted scripts with their successors; `_Pair.new` None means a removal (best guess kept)."""
    sh = {p: shingles(c) for p, c in {**old_only, **new_only, **existing}.items()}
    by_base: dict[str, list[str]] = defaultdict(list)
    by_norm: dict[str, list[str]] = defaultdict(list)
    for p in new_only:
        by_base[_basename(p)].append(p)
        by_norm[normalised_name(p)].append(p)
    existing_by_key: dict[str, list[str]] = defaultdict(list)
    for p in existing:
        existing_by_key[_dirname(p)].append(p)
        existing_by_key["norm:" + normalised_name(p)].append(p)
    pairs = []
    for old in sorted(old_only):
        if old in git_renames:
            new, score = git_renames[old]
            same = _basename(new) == _basename(old)
            pairs.append(_Pair(old, new, f"git rename detection (similarity {score}%)", score / 100,
                               "high" if same or score >= 70 else "medium"))
            continue
        best_new, best_sim = None, -1.0
        candidates = set(new_only) | set(existing_by_key.get(_dirname(old), ())) \
            | set(existing_by_key.get("norm:" + normalised_name(old), ()))
        for cand in sorted(candidates):
            sim = jaccard(sh[old], sh[cand])
            if sim > best_sim:
                best_new, best_sim = cand, sim
        same_base = by_base.get(_basename(old), [])
        same_norm = [p for p in by_norm.get(normalised_name(old), []) if p not in same_base] \
            + [p for p in existing_by_key.get("norm:" + normalised_name(old), []) if p not in same_base]
        same_model = [p for p in candidates if _dirname(p) == _dirname(old) and _same_model(old, p)]
        # Prefer the successor in the same folder, then the most similar content.
        rank = lambda p: (_dirname(p) == _dirname(old), _backend(p) == _backend(old),  # noqa: E731
                          jaccard(sh[old], sh[p]), -len(p))
        if same_base:
            new = max(same_base, key=rank)
            sim = jaccard(sh[old], sh[new])
            conf = "high" if sim >= 0.5 or len(same_base) == 1 else "medium"
            pairs.append(_Pair(old, new, f"same file name in another folder (content similarity {sim:.2f})",
                               sim, conf))
        elif same_norm:
            new = max(same_norm, key=rank)
            sim = jaccard(sh[old], sh[new])
            pairs.append(_Pair(old, new, f"normalised names match (content similarity {sim:.2f})", sim,
                               "medium" if sim >= 0.3 else "low"))
        elif same_model:
            new = max(same_model, key=lambda p: (_backend(p) == _backend(old),
                                                 len(_common_prefix(_compact(old), _compact(p))),
                                                 jaccard(sh[old], sh[p]), -len(p)))
            sim = jaccard(sh[old], sh[new])
            pairs.append(_Pair(old, new, f"same folder and model name (content similarity {sim:.2f})", sim, "low"))
        elif best_new is not None and best_sim >= 0.6:
            pairs.append(_Pair(old, best_new, f"content similarity {best_sim:.2f}", best_sim, "medium"))
        elif best_new is not None and best_sim >= 0.45 and _name_ratio(old, best_new) >= 0.6:
            pairs.append(_Pair(old, best_new, f"content similarity {best_sim:.2f} and similar names", best_sim,
                               "low"))
        elif best_new is None:
            pairs.append(_Pair(old, None, "no candidate successor", 0.0, "medium"))
        else:
            pairs.append(_Pair(old, None, f"best candidate {best_new} at content similarity {best_sim:.2f}",
                               best_sim, "medium", best_new))
    return pairs


def _compact(path: str) -> str:
    """The normalised name without separators: `run_glm41v_9b` ~ `run_glm4_1v_9b_fsdp`."""
    return re.sub(r"[^a-z0-9]", "", normalised_name(path))


def _common_prefix(a: str, b: str) -> str:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return a[:n]


def _same_model(old: str, new: str) -> bool:
    """One name extends the other (`run_qwen3_8b_grpo_sglang_1k` ~ `run_qwen3_8b`), or both name the
    same model size (`run_qwen3_vl-30b-megatron` ~ `run_qwen3_vl_30b_a3b_megatron`)."""
    a, b = _compact(old), _compact(new)
    if a.startswith(b):
        return True
    return re.search(r"\d+b", _common_prefix(a, b)) is not None


def _backend(path: str) -> str:
    """The training backend a script name says it uses (verl's consolidated names end in it)."""
    name = _basename(path).lower()
    return "megatron" if "megatron" in name or "mcore" in name else "fsdp"


def _name_ratio(a: str, b: str) -> float:
    return difflib.SequenceMatcher(None, normalised_name(a), normalised_name(b)).ratio()


# -- config keys -----------------------------------------------------------------------------------

def flatten(data: object, prefix: str = "") -> dict[str, object]:
    """Dotted key -> default value for a nested config (lists and empty mappings are leaves)."""
    out: dict[str, object] = {}
    if not isinstance(data, dict):
        return out
    for key, value in data.items():
        if not prefix and key in IGNORED_TOP_KEYS:
            continue
        dotted = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(value, dict) and value:
            out.update(flatten(value, dotted))
        elif KEY_RE.match(dotted):
            out[dotted] = value
    return out


def config_blobs(repo, rev: str) -> dict[str, str]:
    files = history.tree_files(repo, rev, (CONFIG_DIR,))
    generated = {p: s for p, s in files.items() if GENERATED_RE.match(p)}
    if generated:
        return generated
    return {p: files[p] for p in FLAT_CONFIGS if p in files}


_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml: ~10x faster on 1000-line configs


class ConfigKeys:
    """Flattened key sets per revision, memoised by the config blobs (most commits share them)."""

    def __init__(self, repo):
        self.repo = repo
        self._parsed: dict[str, dict[str, object]] = {}

    def at(self, rev: str) -> dict[str, object]:
        blobs = config_blobs(self.repo, rev)
        missing = [s for s in blobs.values() if s not in self._parsed]
        for sha, content in history.read_blobs(self.repo, missing).items():
            try:
                self._parsed[sha] = flatten(yaml.load(content, Loader=_LOADER))
            except yaml.YAMLError:
                self._parsed[sha] = {}
        merged: dict[str, object] = {}
        for path in sorted(blobs):
            for key, value in self._parsed.get(blobs[path], {}).items():
                merged.setdefault(key, value)
        return merged


def _type(value: object) -> str:
    return "null" if value is None else type(value).__name__


def _same_type(a: object, b: object) -> bool:
    return a is None or b is None or _type(a) == _type(b)


def _parent(key: str) -> str:
    return key.rsplit(".", 1)[0] if "." in key else ""


def _leaf(key: str) -> str:
    return key.rsplit(".", 1)[-1]


def pair_keys(before: dict[str, object], after: dict[str, object]):
    """(subtree moves, key pairs, removed subtrees, leftover removed keys) between two key sets.

    Subtree move: the whole subtree under P disappeared and most of its relative keys reappear
    under one prefix Q. Key pair: same leaf with the same type (and preferably default).
    """
    removed = sorted(set(before) - set(after))
    added = sorted(set(after) - set(before))
    removed_set, added_set = set(removed), set(added)
    # Highest prefixes whose whole subtree disappeared.
    gone_prefixes: dict[str, list[str]] = {}
    for key in removed:
        parts = key.split(".")
        for n in range(1, len(parts)):
            prefix = ".".join(parts[:n])
            if prefix in gone_prefixes:
                break
            under = [k for k in before if k.startswith(prefix + ".")]
            if all(k in removed_set for k in under) and len(under) >= 2:
                gone_prefixes[prefix] = under
                break
    subtree_moves: list[tuple[str, str, list[str], int]] = []
    covered: set[str] = set()
    used_added: set[str] = set()
    for prefix, under in sorted(gone_prefixes.items()):
        suffixes = [k[len(prefix) + 1:] for k in under]
        votes: Counter = Counter()
        for suffix in suffixes:
            for a in added:
                if a.endswith("." + suffix):
                    votes[a[: -len(suffix) - 1]] += 1
        if not votes:
            continue
        target, count = max(votes.items(), key=lambda kv: (kv[1], -len(kv[0])))
        if count >= 2 and count / len(suffixes) >= 0.6 and target != prefix:
            moved = [prefix + "." + s for s in suffixes if f"{target}.{s}" in added_set]
            subtree_moves.append((prefix, target, moved, count))
            covered.update(moved)
            used_added.update(f"{target}.{s}" for s in suffixes if f"{target}.{s}" in added_set)
    pairs: list[tuple[str, str, str, str]] = []  # old, new, confidence, evidence
    leaves: dict[str, list[str]] = defaultdict(list)
    for a in added:
        if a not in used_added:
            leaves[_leaf(a)].append(a)
    for old in removed:
        if old in covered or _leaf(old) == "_target_":
            continue
        cands = [a for a in leaves.get(_leaf(old), []) if a not in used_added and _same_type(before[old], after[a])]
        if _leaf(old) in GENERIC_LEAVES:  # `name`, `enable`: only a move that keeps the parent's name
            cands = [a for a in cands if _leaf(_parent(a)) == _leaf(_parent(old))]
        if not cands:
            continue
        same_default = [a for a in cands if after[a] == before[old]]
        pool = same_default or cands
        new = max(pool, key=lambda a: (difflib.SequenceMatcher(None, old, a).ratio(), a))
        if len(pool) == 1 and same_default:
            conf, why = "high", "same leaf name, type and default"
        elif same_default:
            conf, why = "medium", f"same leaf name and default; {len(pool)} candidates, closest path chosen"
        else:
            conf, why = "low", "same leaf name and type, different default"
        pairs.append((old, new, conf, why))
        used_added.add(new)
        covered.add(old)
    # One removed and one added key under the same parent, same type and default: a leaf rename.
    rest_removed = [k for k in removed if k not in covered and _leaf(k) != "_target_"]
    rest_added = [a for a in added if a not in used_added]
    by_parent_added: dict[str, list[str]] = defaultdict(list)
    for a in rest_added:
        by_parent_added[_parent(a)].append(a)
    by_parent_removed: dict[str, list[str]] = defaultdict(list)
    for k in rest_removed:
        by_parent_removed[_parent(k)].append(k)
    for parent, olds in by_parent_removed.items():
        news = by_parent_added.get(parent, [])
        if parent and len(olds) == 1 and len(news) == 1 and before[olds[0]] == after[news[0]] \
                and _same_type(before[olds[0]], after[news[0]]) and before[olds[0]] is not None:
            pairs.append((olds[0], news[0], "low", "only key removed and only key added under its parent, "
                                                   "same type and default"))
            covered.add(olds[0])
    # `x.skip_dump_dir` -> `x.skip.dump_dir`: a flat key split into a node.
    for old in removed:
        if old in covered or _leaf(old) == "_target_":
            continue
        for a in added:
            if a in used_added or not _same_type(before[old], after[a]):
                continue
            tail = a[len(_parent(old)) + 1:] if _parent(old) and a.startswith(_parent(old) + ".") else None
            if tail and "." in tail and tail.replace(".", "_") == _leaf(old):
                pairs.append((old, a, "medium", "flat key split into a node with the same words"))
                covered.add(old)
                used_added.add(a)
                break
    leftovers = [k for k in removed if k not in covered]
    return subtree_moves, pairs, leftovers


def _fold_removals(keys: list[str], before: dict[str, object]) -> list[tuple[str, list[str]]]:
    """Group removed keys into whole removed subtrees (`P.*`) where every key under P went."""
    remaining = set(keys)
    groups: list[tuple[str, list[str]]] = []
    for key in sorted(keys):
        if key not in remaining:
            continue
        parts = key.split(".")
        chosen = None
        for n in range(1, len(parts)):
            prefix = ".".join(parts[:n])
            under = [k for k in before if k.startswith(prefix + ".")]
            if len(under) >= 2 and all(k in remaining for k in under):
                chosen = (prefix, under)
                break
        if chosen:
            groups.append((chosen[0] + ".*", sorted(chosen[1])))
            remaining.difference_update(chosen[1])
        else:
            groups.append((key, [key]))
            remaining.discard(key)
    return groups


# -- modules ---------------------------------------------------------------------------------------

def module_name(path: str) -> str | None:
    if not path.endswith(".py") or not path.startswith(MODULE_ROOTS):
        return None
    dotted = path[:-3].replace("/", ".")
    if dotted.endswith(".__init__"):
        dotted = dotted[: -len(".__init__")]
    return dotted if MODULE_RE.match(dotted) else None


def is_near_empty(content: bytes) -> bool:
    """License headers, docstrings and blank lines only (git pairs such files by mistake)."""
    text = re.sub(rb'("""|\'\'\')(.|\n)*?\1', b"", content)
    code = [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith(b"#")]
    return len(code) <= 2


# -- PR attribution --------------------------------------------------------------------------------

class PathCommits:
    """For each path, the newest commit in from..to that deleted, renamed or touched it (one git log)."""

    def __init__(self, commits: list[history.Commit]):
        self.removed: dict[str, history.Commit] = {}
        self.added: dict[str, history.Commit] = {}
        self.touched: dict[str, history.Commit] = {}
        for commit in commits:  # newest first: keep the first seen
            for status, path, new in commit.changes:
                if status in "DR":
                    self.removed.setdefault(path, commit)
                if status in "AC":
                    self.added.setdefault(path, commit)
                if new:
                    self.added.setdefault(new, commit)
                self.touched.setdefault(path, commit)
                if new:
                    self.touched.setdefault(new, commit)

    def for_move(self, old: str, new: str | None) -> tuple[int | None, str]:
        """(PR, how it was found) for a change that took `old` away (and maybe brought `new`)."""
        commit = self.removed.get(old)
        if commit is not None and commit.pr:
            if new is None or new in commit.paths:
                return commit.pr, f"commit {commit.sha[:9]}"
            return commit.pr, f"commit {commit.sha[:9]} removed it; {new} came from elsewhere"
        other = self.touched.get(old) or (self.added.get(new) if new else None)
        if other is not None and other.pr:
            return other.pr, f"no PR commit removed it; PR of commit {other.sha[:9]} that touched it"
        return None, "no PR commit found"


# -- derive ----------------------------------------------------------------------------------------

def derive(repo, from_rev: str, to_rev: str) -> Derivation:
    from_sha, to_sha = history.resolve(repo, from_rev), history.resolve(repo, to_rev)
    result = Derivation(from_rev, to_rev)
    log = history.commits(repo, f"{from_sha}..{to_sha}")
    path_commits = PathCommits(log)
    fallback_pr = next((c.pr for c in log if c.pr), None)
    _derive_scripts(repo, from_sha, to_sha, result, path_commits, fallback_pr)
    _derive_keys(repo, from_sha, to_sha, result, log, fallback_pr)
    _derive_modules(repo, from_sha, to_sha, result, path_commits, fallback_pr)
    return result


def _lower(confidence: str) -> str:
    return {"high": "medium", "medium": "low", "low": "low"}[confidence]


def _with_pr(draft_pr: int | None, how: str, confidence: str, fallback: int | None) -> tuple[int | None, str, str]:
    if draft_pr is None:
        return fallback, _lower(confidence), f"PR guessed: {how}, took the newest PR in the range"
    if how.startswith("commit "):
        return draft_pr, confidence, how
    return draft_pr, _lower(confidence), how


def _derive_scripts(repo, from_sha, to_sha, result: Derivation, path_commits: PathCommits, fallback):
    before = {p: s for p, s in history.tree_files(repo, from_sha, ("examples/", "recipe/")).items() if is_script(p)}
    after = {p: s for p, s in history.tree_files(repo, to_sha, ("examples/", "recipe/")).items() if is_script(p)}
    old_only = {p: s for p, s in before.items() if p not in after}
    new_only = {p: s for p, s in after.items() if p not in before}
    existing = {p: s for p, s in after.items() if p in before}
    result.removed_scripts = set(old_only)
    if not old_only:
        return
    git_renames = {}
    for status, path, new, score in history.name_status(repo, from_sha, to_sha):
        if status == "R" and path in old_only and new in after and PATH_RE.match(new):
            git_renames[path] = (new, score)
    blobs = history.read_blobs(repo, [*old_only.values(), *new_only.values(), *existing.values()])
    content = lambda files: {p: blobs.get(s, b"") for p, s in files.items()}  # noqa: E731
    pairs = pair_scripts(content(old_only), content(new_only), content(existing), git_renames)
    targets = Counter(p.new for p in pairs if p.new)
    for pair in pairs:
        if not PATH_RE.match(pair.old):
            continue
        pr, how = path_commits.for_move(pair.old, pair.new)
        if pair.new is not None:
            conf = pair.confidence
            evidence = pair.how
            if targets[pair.new] > 1:
                conf = _lower(conf) if conf == "high" else conf
                evidence += f"; {targets[pair.new]} old scripts share this successor (consolidated: env presets?)"
            pr, conf, how = _with_pr(pr, how, conf, fallback)
            result.drafts.append(Draft("path-move", pair.old, {"new": pair.new}, pr, conf,
                                       f"{evidence}; {how}", (pair.old,)))
        else:
            candidate = pair.candidate
            hint = (f"nearest successor: {candidate} (content similarity {pair.similarity:.2f})"
                    if candidate and pair.similarity >= 0.2 else "deleted; no successor found, see the PR")
            pr, conf, how = _with_pr(pr, how, "medium", fallback)
            result.drafts.append(Draft("path-removal", pair.old, {"hint": hint}, pr, conf,
                                       f"deleted with no pair ({pair.how}); {how}", (pair.old,)))


def _config_commits(repo, log: list[history.Commit]) -> list[history.Commit]:
    return [c for c in log if any(GENERATED_RE.match(p) or p in FLAT_CONFIGS for p in c.paths)]


def _key_commits(repo, keys: ConfigKeys, log: list[history.Commit]) -> tuple[dict, dict]:
    """key -> the commit that last removed / added it, by diffing the config keys at each config commit."""
    removed_in: dict[str, history.Commit] = {}
    added_in: dict[str, history.Commit] = {}
    for commit in reversed(_config_commits(repo, log)):  # oldest first; newer overwrite
        if not history.has_revision(repo, commit.sha + "^"):
            continue
        now, then = keys.at(commit.sha), keys.at(commit.sha + "^")
        for key in set(then) - set(now):
            removed_in[key] = commit
        for key in set(now) - set(then):
            added_in[key] = commit
    return removed_in, added_in


def _derive_keys(repo, from_sha, to_sha, result: Derivation, log, fallback):
    keys = ConfigKeys(repo)
    before, after = keys.at(from_sha), keys.at(to_sha)
    if not before or not after:
        return
    removed_in, added_in = _key_commits(repo, keys, log)
    result.removed_keys = set(before) - set(after)
    subtree_moves, pairs, leftovers = pair_keys(before, after)

    def attribution(old: str, new: str | None, confidence: str) -> tuple[int | None, str, str]:
        commit = removed_in.get(old)
        if commit is not None and commit.pr:
            if new is None or added_in.get(new) is commit:
                return commit.pr, confidence, f"commit {commit.sha[:9]} changed the generated config"
            return commit.pr, _lower(confidence), (f"commit {commit.sha[:9]} removed it, "
                                                   f"but {new} was added by another commit")
        config_commits = _config_commits(repo, log)
        first = config_commits[-1] if config_commits else None
        if first is not None and first.pr:
            return first.pr, "low", f"PR guessed: the first commit touching the configs ({first.sha[:9]})"
        return fallback, "low", "PR guessed: the newest PR in the range"

    for prefix, target, moved, count in subtree_moves:
        pr, conf, how = attribution(moved[0], f"{target}.{moved[0][len(prefix) + 1:]}", "high")
        result.drafts.append(Draft("key-rename", prefix + ".*", {"new": target + ".*"}, pr, conf,
                                   f"subtree move: {count} keys reappear under {target}; {how}", tuple(moved)))
    for old, new, conf, why in pairs:
        pr, conf, how = attribution(old, new, conf)
        result.drafts.append(Draft("key-rename", old, {"new": new}, pr, conf, f"{why}; {how}", (old,)))
    targets = [k for k in leftovers if _leaf(k) == "_target_"]
    others = [k for k in leftovers if _leaf(k) != "_target_"]
    moved_prefixes = [p for p, _, _, _ in subtree_moves]
    for key in targets:
        if any(key.startswith(p + ".") for p in moved_prefixes):
            pr, conf, how = attribution(key, None, "high")
            result.drafts.append(Draft("key-no-action", key, {"why": "internal dataclass target; its node moved"},
                                       pr, conf, how, (key,)))
            continue
        pr, conf, how = attribution(key, None, "high")
        result.drafts.append(Draft("key-no-action", key, {"why": "internal dataclass target, not a user setting"},
                                   pr, conf, how, (key,)))
    for old, members in _fold_removals(others, before):
        pr, conf, how = attribution(members[0], None, "medium")
        what = f"{len(members)} keys, whole subtree removed" if len(members) > 1 else "no successor with the same leaf"
        result.drafts.append(Draft("key-removal", old, {"action": "warn",
                                                        "hint": "removed from the config; check the PR for a replacement"},
                                   pr, conf, f"{what}; {how}", tuple(members)))


def _derive_modules(repo, from_sha, to_sha, result: Derivation, path_commits: PathCommits, fallback):
    rows = [r for r in history.name_status(repo, from_sha, to_sha)
            if r[0] == "R" and module_name(r[1]) and module_name(r[2] or "")]
    if not rows:
        return
    before = history.tree_files(repo, from_sha, MODULE_ROOTS)
    after = history.tree_files(repo, to_sha, MODULE_ROOTS)
    blobs = history.read_blobs(repo, [before[r[1]] for r in rows if r[1] in before])
    still_there = {module_name(p) for p in after} - {None}
    moves: dict[str, tuple[str, str, int]] = {}
    for _, old, new, score in rows:
        if is_near_empty(blobs.get(before.get(old, ""), b"")):
            continue
        old_mod, new_mod = module_name(old), module_name(new)
        # `a/b.py` -> `a/b/x.py` leaves `a.b` importable as a package: nothing for users to change.
        if old_mod != new_mod and old_mod not in still_there:
            moves[old_mod] = (new_mod, old, score)
    # A whole package that moved with the same module names: one package-level entry.
    remaining_dirs = {_dirname(p) for p in after}
    packages: dict[tuple[str, str], list[str]] = defaultdict(list)
    for old_mod, (new_mod, old_path, _) in moves.items():
        if old_mod.rsplit(".", 1)[-1] == new_mod.rsplit(".", 1)[-1] and "." in old_mod and "." in new_mod:
            packages[(old_mod.rsplit(".", 1)[0], new_mod.rsplit(".", 1)[0])].append(old_mod)
    done: set[str] = set()
    for (old_pkg, new_pkg), members in sorted(packages.items()):
        old_dir = old_pkg.replace(".", "/")
        if len(members) >= 2 and old_dir not in remaining_dirs and old_pkg not in moves:
            pr, how = path_commits.for_move(moves[members[0]][1], None)
            pr, conf, how = _with_pr(pr, how, "high", fallback)
            result.drafts.append(Draft("module-move", old_pkg, {"new": new_pkg}, pr, conf,
                                       f"package moved: {len(members)} modules renamed alike; {how}", (old_pkg,)))
            done.update(members)
    for old_mod, (new_mod, old_path, score) in sorted(moves.items()):
        if old_mod in done or any(old_mod.startswith(d + ".") for d in done):
            continue
        pr, how = path_commits.for_move(old_path, None)
        pr, conf, how = _with_pr(pr, how, "high" if score >= 70 else "medium", fallback)
        result.drafts.append(Draft("module-move", old_mod, {"new": new_mod}, pr, conf,
                                   f"git rename detection (similarity {score}%); {how}", (old_mod,)))


# -- output ----------------------------------------------------------------------------------------

def dump_table(derivation: Derivation, release: str | None = None) -> str:
    """The draft as a table file (docs/table-format.md)."""
    entries = []
    for draft in derivation.sorted_drafts():
        if draft.pr is None:
            continue  # no PR at all in the range: nothing to cite, nothing a table can hold
        entries.append(draft.as_yaml_dict())
    header = (f"# Draft table: verl-migrate derive {derivation.from_rev}..{derivation.to_rev}.\n"
              f"# Every entry is a guess: check it against its PR, fix it, then delete `review: true`.\n")
    body = yaml.safe_dump({"release": release or derivation.to_rev, "entries": entries}, sort_keys=False,
                          width=10_000, allow_unicode=True)
    return header + body
