"""migrator/layout.py: verl's layout read from mappings/verl/layout.yaml, checked on load (file:line errors);
and no verl path, module or class name spelled in migrator/ itself, only in the data."""

from __future__ import annotations

import ast
import re
import shutil
from pathlib import Path

import pytest

from migrator.layout import DISPLAY, LayoutError, layout_path, load_layout, verl_layout
from migrator.mapping.load import TableError
from tests.helpers import REPO, yaml_data

PACKAGE_DIR = REPO / "migrator"

# Literals that name something verl-like but are not verl's layout: (file under migrator/, literal) -> why.
ALLOWED = {
    **{(module, "verl"): "this package's directory of verl's tables (mappings/verl/), not verl's tree"
       for module in ("config.py", "layout.py", "lint/facts.py", "builtin_tables.py", "mapping/load.py", "rewrite/shell/effect.py", "startup/checks.py", "startup/components.py", "startup/conversion.py", "tablecache.py", "verdict/in_use.py",
                      "verdict/store.py", "written_for.py")},
    ("layout.py", "mappings/verl/"): "how messages name this package's directory of verl's tables",
    ("verdict/in_use.py", "mappings/verl/"): "how messages name this package's directory of verl's tables",
    ("startup/checks.py", "mappings/verl/"): "how messages name this package's directory of verl's tables",
    ("mapping/precision.py", "mappings/verl/"): "an entry's origin in this package's tables, not verl's tree",
    ("audit.py", "Add entries like these to mappings/verl/main.yaml in verl-migrate (or pass them with --table),"):
        "this package's table for verl's next release",
    ("mapping/facts.py", "verl.modules"): "the name of a shipped fact file (facts/modules/verl.modules)",
    **{(module, "verl"): "the name of verl's GitHub repository, where PR numbers point (pulls.REPOSITORIES)"
       for module in ("pulls.py", "mapping/fields.py", "mapping/kinds/entry_point.py", "textreport.py")},
    ("codes.py", "https://github.com/verl-project/verl/pull/{pr}"): "verl's GitHub repository: a PR's link",
    ("shims/keys.py", None): "the generated key shim's source text links verl's GitHub PRs",
    ("cli/shims.py", "Also write the key-alias module at REL inside the tree (e.g. verl/utils/deprecated_keys.py)."):
        "an example in a help text",
}


def layout_names() -> set[str]:
    """The names verl's layout data holds (configs, the PPO trainer's module) and the classes
    config-objects.yaml names: spelled in code, each would be a second copy of the data."""
    layout = verl_layout()
    objects = yaml_data(REPO / "mappings" / "verl" / "config-objects.yaml")
    names = {layout.ppo_name, layout.ppo_config, *layout.ppo_config_names, *layout.ppo_engines.values(),
             *layout.flat_configs}
    names |= {name.rsplit(".", 1)[-1] for name in [*objects["takers"], *objects["holders"]]}
    return names | set(objects["classes"])


def layout_pattern(roots: tuple[str, ...], names: set[str]) -> re.Pattern:
    """A root as a path or module (`verl/`, `recipe.`, `verl\\.`, `verl[./]`) or in an alternation
    (`(?:verl|recipe)`), and any of `names` as a word. Prose (`verl's config`, `for verl)`) is not matched."""
    root = "|".join(map(re.escape, roots))
    word = "|".join(map(re.escape, sorted(names)))
    return re.compile(rf"(?<![\w-])(?:{root})(?=[./\\\[|])|(?<=\|)(?:{root})(?![\w-])|(?<![\w-])(?:{word})(?!\w)")


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def _examples(tree: ast.AST) -> set[int]:
    """The constants of `example=` arguments: an entry kind's sample table entry, shown in docs and loaded
    by the kinds' test, made up like a docstring's."""
    return {id(constant) for node in ast.walk(tree) if isinstance(node, ast.keyword) and node.arg == "example"
            for constant in ast.walk(node.value) if isinstance(constant, ast.Constant)}


def layout_literals(package_dir: Path, roots: tuple[str, ...], names: set[str]) -> list[tuple[str, int, str]]:
    """(module path, line, literal) for every str or bytes constant (f-string parts too, docstrings and `example=` entries not)
    that spells a root or one of `names`."""
    pattern = layout_pattern(roots, names)
    found = []
    for path in sorted(package_dir.rglob("*.py")):
        tree = ast.parse(path.read_bytes(), filename=str(path))
        docstrings = _docstrings(tree) | _examples(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)) and id(node) not in docstrings:
                text = node.value.decode("latin-1") if isinstance(node.value, bytes) else node.value
                if text in roots or pattern.search(text):
                    found.append((path.relative_to(package_dir).as_posix(), node.lineno, node.col_offset, text))
    return [(module, line, text) for module, line, _, text in sorted(found)]


def test_no_verl_path_module_or_class_is_spelled_in_the_code():
    found = layout_literals(PACKAGE_DIR, verl_layout().roots, layout_names())
    spelled = [f"migrator/{module}:{line}: {text!r}" for module, line, text in found
               if (module, text) not in ALLOWED and (module, None) not in ALLOWED]
    print("\n".join(spelled) or "no verl layout literals in migrator/")
    assert not spelled, "verl's layout belongs in mappings/verl/layout.yaml:\n" + "\n".join(spelled)
    used = {(module, text) for module, _, text in found} | {(module, None) for module, _, _ in found}
    assert not set(ALLOWED) - used, f"allowed but gone (drop them): {sorted(set(ALLOWED) - used, key=str)}"


def test_the_scan_finds_layout_spelled_in_code(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "a.py").write_text(
        '"""Docstrings may say verl/trainer/config."""\n'
        'MODULE = "verl.trainer.main_ppo"\n'
        'ROOTS = (b"verl", b"recipe")\n'
        'PATTERN = r"(?:examples|recipe)/x"\n'
        'CONFIG = f"{x}/ppo_trainer.yaml"\n'
        'PROSE = "verl\'s config, for verl) and verl-migrate"\n'
        'CLASS = "RayPPOTrainer"\n')
    found = layout_literals(package, ("verl", "recipe", "examples"), {"main_ppo", "ppo_trainer", "RayPPOTrainer"})
    assert [(line, text) for _, line, text in found] == [
        (2, "verl.trainer.main_ppo"), (3, "verl"), (3, "recipe"), (4, "(?:examples|recipe)/x"), (5, "/ppo_trainer.yaml"),
        (7, "RayPPOTrainer")]


def test_the_built_in_layout_is_read_once_and_derives_what_the_code_matches():
    layout = verl_layout()
    assert verl_layout() is layout
    assert layout.ppo_launch.search(b"$HOME/verl/" + layout.ppo_script.encode())
    assert layout.ppo_launch.search(b"-m " + layout.ppo_module.encode()[:-1]) is None
    assert layout.config_dir_pattern.fullmatch(f"../../{layout.config_dir}/")
    assert layout.config_dir_pattern.fullmatch("pkg://" + layout.config_dir)  # `pkg://` spelt with slashes
    assert layout.config_dir_pattern.fullmatch("config") is None  # a fork's own config directory
    assert layout.relative_config_dirs == {b"config", b"./config"}  # beside the PPO trainer's module
    assert layout.generated_config.match(f"{layout.config_dir}/{layout.generated_config_prefix}ppo_trainer.yaml")


@pytest.fixture
def layout_copy(tmp_path):
    """A copy of the shipped layout beside the files it names (empty), and a way to edit one of its lines."""
    path = tmp_path / "layout.yaml"
    shutil.copy(layout_path(), path)
    for relative in verl_layout().files.values():
        target = tmp_path / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.touch()

    def edited(old: str, new: str) -> Path:
        text = path.read_text(encoding="utf-8")
        assert text.count(old) == 1, old
        path.write_text(text.replace(old, new), encoding="utf-8")
        return path

    return path, edited


def _line(path: Path, text: str) -> int:
    return next(n for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if line.startswith(text))


def test_a_copy_of_the_shipped_layout_loads_as_the_same_layout(layout_copy):
    path, _ = layout_copy
    assert load_layout(path, DISPLAY) == verl_layout()


@pytest.mark.parametrize("old, new, at, message", [
    ("roots: [verl, recipe, examples]", "roots: [verl, recipe, examples]\ncolour: red", "colour: red",
     "unknown field 'colour'"),
    ("packages: [verl, recipe]", "packages: [verl, recipes]", "packages:", "packages: 'recipes' is not one of the roots"),
    ("  module: verl.trainer.main_ppo", "  module: trainer.main_ppo", "  module:",
     "ppo.module: 'trainer.main_ppo' is not in one of the packages"),
    ("  config: ppo_trainer  #", "  config: sft_trainer  #", "  config: sft_trainer",
     "ppo.config: 'sft_trainer' is not one of ppo.config_names"),
    ("    dp: ppo_trainer", "    dp: [ppo_trainer]", "    dp:", "ppo.engines.dp: ['ppo_trainer'] is not a name"),
    ("  trees: facts/trees", "  trees: facts/forest", "  trees:", "files.trees: facts/forest does not exist beside"),
    ("config_dir: verl/trainer/config", "config_dir: /verl/trainer/config", "config_dir:",
     "config_dir: '/verl/trainer/config' is not a relative path"),
    ("flat_configs: [ppo_trainer, ppo_megatron_trainer]", "flat_configs: [ppo_trainer, ppo_trainer]", "flat_configs:",
     "flat_configs: a name is listed twice"),
    ("script_roots: [examples, recipe]", "script_roots: [examples, recipe", "trees_list_every_file:", "not YAML"),
])
def test_a_broken_layout_is_reported_at_its_line(layout_copy, old, new, at, message):
    _, edited = layout_copy
    path = edited(old, new)
    with pytest.raises(LayoutError) as caught:
        load_layout(path, DISPLAY)
    assert isinstance(caught.value, TableError)  # reported like a broken table (exit 2), never a traceback
    assert str(caught.value).startswith(f"{DISPLAY}:{_line(path, at)}: {message}"), str(caught.value)


def test_a_missing_field_is_named(layout_copy):
    _, edited = layout_copy
    path = edited("generated_config_prefix: _generated_\n", "")
    with pytest.raises(LayoutError, match="missing field 'generated_config_prefix'"):
        load_layout(path, DISPLAY)
