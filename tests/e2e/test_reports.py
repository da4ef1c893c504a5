"""Reports a person can act on: every changed file named without -v (black's `would reformat`, cargo fix's
`Fixed`), and after a write the findings point at the lines of the file as written."""

from __future__ import annotations

from tests.helpers import run_cli

# The module moves (verl-recipe's fully_async_policy into verl.experimental) and splits the import in two:
# every line below it moves down by one in the file as written. The key has no effect at v0.9.0 (VM112).
SPLIT_IMPORT = ('from recipe import fully_async_policy, other_recipe\n'
                'ARGS = ["actor_rollout_ref.rollout.skip.max_dump_step=3"]\n')
UNCHANGED = "echo nothing of verl here\n"


def place_lines(stderr: str, path) -> list[str]:
    return [line.strip() for line in stderr.splitlines() if line.strip().startswith(f"{path}:")]


def test_every_changed_file_is_named_without_verbose(tmp_path):
    changed, other = tmp_path / "launch.py", tmp_path / "other.sh"
    changed.write_text(SPLIT_IMPORT)
    other.write_text(UNCHANGED)
    for flags in (["--check"], ["--diff"]):
        lines = run_cli("--to", "v0.9.0", *flags, tmp_path).stderr.splitlines()
        assert f"would change: {changed}" in lines, lines
        assert not any(str(other) in line for line in lines)
    assert f"would change: {changed}" not in run_cli("--to", "v0.9.0", "--check", "-q", tmp_path).stderr
    written = run_cli("--to", "v0.9.0", tmp_path)
    assert written.returncode == 0, written.stderr
    assert f"changed: {changed}" in written.stderr.splitlines()
    assert not any(str(other) in line for line in written.stderr.splitlines())


def test_after_a_write_findings_carry_the_lines_of_the_file_as_written(tmp_path):
    script = tmp_path / "launch.py"
    script.write_text(SPLIT_IMPORT)
    check = run_cli("--to", "v0.9.0", "--check", script)
    assert place_lines(check.stderr, script) == [
        f"{script}:2:10: actor_rollout_ref.rollout.skip.max_dump_step: has no effect in this release"]
    written = run_cli("--to", "v0.9.0", script)
    assert written.returncode == 0, written.stderr
    assert script.read_text().splitlines()[1] == "from recipe import other_recipe"  # the import was split
    assert place_lines(written.stderr, script) == [
        f"{script}:3:10: actor_rollout_ref.rollout.skip.max_dump_step: has no effect in this release"]
    line = script.read_text().splitlines()[2]
    assert line[9:].startswith("actor_rollout_ref.rollout.skip.max_dump_step")  # column 10 of line 3 on disk
