"""End to end: `python -m migrator --to v0.9.0 --table <test table> DIR` over a project written for old verl."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from tests.helpers import HANG_GUARD
from tests.helpers.rewrite import FIXTURES, TEST_TABLE

PROJECT = {
    "launch.py": FIXTURES / "python" / "launcher.in.py",
    "conf/grpo.yaml": FIXTURES / "yaml" / "grpo_config.in.yaml",
    "README.md": FIXTURES / "markdown" / "readme.in.md",
    "notebooks/launch.ipynb": FIXTURES / "notebook" / "launch.in.ipynb",
}


# The goldens come from the rewriter tests' own small tables; the built-in v0.8.0 table also presets
# NPUS_PER_NODE=8 on the mindspeed move (PR 6285's new script defaults to 16, the old one ran on 8).
MINDSPEED = b"bash examples/ascend_extras/grpo_trainer/run_qwen3_30b_a3b_mindspeed.sh"
# The built-in tables' facts also know that verl ships no `verl.experimental.fully_async_policy.main` (the
# fixture's made-up module): its moves stay where they are, reported as manual steps.
NO_SUCH_MODULE = [(b"verl.experimental.fully_async_policy.main", b"recipe.fully_async_policy.main")]
BUILTIN_ONLY = {
    # (the import of the moved package and its references move: only the package is checked)
    "launch.py": [(MINDSPEED, b"NPUS_PER_NODE=8 " + MINDSPEED),
                  (b'"-m", "verl.experimental.fully_async_policy.main"', b'"-m", "recipe.fully_async_policy.main"'),
                  (b'run_module("verl.experimental.fully_async_policy.main"',
                   b'run_module("recipe.fully_async_policy.main"'),
                  # `from pkg import main` names the module pkg.main, which v0.9.0 does not ship: reported
                  (b"from verl.experimental.fully_async_policy import main as fully_async_main",
                   b"from recipe.fully_async_policy import main as fully_async_main")],
    "notebooks/launch.ipynb": [(MINDSPEED, b"NPUS_PER_NODE=8 " + MINDSPEED), *NO_SUCH_MODULE],
    "README.md": [(b"(examples/ascend_extras/grpo_trainer/run_qwen3_30b_a3b_mindspeed.sh)",
                   b"(examples/grpo_trainer/run_qwen3_30b_a3b_mindspeed.sh)"),
                  (b"$ " + MINDSPEED, b"$ bash examples/grpo_trainer/run_qwen3_30b_a3b_mindspeed.sh"),
                  *NO_SUCH_MODULE],
}


def migrate(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "migrator", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=HANG_GUARD)


def test_cli_migrates_python_yaml_docs_and_notebooks_exactly(tmp_path):
    project = tmp_path / "project"
    for rel, source in PROJECT.items():
        (project / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, project / rel)
    table = tmp_path / "table.yaml"
    shutil.copyfile(TEST_TABLE, table)

    # The golden files move the NPU script, whose new script is not proven to train what the old one trained
    # (facts/script-moves.yaml): that move is made with --unsafe-fixes only (tests/e2e/test_cli_script_moves.py).
    proc = migrate("--to", "v0.9.0", "--table", str(table), "--unsafe-fixes", "--allow-dirty", str(project),
                   cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    for rel, source in PROJECT.items():
        golden = source.with_name(source.name.replace(".in.", ".out."))
        expected = golden.read_bytes()
        for before, after in BUILTIN_ONLY.get(rel, ()):
            assert before in expected, (rel, before)
            expected = expected.replace(before, after)
        assert (project / rel).read_bytes() == expected, rel
    # In Markdown prose the presets have no place: the move is reported for a person instead.
    assert "run it as `NPUS_PER_NODE=8 bash examples/ascend_extras/" in proc.stderr
    # Findings that need a person are printed as file:line:col, on stderr (stdout is for diffs and JSON).
    assert "launch.py:23:10: actor_rollout_ref.rollout.engine_kwargs.vllm.enable_expert_parallel" in proc.stderr
    assert "4 changed" in proc.stderr or "changed" in proc.stderr

    again = migrate("--to", "v0.9.0", "--table", str(table), "--check", str(project), cwd=tmp_path)
    # Nothing more to edit; the manual actions stay, so --check still fails CI.
    assert again.returncode == 1, again.stdout + again.stderr
    assert "0 files would change" in again.stderr and " 0 manual actions" not in again.stderr


def test_cli_finds_nested_yaml_keys_and_split_module_imports(tmp_path):
    """Files that never spell an old key or module in dotted form must still reach their rewriter."""
    (tmp_path / "conf.yaml").write_text("actor_rollout_ref:\n  rollout:\n    update_weights_bucket_megabytes: 64\n")
    (tmp_path / "run.py").write_text("from recipe import fully_async_policy\n")
    proc = migrate("--to", "v0.9.0", "--table", str(TEST_TABLE), "--allow-dirty", str(tmp_path), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "conf.yaml").read_text() == (
        "actor_rollout_ref:\n  rollout:\n    checkpoint_engine:\n      update_weights_bucket_megabytes: 64\n")
    assert (tmp_path / "run.py").read_text() == "from verl.experimental import fully_async_policy\n"
