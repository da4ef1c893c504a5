"""Broken mapping tables fail with `file:line: entry: problem`, exit 2 and no traceback; valid
history (a key that leaves and comes back across releases) composes instead of failing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from migrator.mapping import compose, load_builtin
from migrator.mapping.load import TableSet, load_table
from tests.helpers import HANG_GUARD

SCRIPT = b"python3 -m verl.trainer.main_ppo a.b=1\n"


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "migrator", *args], cwd=cwd, capture_output=True, timeout=HANG_GUARD)


def _tableset(tmp_path: Path, per_release: dict[str, str]) -> TableSet:
    releases = ("r0", *per_release)
    tables = {}
    for release, body in per_release.items():
        path = tmp_path / f"{release}.yaml"
        path.write_text(f"release: {release}\nentries:\n{body}")
        tables[release] = load_table(path, release=release)
    return TableSet("t", releases, tables)


def test_key_that_leaves_and_comes_back_composes_to_no_change(tmp_path):
    tables = _tableset(tmp_path, {
        "r1": "- {kind: key-rename, old: a.x, new: b.x, pr: 1}\n",
        "r2": "- {kind: key-rename, old: b.x, new: a.x, pr: 2}\n",
    })
    maps = compose(tables, "r0", "r2")
    assert maps.key("a.x") is None
    assert maps.key("b.x").new == "a.x"
    assert compose(tables, "r0", "r1").key("a.x").new == "b.x"
    assert compose(tables, "r1", "r2").key("b.x").new == "a.x"


@pytest.mark.parametrize("to", ["v0.6.0", "v0.8.0", "main"])
def test_builtin_tables_compose_over_the_whole_history(to):
    maps = compose(load_builtin(), None, to)
    # verl moved the profiler keys to actor_rollout_ref.profiler in v0.5.0 and back per role in v0.6.0.
    assert maps.key("actor_rollout_ref.actor.profiler.all_ranks") is None


def _laughs() -> str:
    text = "release: main\nx0: &x0 [a, a, a, a, a, a, a, a, a, a]\n"
    for i in range(1, 9):
        text += f"x{i}: &x{i} [" + ", ".join([f"*x{i - 1}"] * 10) + "]\n"
    return text + "entries: []\n"


E = "release: main\nentries:\n"
BROKEN = {
    "bad_yaml": (E + "  - kind: key-rename\n    old: [a\n", "bad_yaml.yaml:5: invalid YAML: expected ',' or ']'"),
    "empty": ("", "empty.yaml: table is empty (expected 'release:' and 'entries:')"),
    "not_a_mapping": ("- a\n- b\n", "not_a_mapping.yaml:1: table must be a mapping with 'release:' and 'entries:'"),
    "entries_not_a_list": ("release: main\nentries: {a: 1}\n", "entries_not_a_list.yaml:2: 'entries' must be a list"),
    "entry_not_a_mapping": (E + "  - just a string\n",
                            "entry_not_a_mapping.yaml:3: entry #1 is not a mapping: 'just a string'"),
    "top_level_extra": ("release: main\nentries: []\nextra: 1\n",
                        "top_level_extra.yaml:3: unexpected top-level field(s): extra"),
    "wrong_type": (E + "  - {kind: key-rename, old: a.b, new: 5, pr: 1}\n",
                   "wrong_type.yaml:3: entry #1 (key-rename a.b): new: 5 is not a Hydra config key"),
    "bool_pr": (E + "  - {kind: key-rename, old: a.b, new: c.d, pr: true}\n",
                "bool_pr.yaml:3: entry #1 (key-rename a.b): pr: pr must be a positive integer"),
    "cycle": (E + "  - {kind: key-rename, old: a.b, new: c.d, pr: 1}\n  - {kind: key-rename, old: c.d, new: a.b, pr: 1}\n",
              "cycle.yaml:3: key-rename a.b: forms a rename cycle: key-rename c.d at line 4"),
    "subtree_cycle": (E + "  - {kind: key-rename, old: a.*, new: b.*, pr: 1}\n"
                      "  - {kind: key-rename, old: b.x, new: a.x, pr: 1}\n",
                      "subtree_cycle.yaml:4: key-rename b.x: chains into another rename in the same table"),
    "directory_chain": (E + "  - {kind: path-move, old: a/, new: b/, pr: 1}\n"
                        "  - {kind: path-move, old: b/x.sh, new: a/x.sh, pr: 1}\n",
                        "directory_chain.yaml:4: path-move b/x.sh: chains into another rename in the same table"),
    "chain": (E + "  - {kind: key-rename, old: a.b, new: c.d, pr: 1}\n  - {kind: key-rename, old: c.d, new: e.f, pr: 1}\n",
              "chain.yaml:3: key-rename a.b: chains into another rename in the same table (write old -> final new)"),
    "rename_into_removal": (E + "  - {kind: key-rename, old: a.b, new: c.d, pr: 1}\n"
                            "  - {kind: key-removal, old: c.d, action: warn, hint: gone, pr: 1}\n",
                            "rename_into_removal.yaml:3: key-rename a.b: renames into something this table removes"),
    "duplicate": (E + "  - {kind: key-rename, old: a.b, new: c.d, pr: 1}\n"
                  "  - {kind: key-removal, old: a.b, action: warn, hint: x, pr: 1}\n",
                  "duplicate.yaml:4: key-removal a.b: duplicate old 'a.b': already given at line 3"),
    "duplicate_field": (E + "  - kind: key-rename\n    old: a.b\n    old: c.d\n",
                        "duplicate_field.yaml:5: field 'old' is given twice"),
    "path_traversal": (E + "  - {kind: path-move, old: ../etc/passwd, new: a/b.sh, pr: 1}\n",
                       "path_traversal.yaml:3: entry #1 (path-move ../etc/passwd): old: path '../etc/passwd' contains "
                       "a '.' or '..' segment"),
    "absolute_path": (E + "  - {kind: path-move, old: a/b.sh, new: /etc/passwd, pr: 1}\n",
                      "absolute_path.yaml:3: entry #1 (path-move a/b.sh): new: path '/etc/passwd' is absolute"),
    "shell_metacharacters": (E + "  - {kind: path-move, old: a/b.sh, new: 'a/$(rm -rf ~).sh', pr: 1}\n",
                             "shell_metacharacters.yaml:3: entry #1 (path-move a/b.sh): new: path 'a/$(rm -rf ~).sh' "
                             "contains whitespace or shell metacharacters"),
    "env_value_metacharacters": (E + "  - {kind: path-move, old: a/b.sh, new: a/c.sh, env: {X: '1;rm -rf /'}, pr: 1}\n",
                                 "env_value_metacharacters.yaml:3: entry #1 (path-move a/b.sh): env: value '1;rm -rf /'"),
    "multiline_hint": (E + "  - {kind: key-removal, old: a.b, action: warn, hint: \"a\\nb\", pr: 1}\n",
                       "multiline_hint.yaml:3: entry #1 (key-removal a.b): hint: text 'a\\nb' must be one line"),
    "bad_regex": (E + "  - {kind: env-removal, old: X, when: {file-matches: ['(']}, pr: 1}\n",
                  "bad_regex.yaml:3: entry #1 (env-removal X): when: when.file-matches: bad regular expression '('"),
    "unknown_kind": (E + "  - {kind: key-rename2, old: a.b, new: c.d, pr: 1}\n",
                     "unknown_kind.yaml:3: entry #1 (key-rename2 a.b): unknown kind 'key-rename2' (known: config-dir-move"),
    "missing_field": (E + "  - {kind: key-rename, old: a.b, pr: 1}\n",
                      "missing_field.yaml:3: entry #1 (key-rename a.b): missing field(s) new for key-rename"),
    "extra_field": (E + "  - {kind: key-rename, old: a.b, new: c.d, pr: 1, foo: 2}\n",
                    "extra_field.yaml:3: entry #1 (key-rename a.b): unexpected field(s) foo for key-rename"),
    "unknown_release": ("release: v9.9\nentries: []\n", "unknown_release.yaml: table names unknown release 'v9.9'"),
    # Found by these tests: each of the next four printed a traceback (or hung) before.
    "python_tag_on_a_value": (E + "  - {kind: key-rename, old: !!python/name:os.system a.b, new: c.d, pr: 1}\n",
                              "python_tag_on_a_value.yaml:3: invalid YAML value: could not determine a constructor"),
    "python_tag_on_a_list": ("release: main\nentries: !!python/object:os.system []\n",
                             "python_tag_on_a_list.yaml:2: unsupported YAML tag"),
    "recursive_alias": ("release: main\nentries: &a [*a]\n",
                        "recursive_alias.yaml:2: a YAML alias refers to a value that contains it"),
    "billion_laughs": (_laughs(), "billion_laughs.yaml:2: table too large: more than 100000 YAML values"),
    "deeply_nested": (E + "  - {kind: key-removal, old: a.b, action: warn, hint: x, pr: 1, note: "
                      + "[" * 3000 + "]" * 3000 + "}\n", "deeply_nested.yaml: invalid YAML: values nested too deeply"),
    "nested_past_the_limit": (E + "  - {kind: key-removal, old: a.b, action: warn, hint: x, pr: 1, note: "
                              + "[" * 60 + "]" * 60 + "}\n",
                              "nested_past_the_limit.yaml:3: values nested more than 50 levels deep"),
    "not_utf8": ("release: main\nentries: []\n# caf\udce9\n", "not_utf8.yaml: cannot read table: 'utf-8' codec"),
}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_broken_table_fails_with_file_line_entry_problem(tmp_path, name):
    text, expected = BROKEN[name]
    (tmp_path / f"{name}.yaml").write_bytes(text.encode("utf-8", "surrogateescape"))
    (tmp_path / "s.sh").write_bytes(SCRIPT)
    out = _cli("--check", "--table", f"{name}.yaml", "s.sh", cwd=tmp_path)
    stderr = out.stderr.decode()
    assert out.returncode == 2, stderr
    assert "Traceback" not in stderr
    assert stderr.startswith(f"error: {expected}"), stderr
    assert (tmp_path / "s.sh").read_bytes() == SCRIPT


@pytest.mark.parametrize("args, expected", [
    (("--to", "v0.1.0"), "error: --to: unknown release 'v0.1.0' (known: v0.1, "),
    (("--from", "v0.0"), "error: --from: unknown release 'v0.0' (known: v0.1, "),
    (("--from", "main", "--to", "v0.8.0"), "error: --from/--to: --from main is newer than --to v0.8.0"),
    (("--table", "missing.yaml"), "error: missing.yaml: no such table file"),
])
def test_bad_release_options_exit_2(tmp_path, args, expected):
    (tmp_path / "s.sh").write_bytes(SCRIPT)
    out = _cli("--check", *args, "s.sh", cwd=tmp_path)
    assert out.returncode == 2
    assert out.stderr.decode().startswith(expected) and "Traceback" not in out.stderr.decode()


def test_user_table_that_chains_into_a_builtin_entry_of_its_release_is_refused(tmp_path):
    (tmp_path / "mine.yaml").write_text(
        "release: v0.7.1\nentries:\n"
        "  - {kind: key-rename, old: my.key, new: actor_rollout_ref.rollout.update_weights_bucket_megabytes, pr: 1}\n")
    (tmp_path / "s.sh").write_bytes(SCRIPT)
    out = _cli("--check", "--table", "mine.yaml", "s.sh", cwd=tmp_path)
    assert out.returncode == 2
    assert "key-rename my.key: chains into another rename in the same table" in out.stderr.decode()


def test_shared_when_condition_through_an_alias_still_loads(tmp_path):
    path = tmp_path / "aliases.yaml"
    path.write_text(E + "  - {kind: env-removal, old: A, when: &npu {file-matches: ['ASCEND_']}, pr: 1}\n"
                        "  - {kind: env-removal, old: B, when: *npu, pr: 1}\n")
    table = load_table(path)
    assert [e.when.patterns for e in table.entries] == [("ASCEND_",), ("ASCEND_",)]


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_a_table_that_never_ends_is_refused_at_a_bound(tmp_path, device):
    """`--table /dev/zero` read until memory ran out (a MemoryError traceback)."""
    (tmp_path / "run.sh").write_bytes(SCRIPT)
    proc = _cli("--check", "--table", device, str(tmp_path), cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert b"Traceback" not in proc.stderr
    assert f"error: {device}: cannot read table: larger than 16 MiB".encode() in proc.stderr
