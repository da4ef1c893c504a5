"""Python module stubs: warn once at the importer, forward lazily, alias submodules, run `-m`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest
from tests.helpers import run_cli

from migrator.mapping import compose, load_builtin
from migrator.shims import plan_shims

TABLE = """\
release: v0.8.0
entries:
  - kind: module-move
    old: oldpkg.sub
    new: newpkg.core
    pr: 4795
  - kind: module-move
    old: oldmod
    new: newmod
    pr: 4796
"""

NEW_FILES = {
    "newpkg/__init__.py": "",
    "newpkg/core/__init__.py": "VALUE = 42\n\ndef double(x):\n    return 2 * x\n",
    "newpkg/core/helper.py": "NAME = 'helper'\n",
    "newpkg/core/__main__.py": "import json, sys\nprint(json.dumps(sys.argv[1:]))\nsys.exit(int(sys.argv[1]) if sys.argv[1:] and sys.argv[1].isdigit() else 0)\n",
    "newmod.py": "VALUE = 7\nif __name__ == '__main__':\n    import json, sys\n    print(json.dumps(sys.argv[1:]))\n",
}


@pytest.fixture(scope="module")
def pythonpath(tmp_path_factory):
    base = tmp_path_factory.mktemp("shims py")
    table = base / "modules.yaml"
    table.write_text(TABLE)
    stubs, new = base / "stubs", base / "new"
    result = run_cli("shims", "generate", "--to", "v0.8.0", "--table", str(table), "--out", str(stubs))
    assert result.returncode == 0, result.stderr
    for rel, text in NEW_FILES.items():
        (new / rel).parent.mkdir(parents=True, exist_ok=True)
        (new / rel).write_text(text)
    return base, f"{stubs}{os.pathsep}{new}"


def run_py(pythonpath, args, cwd, env=None):
    full = {k: v for k, v in os.environ.items() if k != "VERL_MIGRATE_SHIM"}
    full.update(PYTHONPATH=pythonpath[1], **(env or {}))
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=cwd, env=full)


IMPORTER = textwrap.dedent("""\
    import json, warnings
    warnings.simplefilter("always")
    with warnings.catch_warnings(record=True) as caught:
        import oldpkg.sub
        import oldpkg.sub
        from oldpkg.sub import VALUE, double
        import oldpkg.sub.helper
        from oldpkg.sub import helper
    import newpkg.core, newpkg.core.helper
    print(json.dumps({
        "warnings": [[w.category.__name__, w.filename, w.lineno, str(w.message)] for w in caught],
        "value": VALUE, "double": double(3), "same_helper": oldpkg.sub.helper is newpkg.core.helper,
        "from_helper": helper is newpkg.core.helper, "spec": newpkg.core.helper.__spec__.name,
        "dir": "double" in dir(oldpkg.sub),
    }))
""")


def test_import_warns_once_at_the_importer_and_forwards(pythonpath, tmp_path):
    importer = tmp_path / "importer.py"
    importer.write_text(IMPORTER)
    result = run_py(pythonpath, [str(importer)], tmp_path)
    assert result.returncode == 0, result.stderr
    got = json.loads(result.stdout)
    assert len(got["warnings"]) == 1
    category, filename, lineno, message = got["warnings"][0]
    assert category == "DeprecationWarning" and filename == str(importer) and lineno == 4
    assert message.startswith("verl-migrate: module oldpkg.sub is deprecated: it moved to newpkg.core in verl v0.8.0")
    assert "pull/4795" in message
    assert got["value"] == 42 and got["double"] == 6 and got["dir"]
    assert got["same_helper"] and got["from_helper"] and got["spec"] == "newpkg.core.helper"


def test_minus_w_error_makes_the_import_fail_at_the_importer(pythonpath, tmp_path):
    result = run_py(pythonpath, ["-W", "error::DeprecationWarning", "-c", "import oldpkg.sub"], tmp_path)
    assert result.returncode == 1 and "DeprecationWarning: verl-migrate: module oldpkg.sub" in result.stderr


def test_python_m_runs_the_new_main_with_the_same_arguments(pythonpath, tmp_path):
    args = ["a b", "$(x)", "--flag", "*"]
    result = run_py(pythonpath, ["-m", "oldpkg.sub", *args], tmp_path)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == args
    assert "moved to newpkg.core" in result.stderr
    assert run_py(pythonpath, ["-m", "oldpkg.sub", "7"], tmp_path).returncode == 7


def test_modes(pythonpath, tmp_path):
    quiet = run_py(pythonpath, ["-W", "error", "-m", "oldpkg.sub", "q"], tmp_path, {"VERL_MIGRATE_SHIM": "quiet"})
    assert quiet.returncode == 0 and quiet.stderr == "" and json.loads(quiet.stdout) == ["q"]
    error = run_py(pythonpath, ["-c", "import oldpkg.sub"], tmp_path, {"VERL_MIGRATE_SHIM": "error"})
    assert error.returncode == 1 and "ImportError: error: verl-migrate: module oldpkg.sub" in error.stderr
    error_main = run_py(pythonpath, ["-m", "oldmod"], tmp_path, {"VERL_MIGRATE_SHIM": "error"})
    assert error_main.returncode == 1 and "ImportError" in error_main.stderr


def test_package_stub_without_facts_works_for_a_plain_new_module(pythonpath, tmp_path):
    # No tree facts on main: oldmod gets a package stub although newmod is a single file.
    base = pythonpath[0]
    assert (base / "stubs/oldmod/__init__.py").is_file() and (base / "stubs/oldmod/__main__.py").is_file()
    result = run_py(pythonpath, ["-m", "oldmod", "x y"], tmp_path)
    assert result.returncode == 0 and json.loads(result.stdout) == ["x y"]
    result = run_py(pythonpath, ["-c", "import warnings; warnings.simplefilter('ignore'); "
                                       "from oldmod import VALUE; print(VALUE)"], tmp_path)
    assert result.stdout.strip() == "7"


def test_tree_facts_choose_a_module_stub(tmp_path):
    table = tmp_path / "modules.yaml"
    table.write_text(TABLE)
    mappings = compose(load_builtin(), "v0.7.0", "v0.8.0", [table])
    plan = plan_shims(mappings, load_builtin().releases, {"newmod.py", "newpkg/core/__init__.py"})
    names = sorted(f.relpath for f in plan.files if f.relpath.startswith("old"))
    assert names == ["oldmod.py", "oldpkg/sub/__init__.py", "oldpkg/sub/__main__.py"]
    (tmp_path / "stubs").mkdir()
    for f in plan.files:
        if f.relpath == "oldmod.py":
            (tmp_path / "stubs/oldmod.py").write_bytes(f.content)
    (tmp_path / "new").mkdir()
    (tmp_path / "new/newmod.py").write_text(NEW_FILES["newmod.py"])
    pp = (tmp_path, f"{tmp_path / 'stubs'}{os.pathsep}{tmp_path / 'new'}")
    result = run_py(pp, ["-m", "oldmod", "1", "2"], tmp_path)
    assert result.returncode == 0 and json.loads(result.stdout) == ["1", "2"] and "moved to newmod" in result.stderr
    importer = tmp_path / "imp.py"
    importer.write_text("import warnings\nwarnings.simplefilter('error')\nimport oldmod\n")
    result = run_py(pp, [str(importer)], tmp_path)
    assert result.returncode == 1 and f'File "{importer}", line 3' in result.stderr
