"""Mandatory values a command leaves unset: OmegaConf's `???` (MISSING) in the composed config.

Hydra composes such a config without complaint; verl stops at start-up when it reads the value
(`MissingMandatoryValue`), before training but after the job was scheduled. From v0.6.0 verl's PPO configs
declare `actor_rollout_ref.rollout.name: ???` (it was `vllm`), so a script that relied on the old default
stops there. A `???` under a node whose `enable` is false is read only once the command turns that node on
(`reward.reward_model.enable=True` makes `reward.reward_model.rollout.name` mandatory).

Hydra's own `hydra.*` fields are `???` until Hydra fills them at run time: never reported.
"""

from __future__ import annotations

from functools import lru_cache


@lru_cache(maxsize=256)
def mandatory_keys(base: tuple) -> tuple[tuple[str, str | None], ...]:
    """(key, the `enable` key that gates it or None) for every `???` value of the composed base."""
    from migrator.verdict.compose import base_config

    found: list[tuple[str, str | None]] = []
    _walk(base_config(*base), "", None, found)
    return tuple(found)


def _walk(node, prefix: str, gate: str | None, found: list) -> None:
    from omegaconf import DictConfig

    if node._is_none() or node._is_missing() or node._is_interpolation():
        return
    children = node._content
    enable = children.get("enable")
    if gate is None and enable is not None and not isinstance(enable, DictConfig) and enable._value() is False:
        gate = f"{prefix}.enable" if prefix else "enable"
    for name, child in children.items():
        key = f"{prefix}.{name}" if prefix else str(name)
        if key == "hydra":
            continue
        if isinstance(child, DictConfig):
            _walk(child, key, gate, found)
        elif child._is_missing():
            found.append((key, gate))


def unset_mandatory(base: tuple, overrides: list, rejected: set[int]) -> list[str]:
    """The mandatory keys none of the command's config `overrides` (Hydra's parsed ones) sets, whose gate,
    if any, an accepted one turns on with a literal true. An override Hydra rejects still counts as setting
    its key: the rejection is the finding to fix, not a second one about the same key."""
    set_keys, enabled = [], set()
    for n, override in enumerate(overrides):
        if override.is_delete():
            continue
        key = override.key_or_group
        set_keys.append(key)
        if n not in rejected and key.rpartition(".")[2] == "enable" and _literal_true(override):
            enabled.add(key)
    return [key for key, gate in mandatory_keys(base)
            if not any(key == s or key.startswith(s + ".") for s in set_keys) and (gate is None or gate in enabled)]


def _literal_true(override) -> bool:
    try:
        return override.value() is True  # Hydra's grammar reads `True`/`true` as a bool; `$X` is a string
    except Exception:  # noqa: BLE001 - a sweep or an interpolation: not a literal
        return False


def unset_message(key: str, release: str, config_name: str, command: str = "this command") -> str:
    """The words lint's VM008 and the migration's VM193 say about one unset mandatory value."""
    return (f"`{key}` is mandatory in verl {release}'s {config_name} (`???`) and {command} does not set it: "
            "verl stops at start-up with MissingMandatoryValue")
