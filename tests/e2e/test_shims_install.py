"""`shims install` and `shims check` against fake verl checkouts in tmp_path."""

from __future__ import annotations

import os

import pytest

from tests.helpers import run_cli
from tests.helpers.shims import MINDSPEED_NEW, MINDSPEED_OLD, parse_printer, run_stub, write_script


@pytest.fixture
def checkout(tmp_path):
    """A minimal verl v0.8.0 checkout: only the moved mindspeed script (an argv printer) exists."""
    root = tmp_path / "verl v0.8.0"
    write_script(root / MINDSPEED_NEW)
    (root / "examples/grpo_trainer").mkdir(parents=True)
    write_script(root / "examples/grpo_trainer/run_other.sh", "echo real\n")
    return root


def install(root, *extra, to="v0.8.0"):
    return run_cli("shims", "install", "--to", to, "--verl-root", str(root), *extra)


def check(root, *extra, to="v0.8.0"):
    return run_cli("shims", "check", "--to", to, "--verl-root", str(root), *extra)


def test_builtin_tables_put_the_mindspeed_stub_in_place(checkout, tmp_path):
    result = install(checkout)
    assert result.returncode == 0, result.stderr
    assert f"created   {MINDSPEED_OLD}" in result.stdout
    stub = checkout / MINDSPEED_OLD
    args = ["trainer.n_gpus_per_node=16", "a b", "$(nope)", "*"]
    # The facts prove the new mindspeed script trains something else: the stub refuses unless asked.
    refused = run_stub(stub, args, cwd=tmp_path)
    assert refused.returncode == 2 and refused.stdout == b""
    assert "trains something else" in refused.stderr.decode() and "pull/6285" in refused.stderr.decode()
    assert "VERL_MIGRATE_RUN_MOVED=1" in refused.stderr.decode()
    for code in (0, 7):
        run = run_stub(stub, args, stdin=b"stdin text", cwd=tmp_path,
                       env={"FAKE_EXIT": str(code), "VERL_MIGRATE_RUN_MOVED": "1"})
        assert run.returncode == code
        assert parse_printer(run.stdout) == (args, "ENV DEVICE=unset MODE=unset", "stdin text")
        lines = run.stderr.decode().splitlines()
        assert len(lines) == 2 and "pull/6285" in lines[0] and lines[1].startswith("warning: ")
        assert "trains something else" in lines[1]
    assert check(checkout).returncode == 0
    stub.unlink()
    result = check(checkout)
    assert result.returncode == 1 and f"missing   {MINDSPEED_OLD}" in result.stdout


def test_install_is_idempotent_and_updates_its_own_stubs(checkout):
    assert install(checkout).returncode == 0
    stub = checkout / MINDSPEED_OLD
    original = stub.read_bytes()
    again = install(checkout)
    assert again.returncode == 0 and "created" not in again.stdout and "updated" not in again.stdout
    stub.write_bytes(original.replace(b"exec ", b"echo hacked; exec "))
    result = check(checkout)
    assert result.returncode == 1 and f"edited    {MINDSPEED_OLD}" in result.stdout
    result = install(checkout)
    assert result.returncode == 0 and "hand edits discarded" in result.stdout
    assert stub.read_bytes() == original


def test_check_finds_stale_stubs(checkout, tmp_path):
    assert install(checkout).returncode == 0
    table = tmp_path / "extra.yaml"
    table.write_text("release: v0.8.0\nentries:\n  - kind: path-move\n"
                     f"    old: {MINDSPEED_OLD}\n    new: {MINDSPEED_NEW}\n    env: {{DEVICE: npu}}\n    pr: 6285\n")
    result = check(checkout, "--table", str(table))
    assert result.returncode == 1 and f"stale     {MINDSPEED_OLD}" in result.stdout


def test_install_refuses_real_files(checkout):
    real = checkout / MINDSPEED_OLD
    real.write_text("#!/bin/bash\necho my own script\n")
    result = install(checkout)
    assert result.returncode == 3
    assert "refused" in result.stderr and "real file" in result.stderr
    assert real.read_text() == "#!/bin/bash\necho my own script\n"
    result = check(checkout)
    assert result.returncode == 1 and "blocked" in result.stdout


def test_install_never_writes_through_a_symlinked_directory_outside_the_root(checkout, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (checkout / "examples/grpo_trainer/run_other.sh").unlink()
    (checkout / "examples/grpo_trainer").rmdir()
    (checkout / "examples/grpo_trainer").symlink_to(outside)
    result = install(checkout)
    assert result.returncode == 3 and "leads outside" in result.stderr
    assert list(outside.iterdir()) == []


def test_install_never_writes_through_a_symlinked_stub(checkout, tmp_path):
    victim = tmp_path / "victim.sh"
    victim.write_text("keep\n")
    (checkout / MINDSPEED_OLD).symlink_to(victim)
    result = install(checkout)
    assert result.returncode == 3 and "symlink" in result.stderr
    assert victim.read_text() == "keep\n"


def test_missing_target_gets_no_stub_and_check_agrees(tmp_path):
    root = tmp_path / "empty"
    root.mkdir()
    result = install(root)
    assert result.returncode == 0
    assert "no stub: its target" in result.stderr
    assert not (root / MINDSPEED_OLD).exists()
    assert check(root).returncode == 0


def test_expired_stubs_are_removed_by_policy(checkout):
    assert install(checkout).returncode == 0
    # Upgrade the checkout to main: PR 7374 deleted the moved script there.
    (checkout / MINDSPEED_NEW).unlink()
    # At main the v0.8.0 move is two releases old: the policy drops its stub; the deletion gets one.
    result = install(checkout, to="main")
    assert result.returncode == 0, result.stderr
    assert f"removed   {MINDSPEED_OLD}" in result.stdout and f"created   {MINDSPEED_NEW}" in result.stdout
    assert "pull/7374" in (checkout / MINDSPEED_NEW).read_text()
    assert not (checkout / MINDSPEED_OLD).exists()
    assert (checkout / "examples/grpo_trainer/run_other.sh").read_text() == "echo real\n"


def test_check_reports_leftover_generated_stubs(checkout):
    assert install(checkout).returncode == 0
    result = check(checkout, to="main")
    assert result.returncode == 1 and f"extra     {MINDSPEED_OLD}" in result.stdout


def test_generate_and_check_out_dir_with_keys_module(tmp_path):
    out = tmp_path / "out"
    args = ["--to", "v0.8.0", "--keys-module", "verl/keys.py", "--out", str(out)]
    assert run_cli("shims", "generate", *args).returncode == 0
    assert (out / "verl/keys.py").is_file() and os.access(out / MINDSPEED_OLD, os.X_OK)
    assert run_cli("shims", "check", *args).returncode == 0
    (out / "verl/keys.py").unlink()
    result = run_cli("shims", "check", *args)
    assert result.returncode == 1 and "missing   verl/keys.py" in result.stdout


@pytest.mark.parametrize("bad", ["../x.py", "/abs.py", "a/../b.py", "keys.txt"])
def test_keys_module_must_stay_inside(tmp_path, bad):
    result = run_cli("shims", "generate", "--to", "v0.8.0", "--keys-module", bad, "--out", str(tmp_path / "o"))
    assert result.returncode == 2 and "--keys-module" in result.stderr


def test_usage_errors_exit_2(tmp_path):
    assert run_cli("shims", "check", "--to", "v0.8.0").returncode == 2
    assert run_cli("shims", "install", "--to", "v9", "--verl-root", str(tmp_path)).returncode == 2
    assert run_cli("shims", "install", "--to", "v0.8.0", "--verl-root", str(tmp_path / "nope")).returncode == 2


def test_no_stubs_inside_a_git_submodule(checkout, tmp_path):
    table = tmp_path / "sub.yaml"
    table.write_text("release: v0.8.0\nentries:\n  - kind: path-removal\n    old: recipe/dapo/run.sh\n"
                     "    hint: moved to verl-recipe\n    pr: 1\n  - kind: path-removal\n"
                     "    old: vendored/x/run.sh\n    hint: gone\n    pr: 2\n")
    (checkout / ".gitmodules").write_text('[submodule "recipe"]\n\tpath = recipe\n\turl = https://example.invalid/r.git\n')
    (checkout / "vendored/x").mkdir(parents=True)
    (checkout / "vendored/.git").write_text("gitdir: elsewhere\n")
    result = install(checkout, "--table", str(table))
    assert result.returncode == 0, result.stderr
    assert "recipe/ is a git submodule" in result.stderr and "vendored/ is a git submodule" in result.stderr
    assert not (checkout / "recipe").exists() and not (checkout / "vendored/x/run.sh").exists()
    assert check(checkout, "--table", str(table)).returncode == 0


def test_install_removes_only_stub_paths_the_tables_define(checkout):
    """A keys module, a `generate --out` folder inside the checkout and stubs in a nested repository
    carry our header but are not this run's to remove."""
    keys = checkout / "verl/utils/deprecated_keys.py"
    assert run_cli("shims", "keys", "--to", "v0.8.0", "--out", str(keys)).returncode == 0
    assert run_cli("shims", "generate", "--to", "v0.8.0", "--out", str(checkout / "my_shims")).returncode == 0
    nested = checkout / "third_party/verl_fork"
    (nested / ".git").mkdir(parents=True)
    assert run_cli("shims", "generate", "--to", "v0.8.0", "--out", str(nested)).returncode == 0
    before = {p: p.read_bytes() for p in checkout.rglob("*") if p.is_file()}
    assert len(before) > 200
    result = install(checkout)
    assert result.returncode == 0, result.stderr
    assert "removed   " not in result.stdout + result.stderr
    for path, data in before.items():
        assert path.read_bytes() == data, path
    assert check(checkout).returncode == 0, "check must not call them leftovers either"
    # An expired stub at a path the tables define is still removed (test_expired_stubs_are_removed_by_policy).
    (checkout / MINDSPEED_NEW).unlink()
    result = install(checkout, to="main")
    assert f"removed   {MINDSPEED_OLD}" in result.stdout
    assert all(line.split()[1] in result.stdout and not line.split()[1].startswith(("my_shims/", "third_party/"))
               for line in result.stdout.splitlines() if line.startswith("removed"))
    assert keys.is_file() and (checkout / "my_shims" / MINDSPEED_OLD).is_file() and (nested / MINDSPEED_OLD).is_file()


def test_a_stub_in_a_nested_repository_is_never_removed(checkout):
    assert install(checkout).returncode == 0
    (checkout / "examples/.git").mkdir()  # examples/ became a submodule since
    (checkout / MINDSPEED_NEW).unlink()
    result = install(checkout, to="main")
    assert result.returncode == 0, result.stderr
    assert (checkout / MINDSPEED_OLD).is_file() and f"removed   {MINDSPEED_OLD}" not in result.stdout
