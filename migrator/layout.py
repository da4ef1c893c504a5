"""verl's repository layout, as data: `mappings/verl/layout.yaml` (its roots, packages, script and config
directories, the PPO trainer and its configs), validated on load and read once per process through the
cache (a warm run parses no YAML). The rewriters, the lint, derive and audit ask `verl_layout()`; the
forms they match (bytes, prefixes, patterns) are derived here from the data, once."""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path

from migrator.builtin_tables import TableError

LAYOUT_FILE = "layout.yaml"
DISPLAY = f"mappings/verl/{LAYOUT_FILE}"  # named as in the repository whatever the install layout

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+\Z")
_DIRECTORY = re.compile(r"[A-Za-z_][\w.-]*(?:/[A-Za-z_][\w.-]*)*\Z")
_FIELDS = {"roots", "packages", "config_classes_package", "script_roots", "trees_list_every_file",
           "lint_judges_directories_under", "config_dir", "generated_config_prefix", "flat_configs", "ppo", "files",
           "run_sections_first"}
_PPO_FIELDS = {"module", "config", "config_names", "engines"}


class LayoutError(TableError):
    """A broken layout file; str() is `file:line: problem`."""


@dataclass(frozen=True)
class VerlLayout:
    roots: tuple[str, ...]
    packages: tuple[str, ...]
    config_classes_package: str
    script_roots: tuple[str, ...]
    trees_list_every_file: tuple[str, ...]
    lint_judges_directories_under: tuple[str, ...]
    config_dir: str
    generated_config_prefix: str
    flat_configs: tuple[str, ...]
    ppo_module: str
    ppo_config: str
    ppo_config_names: tuple[str, ...]
    ppo_engines: dict[str, str]
    files: dict[str, str]
    run_sections_first: tuple[str, ...] = ()

    # -- derived forms (computed on first use, then kept: the hot paths ask per word) ---------------------
    @cached_property
    def root_bytes(self) -> tuple[bytes, ...]:
        return tuple(r.encode() for r in self.roots)

    @cached_property
    def package_bytes(self) -> tuple[bytes, ...]:
        return tuple(p.encode() for p in self.packages)

    @cached_property
    def module_prefixes(self) -> tuple[str, ...]:
        """`verl.`, `recipe.`, `examples.`: a module under one of the roots."""
        return tuple(f"{r}." for r in self.roots)

    @cached_property
    def launch_markers(self) -> tuple[bytes, ...]:
        """`verl.`, `verl/`, ...: what a command that runs a module or script under a root spells."""
        return tuple(f"{r}{sep}".encode() for r in self.roots for sep in "./")

    @cached_property
    def package_prefixes_bytes(self) -> tuple[bytes, ...]:
        return tuple(f"{p}.".encode() for p in self.packages)

    def directories(self, roots: tuple[str, ...]) -> tuple[str, ...]:
        """`verl/`, `recipe/`: the roots as path prefixes."""
        return tuple(f"{r}/" for r in roots)

    @cached_property
    def config_package(self) -> str:
        return self.config_dir.replace("/", ".")

    @cached_property
    def config_dir_bytes(self) -> bytes:
        return self.config_dir.encode()

    @cached_property
    def ppo_script(self) -> str:
        """`verl/trainer/main_ppo.py`: the PPO trainer run as a file."""
        return self.ppo_module.replace(".", "/") + ".py"

    @cached_property
    def ppo_name(self) -> str:
        """`main_ppo`: the PPO trainer's module without its package."""
        return self.ppo_module.rpartition(".")[2]

    @cached_property
    def ppo_launch(self) -> re.Pattern:
        """A word that runs the PPO trainer, as a module or a file (`python3 -m verl.trainer.main_ppo`,
        `python3 $VERL/verl/trainer/main_ppo.py`)."""
        module, script = re.escape(self.ppo_module), re.escape(self.ppo_script)
        return re.compile(rb"(?:^|[\s/])(?:" + module.encode() + rb"|" + script.encode() + rb")$")

    @cached_property
    def relative_config_dirs(self) -> frozenset[bytes]:
        """`--config-path` values relative to the PPO trainer's module that name config_dir (`config`)."""
        relative = posixpath.relpath(self.config_dir, posixpath.dirname(self.ppo_script))
        return frozenset({relative.encode(), f"./{relative}".encode()})

    @cached_property
    def config_dir_pattern(self) -> re.Pattern:
        """A `config_path` that is config_dir: in a checkout (`../verl/trainer/config`), or as a package
        (`pkg://verl.trainer.config`, also spelt with `/`)."""
        in_checkout = re.escape(self.config_dir)
        as_package = r"[./]".join(re.escape(part) for part in self.config_dir.split("/"))
        return re.compile(rf"(?:.*/)?{in_checkout}/?|pkg://{as_package}/?")

    @cached_property
    def generated_config(self) -> re.Pattern:
        """A generated config's path (`verl/trainer/config/_generated_ppo_trainer.yaml`)."""
        return re.compile(re.escape(f"{self.config_dir}/{self.generated_config_prefix}") + r"[A-Za-z0-9_]+\.yaml\Z")

    @cached_property
    def flat_config_paths(self) -> tuple[str, ...]:
        return tuple(f"{self.config_dir}/{name}.yaml" for name in self.flat_configs)


def layout_path() -> Path:
    from migrator.builtin_tables import builtin_mappings_dir

    return builtin_mappings_dir() / "verl" / LAYOUT_FILE


@lru_cache(maxsize=1)
def verl_layout() -> VerlLayout:
    """The built-in layout, read once per process (from the cache while the file and this code are
    unchanged). Raises LayoutError."""
    from migrator import cache

    path = layout_path()
    return cache.derived("layout", [path, Path(__file__)], lambda: load_layout(path, DISPLAY))


def load_layout(path: Path, display: str) -> VerlLayout:
    """Read and check a layout file; LayoutError names `display` and the line of the first problem."""
    import yaml

    from migrator.mapping.facts import load_shipped_yaml

    try:
        data = load_shipped_yaml(path)
    except (OSError, UnicodeDecodeError) as exc:
        raise LayoutError(display, None, f"cannot read verl's layout: {exc}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise LayoutError(display, mark.line + 1 if mark else None, f"not YAML: {exc}") from None
    return _Checker(path, display, data).layout()


class _Checker:
    def __init__(self, path: Path, display: str, data):
        self.path, self.display, self.data = path, display, data

    def fail(self, where: tuple, message: str):
        raise LayoutError(self.display, _line_of(self.path, where), message)

    def layout(self) -> VerlLayout:
        data = self.data
        if not isinstance(data, dict):
            self.fail((), f"expected a mapping with {', '.join(sorted(_FIELDS))}")
        for name in sorted(set(data) - _FIELDS):
            self.fail((name,), f"unknown field {name!r}")
        for name in sorted(_FIELDS - set(data)):
            self.fail((), f"missing field {name!r}")
        roots = self.names(("roots",))
        packages = self.names(("packages",), within=roots)
        ppo = data["ppo"]
        if not isinstance(ppo, dict):
            self.fail(("ppo",), "ppo: expected a mapping with " + ", ".join(sorted(_PPO_FIELDS)))
        for name in sorted(set(ppo) ^ _PPO_FIELDS):
            self.fail(("ppo", name) if name in ppo else ("ppo",), f"ppo: {'unknown' if name in ppo else 'missing'} "
                      f"field {name!r}")
        module = self.text(("ppo", "module"), _DOTTED)
        if module.split(".")[0] not in packages:
            self.fail(("ppo", "module"), f"ppo.module: {module!r} is not in one of the packages")
        config_names = self.names(("ppo", "config_names"))
        config = self.text(("ppo", "config"), _NAME)
        if config not in config_names:
            self.fail(("ppo", "config"), f"ppo.config: {config!r} is not one of ppo.config_names")
        engines = self.mapping(("ppo", "engines"))
        config_dir = self.text(("config_dir",), _DIRECTORY)
        if config_dir.split("/")[0] not in packages:
            self.fail(("config_dir",), f"config_dir: {config_dir!r} is not under one of the packages")
        files = self.mapping(("files",), _DIRECTORY)
        for name, relative in files.items():
            if not (self.path.parent / relative).exists():
                self.fail(("files", name), f"files.{name}: {relative} does not exist beside {self.display}")
        classes_package = self.text(("config_classes_package",), _NAME)
        if classes_package not in packages:
            self.fail(("config_classes_package",), f"config_classes_package: {classes_package!r} is not a package")
        return VerlLayout(
            roots=roots, packages=packages, config_classes_package=classes_package,
            script_roots=self.names(("script_roots",), within=roots),
            trees_list_every_file=self.names(("trees_list_every_file",), within=roots),
            lint_judges_directories_under=self.names(("lint_judges_directories_under",), within=roots),
            config_dir=config_dir, generated_config_prefix=self.text(("generated_config_prefix",), _NAME),
            flat_configs=self.names(("flat_configs",)),
            ppo_module=module, ppo_config=config, ppo_config_names=config_names, ppo_engines=engines, files=files,
            run_sections_first=self.names(("run_sections_first",)))

    def value(self, where: tuple):
        node = self.data
        for key in where:
            node = node[key]
        return node

    def text(self, where: tuple, pattern: re.Pattern) -> str:
        value = self.value(where)
        if not isinstance(value, str) or not pattern.match(value):
            self.fail(where, f"{'.'.join(where)}: {value!r} is not a {_WHAT[pattern]}")
        return value

    def names(self, where: tuple, within: tuple[str, ...] | None = None) -> tuple[str, ...]:
        value = self.value(where)
        field_name = ".".join(where)
        if not isinstance(value, list) or not value:
            self.fail(where, f"{field_name}: expected a non-empty list of names")
        for index, item in enumerate(value):
            if not isinstance(item, str) or not _NAME.match(item):
                self.fail((*where, index), f"{field_name}: {item!r} is not a name")
            if within is not None and item not in within:
                self.fail((*where, index), f"{field_name}: {item!r} is not one of the roots")
        if len(set(value)) != len(value):
            self.fail(where, f"{field_name}: a name is listed twice")
        return tuple(value)

    def mapping(self, where: tuple, pattern: re.Pattern = _NAME) -> dict[str, str]:
        value = self.value(where)
        field_name = ".".join(where)
        if not isinstance(value, dict) or not value:
            self.fail(where, f"{field_name}: expected a mapping of names")
        for key, item in value.items():
            if not isinstance(key, str) or not _NAME.match(key):
                self.fail((*where, key), f"{field_name}: {key!r} is not a name")
            if not isinstance(item, str) or not pattern.match(item):
                self.fail((*where, key), f"{field_name}.{key}: {item!r} is not a {_WHAT[pattern]}")
        return dict(value)


_WHAT = {_NAME: "name", _DOTTED: "dotted module name", _DIRECTORY: "relative path"}


def _line_of(path: Path, where: tuple) -> int | None:
    """The 1-based line of the node at `where` (keys and list indexes), else of the nearest parent found;
    read again only to say where a problem is."""
    import yaml

    try:
        node = yaml.compose(path.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return None
    line = node.start_mark.line + 1 if node is not None else None
    for key in where:
        if isinstance(node, yaml.MappingNode):
            found = next(((k, v) for k, v in node.value if k.value == key), None)
            if found is None:
                break
            line, node = found[0].start_mark.line + 1, found[1]
        elif isinstance(node, yaml.SequenceNode) and isinstance(key, int) and key < len(node.value):
            node = node.value[key]
            line = node.start_mark.line + 1
        else:
            break
    return line
