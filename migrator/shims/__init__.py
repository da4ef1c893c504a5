"""Deprecation shims: stubs at old verl paths and modules that warn and forward, and key aliases.

`plan.plan_shims(mappings)` turns a composed `MappingSet` into `GeneratedFile`s (`model`) through
the generators (`shell` stubs, `pymodule` stubs, the `keys` alias module); `tree` writes and checks
them inside a directory.
"""

from migrator.shims.model import GeneratedFile, ShimPlan
from migrator.shims.plan import plan_shims, policy_from_release

__all__ = ["GeneratedFile", "ShimPlan", "plan_shims", "policy_from_release"]
