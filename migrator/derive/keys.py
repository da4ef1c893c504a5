"""Pair config keys removed between two revisions with the keys that replaced them.

Keys are read from the flattened generated configs at both revisions and paired by leaf name, type
and default; subtree moves fold into one `a.*` -> `b.*` entry.
"""

from __future__ import annotations

import difflib
from collections import Counter, defaultdict

import yaml

from migrator import history
from migrator.derive.draft import Derivation, Draft
from migrator.derive.prs import lower_confidence
from migrator.layout import verl_layout
from migrator.mapping.fields import KEY_RE

# Hydra bookkeeping, not user keys.
IGNORED_TOP_KEYS = {"defaults", "hydra"}
# Leaf names too common to pair on their own.
GENERIC_LEAVES = {"name", "enable", "enabled", "path", "type", "mode", "dtype", "strategy", "size", "value",
                  "_target_", "impl", "backend", "kwargs"}


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
    """The generated trainer configs at `rev`; before v0.5.0, the flat configs that stand in for them."""
    layout = verl_layout()
    files = history.tree_files(repo, rev, (layout.config_dir + "/",))
    generated = {p: s for p, s in files.items() if layout.generated_config.match(p)}
    if generated:
        return generated
    return {p: files[p] for p in layout.flat_config_paths if p in files}


_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml: ~10x faster on 1000-line configs


class ConfigKeys:
    """Flattened key sets per revision, memoised by the config blobs (most commits share them)."""

    def __init__(self, repo):
        self.repo = repo
        self._parsed: dict[str, dict[str, object]] = {}

    def at(self, rev: str) -> dict[str, object]:
        """Every config's keys merged (a key any of them has)."""
        merged: dict[str, object] = {}
        for _path, keys in sorted(self.per_config(rev).items()):
            for key, value in keys.items():
                merged.setdefault(key, value)
        return merged

    def per_config(self, rev: str) -> dict[str, dict[str, object]]:
        """Each config file's own keys."""
        blobs = config_blobs(self.repo, rev)
        missing = [s for s in blobs.values() if s not in self._parsed]
        for sha, content in history.read_blobs(self.repo, missing).items():
            try:
                self._parsed[sha] = flatten(yaml.load(content, Loader=_LOADER))
            except yaml.YAMLError:
                self._parsed[sha] = {}
        return {path: self._parsed.get(sha, {}) for path, sha in blobs.items()}


def removed_from_some(before: dict[str, dict], after: dict[str, dict]) -> dict[str, tuple[str, ...]]:
    """Keys a config file lost while another still has them (the Megatron trainer's config only): key ->
    the config files that lost it. A launch of that config is refused the key all the same."""
    still = {key for keys in after.values() for key in keys}
    out: dict[str, list[str]] = {}
    for path in sorted(set(before) & set(after)):
        for key in set(before[path]) - set(after[path]):
            if key in still:
                out.setdefault(key, []).append(path)
    return {key: tuple(paths) for key, paths in out.items()}


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


def _config_commits(repo, log: list[history.Commit]) -> list[history.Commit]:
    layout = verl_layout()
    return [c for c in log if any(layout.generated_config.match(p) or p in layout.flat_config_paths for p in c.paths)]


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


def derive_keys(repo, from_sha, to_sha, result: Derivation, log, fallback):
    keys = ConfigKeys(repo)
    before, after = keys.at(from_sha), keys.at(to_sha)
    if not before or not after:
        return
    removed_in, added_in = _key_commits(repo, keys, log)
    result.removed_keys = set(before) - set(after)
    result.removed_from_some = removed_from_some(keys.per_config(from_sha), keys.per_config(to_sha))
    subtree_moves, pairs, leftovers = pair_keys(before, after)

    def attribution(old: str, new: str | None, confidence: str) -> tuple[int | None, str, str]:
        commit = removed_in.get(old)
        if commit is not None and commit.pr:
            if new is None or added_in.get(new) is commit:
                return commit.pr, confidence, f"commit {commit.sha[:9]} changed the generated config"
            return commit.pr, lower_confidence(confidence), (f"commit {commit.sha[:9]} removed it, "
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
