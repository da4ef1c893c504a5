"""Pair deleted launch scripts (examples/**/*.sh, recipe/**/*.sh) with their successors.

git's rename detection first, then the same file name in another folder, then normalised names,
then content similarity; unpaired deletions become removals.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from functools import lru_cache

from migrator import history
from migrator.derive.draft import Derivation, Draft
from migrator.derive.prs import PathCommits, lower_confidence, with_pr
from migrator.layout import verl_layout
from migrator.mapping.fields import PATH_RE

# Variant suffixes that script consolidations drop or add (`run_qwen3-8b.sh` ~ `run_qwen3_8b_fsdp.sh`).
VARIANT_SUFFIXES = ("fsdp2", "fsdp", "megatron", "mcore", "npu", "gpu", "cuda", "ascend", "amd", "rocm",
                    "vllm", "sglang", "mindspeed", "example", "demo")


def is_script(path: str) -> bool:
    return path.endswith(".sh") and path.startswith(_script_dirs())


@lru_cache(maxsize=1)
def _script_dirs() -> tuple[str, ...]:
    """`examples/`, `recipe/`: where verl's launch scripts live."""
    layout = verl_layout()
    return layout.directories(layout.script_roots)


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
        rank = lambda p, old=old: (_dirname(p) == _dirname(old), _backend(p) == _backend(old),  # noqa: E731
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


def derive_scripts(repo, from_sha, to_sha, result: Derivation, path_commits: PathCommits, fallback):
    before = {p: s for p, s in history.tree_files(repo, from_sha, _script_dirs()).items() if is_script(p)}
    after = {p: s for p, s in history.tree_files(repo, to_sha, _script_dirs()).items() if is_script(p)}
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
                conf = lower_confidence(conf) if conf == "high" else conf
                evidence += f"; {targets[pair.new]} old scripts share this successor (consolidated: env presets?)"
            pr, conf, how = with_pr(pr, how, conf, fallback)
            result.drafts.append(Draft("path-move", pair.old, {"new": pair.new}, pr, conf,
                                       f"{evidence}; {how}", (pair.old,)))
        else:
            candidate = pair.candidate
            hint = (f"nearest successor: {candidate} (content similarity {pair.similarity:.2f})"
                    if candidate and pair.similarity >= 0.2 else "deleted; no successor found, see the PR")
            pr, conf, how = with_pr(pr, how, "medium", fallback)
            result.drafts.append(Draft("path-removal", pair.old, {"hint": hint}, pr, conf,
                                       f"deleted with no pair ({pair.how}); {how}", (pair.old,)))
