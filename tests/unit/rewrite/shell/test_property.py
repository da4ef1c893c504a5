"""Property tests: verl-style shell scripts generated from fragments (`\\` lists, arrays, case, if,
functions, heredocs, every kind of quote, comments, CRLF, tabs, unicode), each fragment possibly
carrying an old key, path or env export from the built-in tables. Whatever the script:

- every edit touches only what the table names, and every byte outside the edit spans is unchanged;
- the output passes `bash -n` whenever the input did;
- a second run is a no-op;
- `--check`, `--diff` and writing agree on which files change and how.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import shutil
import subprocess

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, Phase, event, given, settings
from hypothesis import strategies as st

from migrator.cli import cli
from migrator.cli.common import load_composed
from migrator.edits import settle_unsafe
from migrator.fileprocess import apply_edits, process_file
from migrator.rewrite import shell
from migrator.rewrite.shell.review import review
from tests.helpers import HANG_GUARD

# The package's `migrate` attribute is the click command; the module is the one that calls load_composed.
migrate_module = importlib.import_module("migrator.cli.migrate")
COMPOSED = load_composed(None, "v0.8.0", ())
MAPPINGS = COMPOSED[0]
BASH = shutil.which("bash")

RENAMED_KEY = "actor_rollout_ref.rollout.update_weights_bucket_megabytes"
WARN_KEY = "actor_rollout_ref.rollout.engine_kwargs.vllm.enable_expert_parallel"
REMOVED_KEY = "critic.kl_ctrl.type"
MOVED_PATH = "examples/grpo_trainer/run_qwen3_30b_a3b_mindspeed.sh"
PRESET_PATH = "examples/grpo_trainer/run_qwen2_5_vl-7b-sglang.sh"  # moves with INFER_BACKEND=sglang

arg = st.sampled_from([
    f"{RENAMED_KEY}=512", f"+{RENAMED_KEY}=1", f"{WARN_KEY}=True", f"{REMOVED_KEY}=16", "trainer.n_gpus_per_node=8",
    "data.train_files=$HOME/data/gsm8k/train.parquet", '"trainer.logger=[console,wandb]"', f"'{RENAMED_KEY}=2'",
    f'"{RENAMED_KEY}=$BUCKET"', "trainer.experiment_name=${NAME}_x", f"${{EXTRA:-{RENAMED_KEY}=4}}",
    "actor_rollout_ref.model.path=Qwen/Qwen2.5-0.5B", f"{RENAMED_KEY}=$((256*2))", f"~{REMOVED_KEY}",
])
text = st.sampled_from([
    "plain words", "a lone\rcarriage return", f"set {RENAMED_KEY} to 512", f"see {MOVED_PATH}", "unicode: héllo 名前 ✓", "tab\tinside",
    f"old {REMOVED_KEY} and {WARN_KEY}", "$HOME and `date` and $(pwd)", "quotes ' \" inside", "",
])
indent = st.sampled_from(["", "  ", "    ", "\t"])


@st.composite
def command(draw) -> str:
    args = draw(st.lists(arg, min_size=1, max_size=4))
    pad = draw(indent) or "    "
    if draw(st.booleans()):
        return "python3 -m verl.trainer.main_ppo \\\n" + " \\\n".join(pad + a for a in args) + "\n"
    return "python3 -m verl.trainer.main_ppo " + " ".join(args) + "\n"


@st.composite
def fragment(draw) -> str:
    pick = draw(st.integers(0, 15))
    pad = draw(indent)
    if pick == 0:
        return draw(command())
    if pick == 1:
        return "ARGS=(\n" + "".join(f"{pad or '  '}{a}\n" for a in draw(st.lists(arg, min_size=1, max_size=4))) + ")\n"
    if pick == 2:
        return f'case "$MODE" in\n  fast)\n{pad}{draw(command())}  ;;\n  *) echo "{draw(text)}" ;;\nesac\n'
    if pick == 3:
        return f'if [ "${{X:-0}}" = 1 ]; then\n{pad}{draw(command())}else\n{pad}echo no\nfi\n'
    if pick == 4:
        return f"run_it() {{\n{pad}local n=1\n{pad}{draw(command())}}}\nrun_it\n"
    if pick == 5:
        quoted = draw(st.sampled_from(["EOF", "'EOF'", '"EOF"']))
        dash = draw(st.sampled_from(["", "-"]))
        return f"cat <<{dash}{quoted}\n{draw(text)}\n{draw(arg)}\nEOF\n"
    if pick == 6:
        a = draw(arg)
        return draw(st.sampled_from([f'echo "{a}"\n', f"echo '{a}'\n", f"echo $'{a}'\n", f"echo {a}\n"]))
    if pick == 7:
        return f"{pad}# {draw(text)}\n"
    if pick == 8:
        return draw(st.sampled_from(["export VLLM_ATTENTION_BACKEND=XFORMERS\n", "VLLM_ATTENTION_BACKEND=XFORMERS\n",
                                     "export ASCEND_RT_VISIBLE_DEVICES=0,1\n", "export HCCL_CONNECT_TIMEOUT=1200\n",
                                     "VLLM_ATTENTION_BACKEND=XFORMERS python3 run.py\n",
                                     "export VLLM_ATTENTION_BACKEND=FLASH_ATTN\n"]))
    if pick == 9:
        path = draw(st.sampled_from([MOVED_PATH, PRESET_PATH, "examples/other/run.sh", f"./{MOVED_PATH}",
                                     f"$VERL/{MOVED_PATH}"]))
        return draw(st.sampled_from([f"bash {path}\n", f"nohup bash {path} > log.txt 2>&1 &\n", f"ls {path}\n",
                                     f"SCRIPT={path}\n"]))
    if pick == 10:
        return f'NAME="{draw(text)}"\n'
    if pick == 11:
        return f"for i in 1 2; do\n{pad}{draw(command())}done\n"
    if pick == 12:
        return f"x=$(echo {draw(arg)})\n"
    if pick == 13:
        return f"{draw(command()).rstrip()}  # {draw(text)}\n"
    if pick == 14:
        return f"{draw(command()).rstrip()} | tee log.txt\n"
    return "\n"


@st.composite
def script(draw) -> bytes:
    body = "".join(draw(st.lists(fragment(), min_size=1, max_size=8)))
    if draw(st.booleans()):
        body = "#!/bin/bash\nset -xeuo pipefail\n" + body
    data = body.encode()
    eol = draw(st.sampled_from(["lf", "crlf", "mixed"]))
    if eol == "crlf":
        data = data.replace(b"\n", b"\r\n")
    elif eol == "mixed":
        lines = data.split(b"\n")
        flags = draw(st.lists(st.booleans(), min_size=len(lines), max_size=len(lines)))
        data = b"\n".join(line + (b"\r" if f and i < len(lines) - 1 else b"") for i, (line, f) in
                          enumerate(zip(lines, flags)))
    if draw(st.booleans()):
        data = data.rstrip(b"\r\n")  # no newline at the end
    if draw(st.booleans()):
        data = data.replace(b"plain words", b"caf\xe9 latin-1")  # not UTF-8
    return data


def bash_ok(data: bytes) -> bool:
    proc = subprocess.run([BASH, "-n"], input=data.replace(b"\r\n", b"\n"), capture_output=True, timeout=HANG_GUARD)
    return proc.returncode == 0


ONLY_LAYOUT = re.compile(rb"[ \t\r\n\\]*\Z")


def assert_edit_touches_only_what_the_table_names(source: bytes, edit) -> None:
    old = source[edit.start:edit.end]
    if edit.kind == "key-rename":
        # A rename may take the `+` before the key with it: the new key exists, and Hydra refuses `+` there.
        key = old[1:] if old.startswith(b"+") and not edit.replacement.startswith(b"+") else old
        change = MAPPINGS.key(key.decode())
        assert change is not None and change.new.encode() == edit.replacement, (old, edit)
    elif edit.kind == "plus-dropped":
        assert old == b"+" and edit.replacement == b"", edit
    elif edit.kind == "path-move":
        if edit.start == edit.end:  # env presets before the command, or args after the script
            assert re.fullmatch(rb"(?:[A-Z_]+=[A-Za-z0-9_./:-]+ )+| (?:\S+=\S+ ?)+", edit.replacement), edit
        else:
            change = MAPPINGS.path(old.decode())
            assert change is not None and change.new.encode() == edit.replacement, (old, edit)
    elif edit.kind == "key-removal":
        assert edit.replacement == b"" and REMOVED_KEY.encode() in old, (old, edit)
        # One edit may remove a whole trailing run of removed arguments; nothing else may go with them.
        rest = re.sub(rb"\S*" + re.escape(REMOVED_KEY.encode()) + rb"\S*", b"", old)
        assert ONLY_LAYOUT.match(rest), (old, edit)
    elif edit.kind == "env-removal":
        if edit.start == edit.end:
            assert edit.replacement.startswith(b"# verl-migrate: removed (verl#6066): "), edit
        else:
            assert re.fullmatch(rb"VLLM_ATTENTION_BACKEND=XFORMERS[ \t]*", old) and edit.replacement == b"", edit
    else:
        pytest.fail(f"unexpected edit kind {edit.kind}: {edit}")


def outside_spans(data: bytes, spans: list[tuple[int, int, bytes]]) -> tuple[list[bytes], bytes]:
    """The bytes of `data` between the spans, and `data` rebuilt with the replacements."""
    pieces, rebuilt, cursor = [], [], 0
    for start, end, replacement in spans:
        pieces.append(data[cursor:start])
        rebuilt += [data[cursor:start], replacement]
        cursor = end
    pieces.append(data[cursor:])
    rebuilt.append(data[cursor:])
    return pieces, b"".join(rebuilt)


@pytest.mark.skipif(BASH is None, reason="needs bash")
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(source=script())
def test_edits_are_local_output_parses_and_second_run_is_a_no_op(tmp_path_factory, source):
    path = tmp_path_factory.mktemp("p") / "run.sh"
    path.write_bytes(source)
    result = process_file(str(path), "run.sh", MAPPINGS)
    parsed_before = bash_ok(source)
    event(f"bash -n {'ok' if parsed_before else 'fails'}: {result.status}")
    if not parsed_before:
        assert result.status in ("skipped", "unchanged"), result
        return
    assert result.status in ("changed", "unchanged"), result
    if result.status == "unchanged":
        return
    located = shell.locate(source, MAPPINGS, "run.sh")
    # The engine's steps: unsafe edits (a move to a script that trains something else) only with --unsafe-fixes.
    new, applied, _ = apply_edits(source, settle_unsafe(list(located.edits), MAPPINGS.unsafe_fixes)[0])
    for edit in applied:
        assert_edit_touches_only_what_the_table_names(source, edit)
    # Hydra's review (rewrite/shell/review.py) may back edits out and drop a `+` the target refuses.
    second = review(source, new, applied, MAPPINGS)
    for edit in settle_unsafe(list(second.added), MAPPINGS.unsafe_fixes)[0]:
        assert edit.kind == "plus-dropped" and source[edit.start:edit.end] == b"+" and not edit.replacement
    added = settle_unsafe(list(second.added), MAPPINGS.unsafe_fixes)[0]
    new, applied, _ = apply_edits(source, [e for e in applied if e not in second.back_out] + added)
    spans = [(e.start, e.end, e.replacement) for e in applied]
    pieces, rebuilt = outside_spans(source, spans)
    assert result.after == rebuilt == new
    # Walk the output: each untouched piece appears in order, separated only by the replacements.
    at = 0
    for piece, (_, _, replacement) in zip(pieces, spans + [(0, 0, b"")]):
        assert result.after[at:at + len(piece)] == piece
        at += len(piece) + len(replacement)
    assert bash_ok(result.after)
    path.write_bytes(result.after)
    again = process_file(str(path), "run.sh", MAPPINGS)
    assert again.status == "unchanged" and again.edits == [], again


def apply_unified_diff(files: dict[str, bytes], diff: bytes) -> dict[str, bytes]:
    """Apply report.unified_diff output (a/ and b/ prefixes, `\\ No newline at end of file`)."""
    out = dict(files)
    lines = diff.split(b"\n")
    i = 0

    def body(k: int) -> bytes:  # a diff line's text with its line ending restored
        no_newline = k + 1 < len(lines) and lines[k + 1].startswith(b"\\ No newline")
        return lines[k][1:] + (b"" if no_newline else b"\n")

    while i < len(lines):
        if not lines[i].startswith(b"--- a/"):
            assert lines[i] == b"", lines[i]
            i += 1
            continue
        name = lines[i][6:].decode("utf-8", "surrogateescape")
        assert lines[i + 1] == b"+++ b/" + lines[i][6:]
        i += 2
        old_lines = _split(out[name])
        new_lines, cursor = [], 0
        while i < len(lines) and lines[i].startswith(b"@@"):
            m = re.match(rb"@@ -(\d+)(?:,(\d+))? \+\d+(?:,(\d+))? @@", lines[i])
            start, n_old, n_new = int(m.group(1)), int(m.group(2) or 1), int(m.group(3) or 1)
            first = start - 1 if n_old else start
            new_lines += old_lines[cursor:first]
            cursor = first
            i += 1
            while n_old or n_new:
                tag = lines[i][:1]
                if tag in (b" ", b"-"):
                    assert old_lines[cursor] == body(i), (name, old_lines[cursor], body(i))
                    cursor += 1
                    n_old -= 1
                if tag in (b" ", b"+"):
                    new_lines.append(body(i))
                    n_new -= 1
                assert tag in (b" ", b"-", b"+"), lines[i]
                i += 1
                if i < len(lines) and lines[i].startswith(b"\\ No newline"):
                    i += 1
        new_lines += old_lines[cursor:]
        out[name] = b"".join(new_lines)
    return out


def _split(data: bytes) -> list[bytes]:
    """Lines as diff tools count them: ended by LF only (a lone CR is part of its line)."""
    parts = data.split(b"\n")
    return [p + b"\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


@pytest.mark.skipif(BASH is None, reason="needs bash")
# No shrinking: each example runs the CLI three times, and shrinking one took minutes.
@settings(max_examples=100, deadline=None, phases=[Phase.explicit, Phase.reuse, Phase.generate],
          suppress_health_check=[HealthCheck.too_slow])
@given(sources=st.lists(script(), min_size=1, max_size=3))
def test_check_diff_and_write_agree(tmp_path_factory, sources):
    base = tmp_path_factory.mktemp("cli")
    files = {f"s{i}.sh": data for i, data in enumerate(sources)}
    for mode in ("check", "diff", "write"):
        (base / mode).mkdir()
        for name, data in files.items():
            (base / mode / name).write_bytes(data)
    runner = CliRunner()
    cwd = os.getcwd()
    outcome = {}
    # The tables are composed once per session, not three times per example (0.16 s each).
    real_load, migrate_module.load_composed = migrate_module.load_composed, lambda *args: COMPOSED
    try:
        for mode, flags in (("check", ["--check", "--output-format", "json"]), ("diff", ["--diff"]), ("write", [])):
            os.chdir(base / mode)
            outcome[mode] = runner.invoke(cli, ["--to", "v0.8.0", "-q", *flags, "."], catch_exceptions=False)
    finally:
        os.chdir(cwd)
        migrate_module.load_composed = real_load
    diff = outcome["diff"].stdout_bytes
    written = {name: (base / "write" / name).read_bytes() for name in files}
    changed = {name for name in files if written[name] != files[name]}
    assert outcome["write"].exit_code == 0 or (outcome["write"].exit_code == 3 and not changed)
    assert outcome["check"].exit_code in (0, 1, 3)
    assert bool(diff.strip()) == bool(changed)
    if outcome["check"].exit_code != 3:
        report = json.loads(outcome["check"].stdout)
        assert report["summary"]["changed"] == len(changed)
        # --check fails while work is left: a file would change, a manual action remains, a file was not migrated
        not_migrated = any(f["status"] == "skipped" and f["code"] != "VM208" for f in report["files"])
        work_left = bool(changed) or report["summary"]["manual_actions"] > 0 or not_migrated
        assert (outcome["check"].exit_code == 1) == work_left
    assert {n for n in files if f"--- a/{n}\n".encode() in diff} == changed  # `.` named no `./` header
    applied = apply_unified_diff(files, diff)
    assert applied == written
    for mode in ("check", "diff"):  # dry runs wrote nothing
        assert {n: (base / mode / n).read_bytes() for n in files} == files
