"""YAML: Hydra configs (nested keys renamed in place or moved between parents, removed keys deleted)
and the command strings any YAML file carries (CI `run:` steps, k8s `args:`, `_target_:` modules).

Located with PyYAML's composed node marks, never round-tripped: a move cuts the key's lines (with
the comments right above it) and inserts them, re-indented, under the new parent, creating missing
parents with the file's indentation step. Untouched lines keep their bytes, order, quoting and
comments. `validate` loads both versions and checks the data changed by exactly the table's changes.
"""

from __future__ import annotations

from migrator.rewrite.plain import edits_keep_validity, review_edits
from migrator.rewrite.yaml.document import compose_all, has_anchors, load_all, package_prefix
from migrator.rewrite.yaml.planner import locate
from migrator.rewrite.yaml.validation import expected_data, validate

KIND = "yaml"

__all__ = ["KIND", "compose_all", "edits_keep_validity", "expected_data", "has_anchors", "load_all", "locate",
           "package_prefix", "review_edits", "validate"]
