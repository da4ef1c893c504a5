"""Hydra's verdict on the migrated overrides: no edit may make a launch worse at the target release.

The engine hands over a script's applied edits (`review` below, declared in `REWRITERS`). Each launch of a
verl entry point whose overrides the edits touch is judged by Hydra against the target's shipped configs
(migrator/verdict), before and after the edits, and each edited override decides:

- rejected after the edit where Hydra accepted it before: the edit is backed out and reported with
  Hydra's message (as `cargo fix` backs out a fix that breaks the build); rejected before and after (a
  key of another engine's config, a fork's key under a moved node), the edit stays and lint reports it;
- `+key=v` refused because the target has `key` ("Could not append to config. An item is already at"):
  the `+` goes, in any judged launch (Hydra's own advice), renamed or not;
- renamed and still written `+new=v`, accepted: the target declares no `new`, so the program may never read
  it: the rename is reported as a manual step instead.

Scripts whose edits touch no override of a verl launch are not judged (judging costs a composition).
"""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from migrator.codes import HYDRA_BACKED_OUT_CODE, MANDATORY_UNSET_CODE
from migrator.edits import Edit, Finding, Review, apply_edits
from migrator.mapping.kinds.entry_point import ENTRY_POINT_MOVE
from migrator.rewrite.shell.effect import UNPLACED_PIN_HINT, compares_runs, run_differences
from migrator.rewrite.shell.hydra_launches import Launch, ShellScript, config_dir_of_launch, launches
from migrator.rewrite.shell.keys import PLUS_KIND, drop_plus_message
from migrator.rewrite.shell.syntax import parse
from migrator.verdict import NEUTRAL_VALUE, StoreError, judge, release_configs
from migrator.verdict.mandatory import unset_message
from migrator.verdict.memo import DiskTable

APPEND_REFUSED = "Could not append to config. An item is already at"


def _script_digest(key: tuple) -> str:
    return key[2]


REVIEWS = DiskTable("reviews", shard_by=_script_digest)  # (tree digest, code digest, script digest, edits, run) -> Review


@lru_cache(maxsize=1)
def _source_digest() -> str:
    """The shell rewriter's code (this review, the launches, the locator they read): a review made by other
    code is never reused (the verdict's own code and Hydra's version name the table's file)."""
    sources = sorted(Path(__file__).parent.glob("*.py"))
    return hashlib.sha256(b"".join(p.read_bytes() for p in sources)).hexdigest()
ROUNDS = 4  # backing out one edit may change another override's verdict: judge again, a few times at most


@dataclass(frozen=True)
class _Judged:
    """One override of one judged launch, placed in the original source."""

    launch: int  # the launch's entry word offset in the original source
    start: int  # the override's offset in the original source (its prefix included)
    end: int
    key_start: int
    key_end: int
    prefix: str
    written: str
    message: str | None  # Hydra's, or None: accepted


def review(before: bytes, after: bytes, applied: list[Edit], mappings) -> Review:
    """Kept on disk like the verdicts: CI checks the same unchanged scripts run after run."""
    configs = target_configs(mappings)
    if configs is None:
        return Review()
    run = mappings.from_release if compares_runs(mappings) else None
    key = (configs.digest, _source_digest(), hashlib.sha256(before).hexdigest(), tuple(applied), run)
    known = REVIEWS.table.get(key)
    if known is None:
        known = REVIEWS.table[key] = _with_rejected(before, applied, _review(before, after, applied, configs, mappings), configs)
    return known


def _with_rejected(before: bytes, applied: list[Edit], reviewed: Review, configs) -> Review:
    """`reviewed` with the keys Hydra rejects in the result it leaves (`Review.rejected`, original offsets): the
    engine makes a warn-only finding on one a manual step (VM198)."""
    # An unsafe addition (a pin of old defaults, keys the target declares) is judged by no one: the engine
    # may hold it back.
    edits = [e for e in applied if e not in reviewed.back_out] + [e for e in reviewed.added if e.unsafe is None]
    result = apply_edits(before, edits)[0]
    found = _judged_launches(ShellScript(result, parse(result)), configs)
    rejected = tuple((j.key_start, f"Hydra at verl {configs.release} rejects `{j.written}`: the launch fails")
                     for j in _judged(found, configs, _to_original(edits)) if j.message is not None)
    return dataclasses.replace(reviewed, rejected=rejected) if rejected else reviewed


def _review(before: bytes, after: bytes, applied: list[Edit], configs, mappings) -> Review:
    found = _judged_launches(ShellScript(before), configs)
    # The locator's `+` drops stand only where Hydra judges the launch (an array a verl launch may not expand).
    unjudged = tuple(e for e in applied if e.kind == PLUS_KIND and not _touches_launch_overrides(found, [e]))
    if unjudged:
        applied = [e for e in applied if e not in unjudged]
        after = apply_edits(before, applied)[0]
    judged = _judge_edits(before, after, applied, configs, found)
    if unjudged:
        judged = dataclasses.replace(judged, back_out=judged.back_out + unjudged)
    return _with_run_differences(before, applied, judged, configs, mappings)


def _with_run_differences(before: bytes, applied: list[Edit], judged: Review, configs, mappings) -> Review:
    """The review's result, plus what the migrated launches train differently (effect.py)."""
    if not compares_runs(mappings):
        return judged
    final = [e for e in applied if e not in judged.back_out] + list(judged.added)
    after = apply_edits(before, final)[0]
    effect = run_differences(before, after, _to_original(final), mappings, configs, launch_config)
    pins, unplaced = [], []
    for pin in effect.pins:
        (unplaced if any(e.start < pin.start < e.end for e in final) else pins).append(pin)
    # A pin that would land inside an edit is not made: what it would have pinned stays the manual step (at an
    # edit's start or end it goes before or after the edited text).
    left = tuple(dataclasses.replace(f, hint=UNPLACED_PIN_HINT) for pin in unplaced
                 for f in (pin.unsafe.held if pin.unsafe else ()))
    return dataclasses.replace(judged, added=judged.added + tuple(pins),
                               findings=judged.findings + left + effect.findings)


def _judge_edits(before: bytes, after: bytes, applied: list[Edit], configs, found) -> Review:
    # A moved entry point is judged too: its old module has no config at the target, its new one may refuse
    # a `+key` the old config lacked.
    if not _touches_launch_overrides(found, applied) and not any(e.kind == ENTRY_POINT_MOVE.name for e in applied):
        return Review(rejections=None)
    was: list[dict] = []  # the original's verdict, judged only when an edited override is rejected

    def before_of(j: _Judged) -> _Judged | None:
        if not was:
            was.append({(b.launch, b.start): b for b in _judged(found, configs, lambda offset, end=False: offset)})
        return was[0].get((j.launch, j.start))

    edits, findings, refused = list(applied), [], set()
    judged_before = {launch.start for launch, _ in found}
    for _round in range(ROUNDS):
        new = apply_edits(before, edits)[0] if edits != list(applied) else after
        back_out, plus = set(), []
        launches_now = _judged_launches(ShellScript(new, parse(new)), configs)
        now = _judged(launches_now, configs, _to_original(edits))
        for j in now:
            touching = [e for e in edits if e.start < j.end and e.end > j.start]
            unplussed = [e for e in touching if e.kind == PLUS_KIND]
            touching = [e for e in touching if e.kind != PLUS_KIND]
            renamed = [e for e in touching if e.start < j.key_end and e.end > j.key_start]
            if j.message is not None and j.prefix == "+" and j.message.startswith(APPEND_REFUSED):
                if j.start not in refused and before[j.start:j.start + 1] == b"+":
                    plus.append(_drop_plus(j, configs.release))
            elif j.launch not in judged_before:
                continue  # a moved entry point: its remap's own `+` items are deliberate, the rest is lint's
            elif j.message is not None and unplussed:  # another launch of the same words needs the `+`
                back_out.update(unplussed)
                refused.update(e.start for e in unplussed)
            elif j.message is not None and touching and ((old := before_of(j)) is None or old.message is None):
                back_out.update(touching)
                findings += [_backed_out(e, j, configs.release) for e in touching]
            elif j.message is None and renamed and j.prefix == "+":
                back_out.update(renamed)
                findings += [_undeclared(e, j, configs.release) for e in renamed]
        plus = [e for e in dict.fromkeys(plus) if e not in edits]
        if not back_out and not plus:
            # A `+` drop the locator proposed in a launch Hydra could not judge (its config does not compose)
            # has no proof: it goes.
            unproven = [e for e in edits if e.kind == PLUS_KIND and e in applied
                        and not any(e.start < j.end and e.end > j.start for j in now)]
            findings += _unset_mandatory(found, launches_now, configs, _to_original(edits))
            return _outcome(applied, [e for e in edits if e not in unproven], findings,
                            sum(j.message is not None for j in now))
        edits = [e for e in edits if e not in back_out] + plus
    return _outcome(applied, [e for e in edits if e.kind != PLUS_KIND or e in applied], findings, 0)


def _unset_mandatory(found_before: list, found_after: list, configs, to_original) -> list[Finding]:
    """A manual step for each mandatory value (`???`) the migration leaves a launch newly without (lint's
    VM008): `reward_model.enable=True` renamed turns on `reward.reward_model`, whose own rollout engine
    is `???`. One unset before the edits too, or a launch whose entry point moved (the original has no
    config at the target to compare with), is lint's to report. Not where the command passes words the
    script does not show."""
    def unset(launch, config_dir, config_name) -> list[str]:
        if launch.passes_all_args or launch.unseen_args:
            return []
        return judge(configs, config_dir, config_name, [o.text for o in launch.overrides]).unset

    before = {launch.start: set(unset(launch, *target)) for launch, target in found_before}
    out = []
    for launch, target in found_after:
        at = to_original(launch.start)
        if at not in before:
            continue  # a moved entry point: nothing at the target to compare with (VM008 judges the result)
        out += [Finding(at, "mandatory-unset", unset_message(key, configs.release, target[1], "the migrated command"),
                        "set it on the command (lint's VM008 says the same)", code=MANDATORY_UNSET_CODE)
                for key in unset(launch, *target) if key not in before.get(at, set())]
    return out


def _outcome(applied: list[Edit], kept: list[Edit], findings: list[Finding], rejections: int) -> Review:
    return Review(tuple(e for e in applied if e not in kept), tuple(e for e in kept if e not in applied),
                  tuple(dict.fromkeys(findings)), rejections)


def _drop_plus(j: _Judged, release: str) -> Edit:
    return Edit(j.start, j.start + 1, b"", PLUS_KIND, drop_plus_message(j.written.partition("=")[0].lstrip("+"),
                                                                          release))


def _backed_out(edit: Edit, j: _Judged, release: str) -> Finding:
    message = j.message.replace(NEUTRAL_VALUE, j.written.partition("=")[2])
    hint = "a `+` would only hide it: the table names a key verl does not declare" if "not in struct" in message \
        else None
    return Finding(edit.start, edit.kind, f"{edit.message}: not applied, Hydra at verl {release} would reject "
                                          f"`{j.written}`: {message}", hint, edit.prs, code=HYDRA_BACKED_OUT_CODE)


def _undeclared(edit: Edit, j: _Judged, release: str) -> Finding:
    return Finding(edit.start, edit.kind, f"{edit.message}: not applied, verl {release} declares no such key "
                                          f"(`{j.written}` would add a key nothing may read)",
                   "move the value where the target reads it, by hand", edit.prs, code=HYDRA_BACKED_OUT_CODE)


def target_configs(mappings):
    """The shipped configs of `mappings.to_release`, else of the nearest release before it that has them."""
    releases = list(mappings.history.releases) if mappings.history is not None else []
    candidates = [mappings.to_release]
    if mappings.to_release in releases:
        candidates += reversed(releases[:releases.index(mappings.to_release)])
    for release in candidates:
        try:
            return release_configs(release)
        except StoreError:
            continue
    return None


def _judged_launches(script: ShellScript, configs) -> list[tuple[Launch, tuple[str, str]]]:
    out = []
    for launch in launches(script):
        target = launch_config(configs, launch)
        if target is not None and launch.overrides and not any(o.key == "hydra.searchpath" for o in launch.overrides):
            out.append((launch, target))
    return out


def _touches_launch_overrides(found: list, applied: list[Edit]) -> bool:
    """Does an edit fall inside an override of a verl launch?"""
    spans = [(o.start, o.start + len(o.written)) for launch, _ in found for o in launch.overrides]
    return any(e.start < end and e.end > start for e in applied for start, end in spans)


def _judged(found: list, configs, to_original) -> list[_Judged]:
    """Every override of the judged launches with Hydra's verdict, placed in the original source."""
    out = []
    for launch, (config_dir, config_name) in found:
        verdict = judge(configs, config_dir, config_name, [o.text for o in launch.overrides])
        if verdict.failure is not None:
            continue  # the launch does not compose at all: nothing to compare override by override
        messages = {r.index: r.message for r in verdict.rejections}
        at = to_original(launch.start)
        for n, o in enumerate(launch.overrides):
            key_start = o.start + len(o.prefix)
            out.append(_Judged(at, to_original(o.start), to_original(o.start + len(o.written), end=True),
                               to_original(key_start), to_original(key_start + len(o.key), end=True),
                               o.prefix, o.written, messages.get(n)))
    return out


def _to_original(edits: list[Edit]):
    """Maps an offset in the edited source to the original: a point inside a replacement maps to its edit's
    start (or end, for the end of a span)."""
    ordered = sorted(edits, key=lambda e: (e.start, e.end))

    def place(offset: int, end: bool = False) -> int:
        shift = 0
        for e in ordered:
            new_start = e.start + shift
            new_end = new_start + len(e.replacement)
            if offset < new_start or (offset == new_start and not end):
                break
            if offset < new_end or (end and offset == new_end):
                return e.end if end else e.start
            shift += len(e.replacement) - (e.end - e.start)
        return offset - shift

    return place


def launch_config(configs, launch: Launch) -> tuple[str, str] | None:
    """(config dir, config name) a launch composes at the release, or None (not a verl entry point, a
    config chosen at run time or outside verl's tree)."""
    entry = configs.entry_by_module(launch.entry) if launch.is_module else configs.entry_by_script(launch.entry)
    if entry is None:
        return None
    config_dir, config_name = entry.config_path, entry.config_name
    if launch.config_path is not None:
        config_dir = config_dir_of_launch(configs, entry, launch.config_path)
        if config_dir is None:
            return None
    if launch.config_name is not None:
        if "$" in launch.config_name:
            return None
        config_name = launch.config_name.removesuffix(".yaml")
    return config_dir, config_name
