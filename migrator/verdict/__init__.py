"""Hydra's own verdict on a launch command's overrides, at a given verl release.

verl parses a script's overrides with Hydra against the config tree of the entry point it runs. This
package ships those trees (`mappings/verl/facts/configs/`, store.py), composes them with Hydra itself
(compose.py) and applies each override with Hydra's own logic (judge.py), so a finding is exactly what
Hydra would say at start-up, for every bad override instead of the first one.

    configs = release_configs("v0.9.0")
    entry = configs.entry_by_module("verl.trainer.main_ppo")
    verdict = judge(configs, entry.config_path, entry.config_name, ["trainer.nnodes=1", "+data.train_files=x"])
"""

from migrator.verdict.judge import NEUTRAL_VALUE, PLACEHOLDER, Rejection, Verdict, judge
from migrator.verdict.store import EntryPoint, ReleaseConfigs, StoreError, release_configs

__all__ = ["NEUTRAL_VALUE", "PLACEHOLDER", "EntryPoint", "Rejection", "ReleaseConfigs", "StoreError", "Verdict",
           "judge", "release_configs"]
