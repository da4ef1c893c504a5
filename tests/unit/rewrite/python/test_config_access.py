"""The config-key pass runs only where a renamed key's name is spelt outside the strings that cannot spell a
key (`cannot_spell_key`: a launcher's override strings): skipping it there changes no result."""

from __future__ import annotations

from functools import lru_cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from migrator.mapping import compose, load_builtin
from migrator.rewrite import python
from migrator.rewrite.python import config_access, locator


@lru_cache(maxsize=None)
def tables():
    return compose(load_builtin(), "v0.5.0", "main")


@pytest.mark.parametrize("content, cannot", [
    (b"actor_rollout_ref.rollout.n=5", True),  # an override
    (b"python3 -m verl.trainer.main_ppo", True),  # a command
    (b"actor_rollout_ref.rollout.n", False),  # a key path
    (b"rollout", False),
    (b"data-dir", False),  # `-` may be in a key's name
    (b"a\\x3db", False),  # an escape: the value is not the bytes
    (b"", False),
])
def test_a_string_cannot_spell_a_key_only_with_a_byte_no_key_has(content, cannot):
    assert config_access.cannot_spell_key(content) is cannot


KEY = b"actor_rollout_ref.rollout.update_weights_bucket_megabytes"
NAME = b"update_weights_bucket_megabytes"
# Launcher shapes (override strings, a command list) and every spelling the pass reads: an access, one
# spelt apart, subscripts and `.get`, a whole key string, OmegaConf.select, and strings the rule must not
# take for overrides (joined, escaped, an f-string).
PIECES = [
    b'ARGS = ["' + KEY + b'=512", "trainer.n_gpus_per_node=8"]\n',
    b'import subprocess\nsubprocess.run(["python3", "-m", "verl.trainer.main_ppo", *ARGS])\n',
    b"from verl.trainer.ppo.ray_trainer import RayPPOTrainer\n",
    b'x = "' + KEY + b'"\n',
    b"v = cfg." + KEY + b"\n",
    b"r = config.actor_rollout_ref\nm = r.rollout." + NAME + b"\n",
    b'v = cfg["actor_rollout_ref"]["rollout"].get("' + NAME + b'")\n',
    b's = "update_weights_" "bucket_megabytes"\n',
    b's = "' + NAME + b'=1" "x"\n',
    b's = "\\x75pdate_weights_bucket_megabytes"\n',
    b'cmd = f"python3 -m verl.trainer.main_ppo ' + KEY + b'={n}"\n',
    b"# " + NAME + b" in a comment\n",
    b'd = {"' + NAME + b'": 1}\n',
    b"def f(config):\n    return config.trainer.controller_nsight_options.trace\n",
    b'OmegaConf.select(cfg, "' + KEY + b'")\n',
    # in a statement the front-end reads (an override string holds the old key): key parts in strings, and
    # a key path with escaped dots
    b'v = [cfg["actor_rollout_ref"]["rollout"].get("' + NAME + b'"), "' + KEY + b'=1"]\n',
    b'v = [OmegaConf.select(cfg, "actor_rollout_ref\\x2erollout\\x2e' + NAME + b'"), "' + KEY + b'=1"]\n',
    b"class T(RayPPOTrainer):\n    def fit(self):\n        return self.config.actor_rollout_ref.rollout." + NAME + b"\n",
]


def located(source: bytes):
    result = python.locate(source, tables(), "launcher.py")
    return result.edits, result.findings


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(PIECES), min_size=1, max_size=6))
def test_skipping_the_pass_for_override_strings_changes_no_result(pieces):
    source = b"".join(pieces)
    expected = _with_every_string_a_possible_key(source)
    assert located(source) == expected


def _with_every_string_a_possible_key(source: bytes):
    """The result where every occurrence of a key's name counts, wherever it is (the spans are ignored)."""
    real = locator.might_spell_keys
    locator.might_spell_keys = lambda src, maps, no_keys=(): real(src, maps)
    try:
        return located(source)
    finally:
        locator.might_spell_keys = real


def test_the_pieces_give_edits_and_findings_of_the_pass():
    found = [located(b"from verl.trainer.ppo.ray_trainer import RayPPOTrainer\n" + p) for p in PIECES]
    assert any(e.kind == "key-rename" for edits, _ in found for e in edits)
    assert any(f.kind.startswith("key-") for _, findings in found for f in findings)


def test_a_launcher_whose_keys_are_all_in_override_strings_skips_the_pass(monkeypatch):
    def refuse(*args):
        raise AssertionError("the config-key pass ran")

    monkeypatch.setattr("migrator.rewrite.python.locator.locate_config_keys", refuse)
    launcher = PIECES[0] + PIECES[1]
    edits, _ = located(launcher)
    assert [e.replacement for e in edits] == [b"actor_rollout_ref.rollout.checkpoint_engine.update_weights_bucket_megabytes"]
