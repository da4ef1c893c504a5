"""Config keys in Python code: renamed only on an object that provably is verl's config, all or none per
key. Fixtures are written in the style of verl's entry points; keys from the built-in tables
(v0.9.0): ray_init.* -> ray_kwargs.*, reward_model.enable -> reward.reward_model.enable,
trainer.profile_steps -> global_profiler.steps, algorithm.rollout_is_threshold -> algorithm.rollout_correction.*.
"""

from __future__ import annotations

from functools import lru_cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from migrator.fileprocess import apply_edits
from migrator.mapping import compose, load_builtin
from migrator.rewrite import python


@lru_cache(maxsize=1)
def _maps():
    return compose(load_builtin(), to_release="v0.9.0")


def migrate(source: str) -> tuple[str, list]:
    data = source.encode()
    result = python.locate(data, _maps(), "main.py")
    after = apply_edits(data, sorted(result.edits, key=lambda e: e.start))[0].decode() if result.edits else source
    again = python.locate(after.encode(), _maps(), "main.py")
    assert not [e for e in again.edits if e.kind == "key-rename"], "a second run renames again"
    return after, [f for f in result.findings if f.code == "VM115"]


def lines_of(source: str, findings) -> list[int]:
    return sorted(source.encode()[:f.offset].count(b"\n") + 1 for f in findings)


# The real case: a program that reads its own old-layout YAML (a fork's `config/` tree).
OWN_LAYOUT = '''\
import hydra
import ray


@hydra.main(config_path="config", config_name="ppo_trainer", version_base=None)
def main(config):
    run_ppo(config)


def run_ppo(config) -> None:
    if not ray.is_initialized():
        ray.init(num_cpus=config.ray_init.num_cpus)
    runner = TaskRunner.remote()
    ray.get(runner.run.remote(config))
    timeline_json_file = config.ray_init.get("timeline_json_file", None)
    if timeline_json_file:
        ray.timeline(filename=timeline_json_file)


class TaskRunner:
    def run(self, config):
        if config.reward_model.enable:
            print("reward model on")
'''


def test_own_old_layout_config_is_reported_never_half_migrated():
    after, findings = migrate(OWN_LAYOUT)
    assert after == OWN_LAYOUT
    assert lines_of(OWN_LAYOUT, findings) == [12, 15, 22]  # one finding per place
    assert all(f.severity == "manual" and f.kind == "key-rename" for f in findings)
    assert "may be your own" in findings[0].message


def test_verls_own_config_tree_renames_every_spelling():
    source = OWN_LAYOUT.replace('config_path="config"', 'config_path="../verl/trainer/config"')
    after, findings = migrate(source)
    assert findings == []
    assert "ray.init(num_cpus=config.ray_kwargs.ray_init.num_cpus)" in after
    assert 'config.ray_kwargs.get("timeline_json_file", None)' in after  # the .get half too
    assert "if config.reward.reward_model.enable:" in after  # TaskRunner.run, reached through .remote(config)


def test_installed_package_config_and_a_verl_runner_prove_it():
    source = OWN_LAYOUT.replace('config_path="config"', 'config_path="pkg://verl.trainer.config"')
    assert migrate(source)[1] == []
    handed = "from verl.trainer.main_ppo import run_ppo\n\ndef main(cfg):\n    n = cfg.ray_init.num_cpus\n    run_ppo(cfg)\n"
    assert "cfg.ray_kwargs.ray_init.num_cpus" in migrate(handed)[0]


MIXED = '''\
import hydra
from omegaconf import OmegaConf


@hydra.main(config_path="pkg://verl.trainer.config", config_name="ppo_trainer", version_base=None)
def main(config):
    steps = config.trainer.get("profile_steps")
    enabled = config.reward_model.enable
    mine = OmegaConf.load("my_conf.yaml")
    if mine.reward_model.enable:
        print(steps, enabled)
'''


def test_a_key_on_verls_config_and_on_the_programs_own_is_reported_everywhere():
    after, findings = migrate(MIXED)
    # profile_steps is only ever read from verl's config: renamed (attribute and string alike)
    assert 'config.global_profiler.get("steps")' in after
    # reward_model.enable is read from both: none renamed, both places reported with one message
    assert "config.reward_model.enable" in after and "mine.reward_model.enable" in after
    assert lines_of(MIXED, findings) == [8, 10]
    assert len({f.message for f in findings}) == 1 and "(2 places in this file: lines 8, 10)" in findings[0].message


VERL_MAIN = '@hydra.main(config_path="pkg://verl.trainer.config", config_name="ppo_trainer", version_base=None)\n' \
    "def main(config):\n"


@pytest.mark.parametrize(("before", "after"), [
    ('    x = config.ray_init.get("num_cpus")\n', '    x = config.ray_kwargs.ray_init.get("num_cpus")\n'),
    ('    x = "enable" in config.reward_model\n', '    x = "enable" in config.reward.reward_model\n'),
    ('    x = getattr(config.ray_init, "num_cpus", None)\n', '    x = getattr(config.ray_kwargs.ray_init, "num_cpus", None)\n'),
    ('    x = hasattr(config.trainer, "profile_steps")\n', '    x = hasattr(config.global_profiler, "steps")\n'),
    ('    x = OmegaConf.select(config, "reward_model.enable")\n',
     '    x = OmegaConf.select(config, "reward.reward_model.enable")\n'),
    ('    OmegaConf.update(config, "ray_init.num_cpus", 8)\n', '    OmegaConf.update(config, "ray_kwargs.ray_init.num_cpus", 8)\n'),
    ('    x = OmegaConf.select(config.trainer, "profile_steps")\n', '    x = OmegaConf.select(config.global_profiler, "steps")\n'),
    ('    x = config["trainer"]["profile_steps"]\n', '    x = config["global_profiler"]["steps"]\n'),
    ("    x = config.trainer.profile_steps is not None and 1 in config.trainer.profile_steps\n",
     "    x = config.global_profiler.steps is not None and 1 in config.global_profiler.steps\n"),
])
def test_every_spelling_on_verls_config(before, after):
    assert migrate(VERL_MAIN + before) == (VERL_MAIN + after, [])


@pytest.mark.parametrize("line", [
    '    x = config["reward_model"]["enable"]\n',  # a subscript cannot hold `reward.reward_model`
    '    x = config.get("ray_init").num_cpus\n',
    '    rm = config.reward_model\n    x = rm.enable\n',  # spelt partly where `rm` was bound
])
def test_a_spelling_that_cannot_hold_the_new_key_is_reported(line):
    source = VERL_MAIN + line + "    y = config.reward_model.enable\n    z = config.ray_init.num_cpus\n"
    after, findings = migrate(source)
    assert findings and "cannot be edited in place" in findings[0].message
    touched = {f.message.split(" (")[0] for f in findings}
    # the key that cannot be edited in one place is left everywhere; the other is renamed
    for key in touched:
        assert key.split()[2] in ("reward_model.enable", "ray_init.num_cpus")
    if any("reward_model.enable" in k for k in touched):
        assert "config.reward_model.enable" in after
    if any("ray_init.num_cpus" in k for k in touched):
        assert "config.ray_init.num_cpus" in after


@pytest.mark.parametrize("source", [
    # a name that is reassigned is unknown, even if it once held verl's config
    VERL_MAIN + '    config = OmegaConf.load("mine.yaml")\n    x = config.ray_init.num_cpus\n',
    # a helper called once with verl's config and once with the program's own
    VERL_MAIN + '    helper(config)\n    helper(OmegaConf.load("mine.yaml"))\n\n\ndef helper(cfg):\n'
    "    return cfg.ray_init.num_cpus\n",
    # a helper also handed around as a value: its callers are not all visible
    VERL_MAIN + "    helper(config)\n    callbacks = [helper]\n\n\ndef helper(cfg):\n    return cfg.ray_init.num_cpus\n",
    # a class of the program's own (a copy of verl's trainer, not a subclass)
    "class RayPPOTrainer:\n    def fit(self):\n        return self.config.ray_init.num_cpus\n",
    # a subclass of verl's trainer that replaces its config by its own
    "from verl.trainer.ppo.ray_trainer import RayPPOTrainer\n\n\nclass T(RayPPOTrainer):\n"
    '    def __init__(self):\n        self.config = OmegaConf.load("mine.yaml")\n\n'
    "    def fit(self):\n        return self.config.ray_init.num_cpus\n",
    # a parameter with no evidence at all
    "def f(cfg):\n    return cfg.ray_init.num_cpus\n",
])
def test_unknown_provenance_is_reported_not_renamed(source):
    after, findings = migrate(source)
    assert after == source
    assert findings


def test_data_flow_within_the_file():
    source = (VERL_MAIN + "    helper(config)\n    rollout = config.actor_rollout_ref.rollout\n"
              "    return rollout.update_weights_bucket_megabytes\n\n\ndef helper(cfg):\n"
              "    return cfg.ray_init.num_cpus\n")
    after, findings = migrate(source)
    assert findings == []
    assert "rollout.checkpoint_engine.update_weights_bucket_megabytes" in after  # through a name bound to a node
    assert "cfg.ray_kwargs.ray_init.num_cpus" in after  # a helper every call hands verl's config


def test_verl_classes_and_config_classes():
    trainer = ("from verl.trainer.ppo.ray_trainer import RayPPOTrainer\n\n\nclass MyTrainer(RayPPOTrainer):\n"
               "    def __init__(self, config, tokenizer):\n        super().__init__(config, tokenizer)\n"
               "        self.rm = config.reward_model.enable\n\n"
               "    def fit(self):\n        return self.config.trainer.profile_steps\n")
    after, findings = migrate(trainer)
    assert findings == []
    assert "config.reward.reward_model.enable" in after and "self.config.global_profiler.steps" in after
    worker = ("from verl.workers.fsdp_workers import ActorRolloutRefWorker\n\n\nclass W(ActorRolloutRefWorker):\n"
              "    def init_model(self):\n        return self.config.rollout.update_weights_bucket_megabytes\n")
    assert "self.config.rollout.checkpoint_engine.update_weights_bucket_megabytes" in migrate(worker)[0]
    algo = ("from verl.trainer.config import AlgoConfig\n\n\ndef compute(config: AlgoConfig):\n"
            "    return config.rollout_is_threshold\n")
    assert "config.rollout_correction.rollout_is_threshold" in migrate(algo)[0]


def test_a_key_string_outside_any_access_is_reported_with_the_others():
    source = VERL_MAIN + '    x = config.ray_init.num_cpus\n    KEYS = ["ray_init.num_cpus"]\n'
    after, findings = migrate(source)
    assert after == source and lines_of(source, findings) == [3, 4]
    fstring = VERL_MAIN + '    x = config.ray_init.num_cpus\n    KEY = f"ray_init.num_cpus"\n'
    after, findings = migrate(fstring)
    assert after == fstring and lines_of(fstring, findings) == [3, 4]


def test_a_node_the_target_no_longer_has_read_whole_keeps_its_keys_together():
    # ray_init's keys moved one by one (ray_kwargs.ray_init.*, ray_kwargs.timeline_json_file): a place
    # that hands the whole node on cannot be migrated, so neither are the others
    source = VERL_MAIN + "    ray.init(**config.ray_init)\n    n = config.ray_init.num_cpus\n"
    after, findings = migrate(source)
    assert after == source and lines_of(source, findings) == [3, 4]
    assert "ray_init (gone: its keys moved one by one)" in findings[0].message
    # a node the target still has is fine to hand on (verl's code reads its own layout)
    kept = VERL_MAIN + "    w = Worker(config.actor_rollout_ref)\n    x = config.actor_rollout_ref.rollout.update_weights_bucket_megabytes\n"
    assert "rollout.checkpoint_engine.update_weights_bucket_megabytes" in migrate(kept)[0]


def test_a_method_of_the_node_is_no_key():
    source = VERL_MAIN + "    for k, v in config.critic.model.fsdp_config.items():\n        print(k, v)\n"
    assert "config.critic.fsdp.items()" in migrate(source)[0]


def test_the_quick_check_skips_dict_literal_keys_and_sees_string_spellings():
    from migrator.rewrite.python.config_access import might_spell_keys

    data_prep = b'row = {"data_source": "gsm8k", "reward_model": {"style": "rule", "ground_truth": x}}\n'
    assert not might_spell_keys(data_prep, _maps())
    assert might_spell_keys(b'x = cfg.get("reward_model")\n', _maps())
    assert might_spell_keys(b'x = cfg.trainer.get("profile_steps")\n', _maps())


@pytest.mark.parametrize("prefix, newline", [(b"", b"\r"), (b"\xef\xbb\xbf", b"\n"), (b"\xef\xbb\xbf", b"\r\n")])
def test_lone_cr_line_ends_and_a_bom_keep_every_offset(prefix, newline):
    """Lines may end in a lone `\\r` (old Mac files) and a BOM shifts line 1: `ast` counts both its own way."""
    lines = [b"import hydra", b'@hydra.main(config_path="pkg://verl.trainer.config", config_name="ppo_trainer")',
             b"def main(config):", b"    return config.ray_init.num_cpus, config.ray_init.get('timeline_json_file')"]
    def migrated(data: bytes) -> bytes:
        result = python.locate(data, _maps(), "main.py")
        return apply_edits(data, sorted(result.edits, key=lambda e: e.start))[0]

    plain = migrated(b"\n".join(lines) + b"\n")
    assert b"config.ray_kwargs.ray_init.num_cpus" in plain  # both places renamed, as with plain LF files
    assert migrated(prefix + newline.join(lines) + newline) == prefix + plain.replace(b"\n", newline)


@pytest.mark.parametrize("assignment, renamed", [
    ("self.config = config", True),
    ("mine = OmegaConf.load('mine.yaml'); self.config = mine", False),  # a name, but the program's own config
    ("config = OmegaConf.load('mine.yaml'); self.config = config", False),  # the parameter's name, rebound
])
def test_self_config_of_a_verl_trainer_subclass_counts_only_from_init_s_parameter(assignment, renamed):
    source = f"""from omegaconf import OmegaConf
from verl.trainer.ppo.ray_trainer import RayPPOTrainer


class MyTrainer(RayPPOTrainer):
    def __init__(self, config, **kw):
        super().__init__(config, **kw)
        {assignment}

    def fit(self):
        return self.config.reward_model.enable
"""
    after, findings = migrate(source)
    assert ("self.config.reward.reward_model.enable" in after) is renamed
    assert bool(findings) is not renamed


def test_a_lambda_parameter_shadows_verl_s_config():
    source = """import hydra
from omegaconf import OmegaConf


@hydra.main(config_path="pkg://verl.trainer.config", config_name="ppo_trainer")
def main(config):
    get = lambda config: config.ray_init.num_cpus
    return get(OmegaConf.load("mine.yaml")), config.ray_init.num_cpus
"""
    after, findings = migrate(source)
    assert "lambda config: config.ray_init.num_cpus" in after  # the lambda's own argument: not provably verl's
    assert findings  # so the key is reported, every place of it, not half renamed


def test_a_dictconfig_method_ending_a_chain_is_no_key():
    """`cfg.critic.model.fsdp_config.get(...)`: no warning about a key `critic.model.fsdp_config.get`."""
    maps = compose(load_builtin(), "v0.3.0.post1", "v0.9.0")
    source = (b'import hydra\n@hydra.main(config_path="pkg://verl.trainer.config", config_name="ppo_trainer")\n'
              b'def main(config):\n    return config.critic.model.fsdp_config.get("param_offload")\n')
    result = python.locate(source, maps, "main.py")
    assert not [f for f in result.findings if ".get" in f.message], result.findings
    assert [source[e.start:e.end] for e in result.edits] == [b"model.fsdp_config"]


def test_a_removed_key_is_reported_in_every_spelling_once():
    """`cfg.a.b`, `cfg.a.get("b")`, `cfg["a"]["b"]`, whatever the object: each place once, nothing edited."""
    maps = compose(load_builtin(), "v0.3.0.post1", "v0.9.0")
    source = b"""import hydra


@hydra.main(config_path="pkg://verl.trainer.config", config_name="ppo_trainer")
def main(config):
    c = config.reward_model.use_dynamic_bsz
    d = config.reward_model.get("use_dynamic_bsz")
    e = config["reward_model"]["use_dynamic_bsz"]


def other(cfg):
    return cfg.reward_model.get("use_dynamic_bsz")
"""
    result = python.locate(source, maps, "main.py")
    assert not result.edits
    lines = [source[:f.offset].count(b"\n") + 1 for f in result.findings
             if f.kind == "key-removal" and "reward_model.use_dynamic_bsz" in f.message]
    assert lines == [6, 7, 8, 12]


def test_a_file_that_names_neither_verl_nor_hydra_has_no_provenance_to_build():
    import ast

    from migrator.rewrite.python.parsed import line_starts
    from migrator.rewrite.python.provenance import NOTHING, Provenance, provenance_of

    objects = _maps().history.config_objects
    plain = b"import json\n\n\ndef main(config):\n    return config.ray_init.num_cpus\n"
    assert provenance_of(ast.parse(plain), plain, line_starts(plain), objects) is NOTHING
    for header in (b"import hydra\n", b"from verl.trainer.main_ppo import run_ppo\n"):
        source = header + plain
        assert isinstance(provenance_of(ast.parse(source), source, line_starts(source), objects), Provenance)
    assert migrate(plain.decode())[0] == plain.decode()  # still unrenamed: nothing shows it is verl's


def test_a_file_whose_imports_bind_no_evidence_has_no_provenance_to_build():
    """verl's own modules import verl everywhere; few bind a taker, a holder or a config class."""
    import ast

    from migrator.rewrite.python.parsed import line_starts
    from migrator.rewrite.python.provenance import NOTHING, Provenance, provenance_of

    objects = _maps().history.config_objects
    body = b"\n\ndef main(config):\n    return config.ray_init.num_cpus\n"
    for header, built in [(b"from verl.utils import hf_tokenizer\n", False),
                          (b"from verl import DataProto\nfrom verl.utils.fs import copy_to_local\n", False),
                          (b"from verl.trainer.ppo import ray_trainer\n", True),  # a module above a taker
                          (b"import verl\n", True),  # a package above every object
                          (b"from verl import utils\nX = 'AlgoConfig'\n", True),  # a module that may hold the class
                          (b"from verl.workers.config import actor\nA = actor.ActorConfig\n", True),
                          (b"from mine import AlgoConfig\n", False)]:
        source = header + body
        found = provenance_of(ast.parse(source), source, line_starts(source), objects)
        assert (found is not NOTHING) is built, header
        if built:
            assert isinstance(found, Provenance)


# Imports that bind a taker, a holder, a config class, a module or package above one, or none of them;
# uses that are evidence when their names are verl's (hydra.main, a call of a taker, a subclass of a
# holder, an annotation with a config class, a call chain through the file's own functions).
EVIDENCE_IMPORTS = [
    "from verl.trainer.main_ppo import run_ppo\n",
    "from verl.trainer.ppo.ray_trainer import RayPPOTrainer\n",
    "from verl.trainer.ppo import ray_trainer\n",
    "import verl.trainer.ppo.ray_trainer as rt\n",
    "import verl\n",
    "import verl.workers\n",
    "from verl.workers.fsdp_workers import ActorRolloutRefWorker as Base\n",
    "from verl.workers import fsdp_workers\n",
    "from verl.trainer.config import AlgoConfig\n",
    "from verl.workers.config import actor as actor_cfg\n",
    "from verl.workers.config import RolloutConfig as RC\n",
    "from verl.utils import hdfs_io\n",
    "from verl import DataProto\n",
    "from mine import run_ppo, RayPPOTrainer, AlgoConfig, Base\n",
    "import hydra\n",
    "from hydra import main as hmain\n",
]
EVIDENCE_USES = [
    "@hydra.main(config_path='pkg://verl.trainer.config', config_name='ppo_trainer')\ndef main(config):\n"
    "    run_ppo(config)\n",
    "@hmain(config_path='pkg://verl.trainer.config')\ndef m2(cfg):\n    return cfg.trainer.x\n",
    "def f(config):\n    run_ppo(config)\n    return config.ray_init.num_cpus\n",
    "def g(config):\n    rt.RayPPOTrainer(config)\n",
    "def h(config):\n    ray_trainer.RayPPOTrainer(config=config)\n",
    "def h2(config):\n    RayPPOTrainer(config)\n    helper(config)\n",
    "def helper(c):\n    return c.trainer.n\n",
    "class W(Base):\n    def __init__(self, config):\n        self.config = config\n\n"
    "    def m(self):\n        return self.config.rollout.n\n",
    "class T(fsdp_workers.ActorRolloutRefWorker):\n    def m(self):\n        return self.config.rollout.n\n",
    "class V(verl.workers.fsdp_workers.CriticWorker):\n    def m(self):\n        return self.config.x\n",
    "class U(W):\n    def m2(self):\n        return self.config.y\n",
    "def a(config: AlgoConfig):\n    return config.rollout_is\n",
    "def b(config: actor_cfg.ActorConfig):\n    return config.x\n",
    "def c(config: verl.trainer.config.AlgoConfig):\n    return config.y\n",
    "def d(config: RC):\n    return config.n\n",
    "def k():\n    from verl.trainer.main_ppo import run_ppo as rp\n\n    def inner(config):\n"
    "        rp(config)\n",
    "def plain(config):\n    x = config.actor_rollout_ref\n    return x.rollout.n\n",
]


def _known_names(found) -> tuple:
    return (sorted(found.holders.values(), key=repr),
            sorted(((name, node) for env in found.names.values() for name, node in env.items()), key=repr))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(EVIDENCE_IMPORTS), max_size=4), st.lists(st.sampled_from(EVIDENCE_USES), max_size=5))
def test_no_provenance_is_built_only_where_the_whole_one_knows_no_name(imports, uses):
    """The reference is `Provenance` itself, built for every file: where `provenance_of` skips it, that one
    holds no class and no name of verl's config (so every `node_of` is None)."""
    import ast

    from migrator.rewrite.python.parsed import line_starts
    from migrator.rewrite.python.provenance import NOTHING, Provenance, provenance_of

    source = ("".join(imports) + "\n\n" + "\n\n".join(uses)).encode()
    tree = ast.parse(source)
    objects = _maps().history.config_objects
    whole = Provenance(tree, line_starts(source), objects)
    found = provenance_of(tree, source, line_starts(source), objects)
    if found is NOTHING:
        assert _known_names(whole) == ([], [])
    else:
        assert _known_names(found) == _known_names(whole)
