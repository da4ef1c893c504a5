"""The tests' one set of helpers: repository paths, the fixed core table, the real CLI in a subprocess, and
shipped YAML parsed once per test process. Kinds of helpers of their own: `repos` (real git repositories),
`rewrite` (one rewriter on one source), `shims`, `trees` (generated trees), `history` (synthetic verl
histories)."""

from __future__ import annotations

import copy
import functools
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent.parent
FIXTURES = REPO / "tests" / "fixtures"
CORE_TABLE = FIXTURES / "tables" / "core.yaml"
# How long a test waits on a subprocess before calling it hung. Only a guard against a run that never
# ends: the CI machine may be loaded (the suite once took 26 minutes), so no outcome may depend on it.
HANG_GUARD = 1800


@functools.lru_cache(maxsize=None)
def load_script(name: str):
    """A maintainer script of scripts/ as a module (they are not a package), registered in sys.modules:
    its dataclasses look their module up there."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, REPO / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _parsed_yaml(path: Path):
    import yaml

    return yaml.load(path.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def yaml_data(path: Path):
    """`yaml.safe_load` of a repository file, parsed once per test process (libyaml when PyYAML has it): five
    test modules read every release table at import. A copy each call, so no caller sees another's changes."""
    return copy.deepcopy(_parsed_yaml(Path(path).resolve()))


def run_cli(*args, cwd=None, env=None, input=None, text: bool = True, timeout: float = HANG_GUARD) -> subprocess.CompletedProcess:
    """`python -m migrator ARGS` in a subprocess, with `env` over this process's environment."""
    full_env = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "-m", "migrator", *map(str, args)], cwd=cwd, env=full_env,
                          capture_output=True, text=text, input=input, timeout=timeout)
