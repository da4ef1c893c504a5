"""Judge one command's overrides the way Hydra would at a release, and report every one it rejects.

Hydra stops at the first bad override; this goes on. Each override is parsed by Hydra's own grammar
(`OverridesParser`), sorted into group selections and config overrides by Hydra's own rule
(`defaults_list.Overrides`: a key naming an existing config group, without a dict value), the groups are
composed (compose.py), then the config overrides are applied one by one, in the order written, with
`ConfigLoaderImpl._apply_overrides_to_config` on the command's own struct-mode copy (copy-on-write, cow.py):
`+a=1` then `a.b=2` behaves as in Hydra. A rejected override leaves the copy as it was (Hydra checks
before it writes).

Values the shell decides at run time arrive marked with PLACEHOLDER: the key is judged with a neutral
value in their place; a key that is itself built at run time, or a group choice made at run time, is not
judged (the notes say so).
"""

from __future__ import annotations

import copy
import difflib
import warnings
from dataclasses import dataclass, field
from functools import lru_cache

from migrator.verdict.compose import ComposeError, base_config, composed, hydra_message, repository
from migrator.verdict.mandatory import unset_mandatory
from migrator.verdict.memo import PARSED, VERDICTS
from migrator.verdict.store import ReleaseConfigs

PLACEHOLDER = "\x00"  # marks text the shell expands at run time (`$X`, `${A[@]}`, `$(cmd)`)
NEUTRAL_VALUE = "verl_migrate_shell_value"  # what Hydra sees in its place: a plain string
# did-you-mean: a typo of the same setting, not a neighbour (`val_temperature` is not `temperature`: 0.85).
SPELLING_CUTOFF = 0.88


@dataclass(frozen=True)
class Rejection:
    index: int  # position in the overrides given
    override: str  # as Hydra saw it (shell quoting removed)
    key: str  # dotted key (or group) without prefix; "" when the override does not parse
    message: str  # Hydra's own
    hint: str | None = None


@dataclass
class Verdict:
    config: str  # config_dir/config_name as composed
    rejections: list[Rejection] = field(default_factory=list)
    failure: str | None = None  # the config itself does not compose (Hydra's message)
    notes: list[str] = field(default_factory=list)
    skipped: list[int] = field(default_factory=list)  # positions not judged (decided at run time)
    unset: list[str] = field(default_factory=list)  # mandatory (`???`) keys verl will read and none sets


@dataclass(frozen=True)
class _Parsed:
    index: int
    text: str
    override: object  # hydra.core.override_parser.types.Override


@lru_cache(maxsize=1)
def _parser():
    from hydra.core.override_parser.overrides_parser import OverridesParser

    return OverridesParser.create()


def _parse(text: str):
    """Hydra's parse of one override: (Override, None) or (None, Hydra's message).

    Hydra's ANTLR parser takes ~1 ms an override; its results are kept across runs (memo.py)."""
    known = PARSED.table
    if text not in known:
        known[text] = _hydra_parse(text)
    return known[text]


def _hydra_parse(text: str):
    from hydra._internal.config_loader_impl import ConfigLoaderImpl
    from hydra.types import RunMode

    try:
        [override] = _parser().parse_overrides([text])
        ConfigLoaderImpl.validate_sweep_overrides_legal([override], RunMode.RUN, from_shell=True)
        return override, None
    except Exception as exc:  # noqa: BLE001 - OverrideParseException, ConfigCompositionException
        return None, hydra_message(exc)


def neutral(text: str) -> str | None:
    """The override with shell-decided values neutralized; None when its key is decided by the shell."""
    if PLACEHOLDER not in text:
        return text
    key, eq, _value = text.partition("=")
    if PLACEHOLDER in key:
        return None
    return f"{key}{eq}{NEUTRAL_VALUE}" if eq and not key.startswith("~") else key


def judge(configs: ReleaseConfigs, config_dir: str, config_name: str, overrides: list[str]) -> Verdict:
    """Hydra's verdict on one command's overrides (kept on disk: the same command is judged once)."""
    key = (configs.digest, config_dir, config_name, tuple(overrides))
    known = VERDICTS.table.get(key)
    if known is None:
        known = VERDICTS.table[key] = _judge(configs, config_dir, config_name, overrides)
    return copy.deepcopy(known)


def _judge(configs: ReleaseConfigs, config_dir: str, config_name: str, overrides: list[str]) -> Verdict:
    from migrator.verdict.choices import group_hint  # these import OmegaConf: only when Hydra has work
    from migrator.verdict.cow import plain_path, private_root

    verdict = Verdict(f"{config_dir}/{config_name}")
    sorted_ = sort_overrides(configs, config_dir, config_name, overrides, verdict)
    if sorted_ is None:
        return verdict
    parsed, groups = sorted_
    try:
        selected = compose_groups(configs, config_dir, config_name, groups, verdict)
    except ComposeError as exc:
        verdict.failure = str(exc)
        return verdict
    base = (configs, config_dir, config_name, selected)
    cfg = private_root(base_config(*base))
    if all(plain_path(cfg, item.override) for item in parsed):
        overlapping = _overlapping([item.override.key_or_group for item in parsed])
    else:  # a path through an interpolation may alias any node: everything in order, on one copy
        overlapping = set(range(len(parsed)))
    for n, item in enumerate(parsed):
        if n in overlapping or item.override.is_add() or item.override.is_delete():
            error = apply_override(cfg, item.override)  # in order, on this command's copy: it sees the ones before
        else:
            error = _alone(base, item.text)  # touches nothing another override of this command touches
        if error is not None:
            message, hint = error
            key = item.override.key_or_group
            if hint is None and "is not in struct" in message:
                hint = group_hint(configs, config_dir, config_name, selected, base_config(*base), key,
                                  item.text.partition("=")[2] or "...")
            verdict.rejections.append(Rejection(item.index, item.text, key, message, hint))
    verdict.rejections.sort(key=lambda r: r.index)
    if not verdict.skipped:  # a key set at run time may be the mandatory one
        rejected = {r.index for r in verdict.rejections}
        verdict.unset = unset_mandatory(base, [item.override for item in parsed],
                                        {n for n, item in enumerate(parsed) if item.index in rejected})
    return verdict


def sort_overrides(configs: ReleaseConfigs, config_dir: str, config_name: str, overrides: list[str],
                   verdict: Verdict) -> tuple[list[_Parsed], list[_Parsed]] | None:
    """Hydra's parse of each override, sorted by Hydra's own rule into config overrides and group selections;
    what cannot be judged goes to `verdict` (rejections, notes, skipped). None when nothing of the command
    can be judged (the config does not open, or a group is chosen at run time)."""
    from hydra._internal.defaults_list import Overrides

    parsed, groups = [], []
    try:
        repo = repository(configs, config_dir, config_name)
    except Exception as exc:  # noqa: BLE001 - a search path Hydra cannot open
        verdict.failure = hydra_message(exc)
        return None
    for index, text in enumerate(overrides):
        hydra_text = neutral(text)
        if hydra_text is None:
            verdict.notes.append(f"`{text.replace(PLACEHOLDER, '$…')}` not judged: its key is set at run time")
            verdict.skipped.append(index)
            continue
        override, error = _parse(hydra_text)
        if override is None:
            verdict.rejections.append(Rejection(index, hydra_text, "", error))
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                is_config = bool(Overrides(repo, [override]).config_overrides)
        except Exception as exc:  # noqa: BLE001 - `++group=x`, a non-string group choice
            verdict.rejections.append(Rejection(index, hydra_text, override.key_or_group, hydra_message(exc)))
            continue
        if is_config:
            parsed.append(_Parsed(index, hydra_text, override))
        elif hydra_text != text:
            verdict.notes.append(f"`{text.replace(PLACEHOLDER, '$…')}` chooses a config at run time: "
                                 "no override of this command judged")
            verdict.rejections, verdict.skipped = [], list(range(len(overrides)))
            return None
        else:
            groups.append(_Parsed(index, hydra_text, override))
    return parsed, groups


def apply_override(cfg, override) -> tuple[str, str | None] | None:
    """Hydra's apply of one override to `cfg`: None, or (Hydra's message, did-you-mean)."""
    from hydra._internal.config_loader_impl import ConfigLoaderImpl

    from migrator.verdict.cow import privatize

    try:
        privatize(cfg, override.key_or_group)
        ConfigLoaderImpl._apply_overrides_to_config([override], cfg)
        return None
    except Exception as exc:  # noqa: BLE001 - ConfigCompositionException, OmegaConf errors
        return hydra_message(exc), did_you_mean(cfg, override.key_or_group)


@lru_cache(maxsize=65536)
def _alone(base: tuple, text: str) -> tuple[str, str | None] | None:
    """The verdict on an override applied to the base alone, shared by every command that passes it."""
    from migrator.verdict.cow import private_root

    override, _error = _parse(text)
    return apply_override(private_root(base_config(*base)), override)


def _overlapping(keys: list[str]) -> set[int]:
    """Positions of keys on the same path as another key of the command (`a` and `a.b`, or `a.b` twice):
    their verdicts depend on each other's order. Along plain paths (cow.plain_path) other keys write
    disjoint nodes, so each one's verdict is the one it gets on the base alone."""
    prefixes: dict[str, list[int]] = {}
    for n, key in enumerate(keys):
        parts = key.split(".")
        for depth in range(1, len(parts) + 1):
            prefixes.setdefault(".".join(parts[:depth]), []).append(n)
    out = set()
    for n, key in enumerate(keys):
        users = prefixes.get(key, [])
        parts = key.split(".")
        ancestors = (".".join(parts[:d]) for d in range(1, len(parts)))
        if len(users) > 1 or any(a in keys for a in ancestors):
            out.update(users)
            out.add(n)
    return out


def compose_groups(configs, config_dir, config_name, groups, verdict) -> tuple[str, ...]:
    """The group selections that compose; a selection Hydra refuses is reported and left out."""
    selected = tuple(g.text for g in groups)
    try:
        composed(configs, config_dir, config_name, selected)
        return selected
    except ComposeError:
        if not groups:
            raise
    kept: list[str] = []
    for group in groups:  # find the culprits: each selection on top of the ones that compose
        try:
            composed(configs, config_dir, config_name, (*kept, group.text))
            kept.append(group.text)
        except ComposeError as exc:
            verdict.rejections.append(Rejection(group.index, group.text, group.override.key_or_group, str(exc)))
    composed(configs, config_dir, config_name, tuple(kept))
    return tuple(kept)


def did_you_mean(cfg, key: str) -> str | None:
    """A near spelling of the last segment among the keys of the SAME parent node, else nothing."""
    from omegaconf import DictConfig, OmegaConf

    parent_key, _, leaf = key.rpartition(".")
    try:
        parent = OmegaConf.select(cfg, parent_key, throw_on_missing=False) if parent_key else cfg
    except Exception:  # noqa: BLE001 - an interpolation on the way
        return None
    if not isinstance(parent, DictConfig) or leaf in parent:
        return None
    match = difflib.get_close_matches(leaf, [str(k) for k in parent.keys()], n=1, cutoff=SPELLING_CUTOFF)
    if not match:
        return None
    return f"did you mean `{parent_key + '.' if parent_key else ''}{match[0]}`?"
