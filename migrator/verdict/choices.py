"""A hint for a key Hydra rejects because the command chose the wrong config: the group choice that has it.

verl's PPO config takes its engine from a top-level group (`model_engine: dp` in `ppo_trainer.yaml`);
Megatron keys exist only with `model_engine=megatron`. When a rejected key exists in the config composed
with another option of such a group, the hint names that choice. A key whose last segment is a group's
name (`actor_rollout_ref.actor.model_engine=megatron`) is told that it is a group, chosen at the top.
"""

from __future__ import annotations

from omegaconf import DictConfig

from migrator.verdict.compose import ComposeError, base_config, composed


def top_level_groups(cfg) -> dict[str, str]:
    """group -> the option chosen, for the groups selected at the top without a package (`model_engine`)."""
    try:
        choices = cfg.hydra.runtime.choices
    except Exception:  # noqa: BLE001 - a config composed without Hydra's node
        return {}
    return {str(group): str(choice) for group, choice in choices.items()
            if "/" not in str(group) and "@" not in str(group) and not str(group).startswith("hydra")
            and isinstance(choice, str)}


def group_hint(configs, config_dir: str, config_name: str, selected: tuple[str, ...], cfg, key: str,
               value: str = "...") -> str | None:
    groups = top_level_groups(cfg)
    leaf = key.rpartition(".")[2]
    if leaf in groups and "." in key:
        return f"`{leaf}` is a config group, chosen at the top level: write `{leaf}={value}`"
    if has_path(cfg, key.rpartition(".")[0]):
        return None  # an unknown leaf under a node this config has: a typo or a fork's key, not an engine's
    for group, current in groups.items():
        for option in _options(configs, config_dir, config_name, group):
            if option == current:
                continue
            choice = f"{group}={option}"
            alternative = tuple(t for t in selected if t.partition("=")[0] != group) + (choice,)
            try:
                composed(configs, config_dir, config_name, alternative)
            except ComposeError:
                continue
            if has_path(base_config(configs, config_dir, config_name, alternative), key):
                return f"select `{choice}`: the key is in that config"
    return None


def _options(configs, config_dir: str, config_name: str, group: str) -> list[str]:
    from migrator.verdict.compose import repository

    try:
        return sorted(repository(configs, config_dir, config_name).repo.get_group_options(group))
    except Exception:  # noqa: BLE001 - no options: no hint
        return []


def has_path(cfg, key: str) -> bool:
    node = cfg
    for segment in key.split("."):
        content = node.__dict__.get("_content") if isinstance(node, DictConfig) else None
        if not isinstance(content, dict) or segment not in content:
            return False
        node = content[segment]
    return True
