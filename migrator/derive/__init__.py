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

from migrator import history
from migrator.derive.draft import Derivation, Draft, dump_table
from migrator.derive.keys import ConfigKeys, derive_keys, flatten, pair_keys
from migrator.derive.modules import derive_modules, is_near_empty, module_name
from migrator.derive.prs import PathCommits
from migrator.derive.scripts import derive_scripts, is_script, normalised_name, pair_scripts

__all__ = ["ConfigKeys", "Derivation", "Draft", "derive", "dump_table", "flatten", "is_near_empty", "is_script",
           "module_name", "normalised_name", "pair_keys", "pair_scripts"]


def derive(repo, from_rev: str, to_rev: str) -> Derivation:
    from_sha, to_sha = history.resolve(repo, from_rev), history.resolve(repo, to_rev)
    result = Derivation(from_rev, to_rev)
    log = history.commits(repo, f"{from_sha}..{to_sha}")
    path_commits = PathCommits(log)
    fallback_pr = next((c.pr for c in log if c.pr), None)
    derive_scripts(repo, from_sha, to_sha, result, path_commits, fallback_pr)
    derive_keys(repo, from_sha, to_sha, result, log, fallback_pr)
    derive_modules(repo, from_sha, to_sha, result, path_commits, fallback_pr)
    return result
