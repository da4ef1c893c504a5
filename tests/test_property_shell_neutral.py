"""Property test trying to break `shell.edits_keep_validity`, the proof that lets the engine skip `bash -n`.

The claim: whenever it returns True for a source and non-overlapping edits, tree-sitter parses the
source without error and `bash -n` passes the edited script exactly when it passes the original.

Scripts are built from verl-style fragments (Hydra override lists under `python3 -m
verl.trainer.main_ppo`, assignments, arrays, `declare`/`local`/`export`, functions, `case`, `[[ ]]`,
`if`, loops, `$(( ))`, comments, quotes, here-documents, extglob words, subscripts, redirections,
`time -p --`, `{fd}>` redirections, words split by `\\`-newline), some deliberately broken. Edits
favour renames of plain name characters inside words (what the shell rewriter produces), with
replacements that bash's parser treats specially: reserved words, declaration builtins, `eval`/`let`/
`alias`, test operators, `time` options, fd numbers, names with dots or slashes.

The search size is `NEUTRAL_EXAMPLES` (default 800, under 10 s); run it with e.g.
`NEUTRAL_EXAMPLES=20000` to hunt for counterexamples.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from migrator.edits import Edit
from migrator.engine import apply_edits
from migrator.rewrite.shell import edits_keep_validity, parse

BASH = shutil.which("bash")
EXAMPLES = int(os.environ.get("NEUTRAL_EXAMPLES", "800"))


def bash_ok(source: bytes) -> bool:
    # As the engine's validation does: CRLF normalised, the script passed as a file.
    with tempfile.NamedTemporaryFile(prefix="neutral-", suffix=".sh") as script:
        script.write(source.replace(b"\r\n", b"\n"))
        script.flush()
        proc = subprocess.run([BASH, "-n", script.name], check=False, stdin=subprocess.DEVNULL, capture_output=True,
                              env={"PATH": os.environ.get("PATH", ""), "LC_ALL": "C"}, timeout=30)
    return proc.returncode == 0


# -- scripts --------------------------------------------------------------------------------------

KEYS = [
    "actor_rollout_ref.rollout.tensor_model_parallel_size", "actor_rollout_ref.actor.ppo_mini_batch_size",
    "actor_rollout_ref.rollout.name", "data.train_batch_size", "trainer.n_gpus_per_node",
    "algorithm.adv_estimator", "actor_rollout_ref.actor.megatron.expert_tensor_parallel_size",
    "critic.model.path", "trainer.logger",
]
VALUES = ["2", "True", "vllm", "grpo", "${train_etp}", "$x", "$((2*4))", "'[console,wandb]'", '"$MODEL"',
          "Qwen/Qwen2.5-0.5B", "${HOME}/data/gsm8k/train.parquet", "1e-6", "null", "$ETP"]
NAMES = ["train_etp", "x", "a", "NGPU", "MODEL", "i", "fd", "ARGS", "b1"]
WORDS = ["a", "b", "a.b", "x/y", "-f", "--", "1", "2", "fi", "done", "in", "@(a|b)", "$x", "${x}", "'q w'", '"$a"']

override = st.builds(lambda plus, k, v: f"{plus}{k}={v}", st.sampled_from(["", "", "+", "++", "~"]),
                     st.sampled_from(KEYS), st.sampled_from(VALUES))
name = st.sampled_from(NAMES)
# Mostly words tree-sitter and bash accept anywhere; sometimes ones that are special somewhere.
word = st.sampled_from(NAMES + KEYS + WORDS[:8] + NAMES + KEYS + WORDS)


@st.composite
def hydra_command(draw) -> str:
    args = draw(st.lists(override, min_size=1, max_size=4))
    head = draw(st.sampled_from(["python3 -m verl.trainer.main_ppo", "python3 -m verl.trainer.main_ppo --config-name=x",
                                 "time -p python3 -m verl.trainer.main_ppo", "srun python3 -m verl.trainer.main_ppo",
                                 'HYDRA_FULL_ERROR=1 python3 -m verl.trainer.main_ppo']))
    tail = draw(st.sampled_from(["", " $@", ' "$@"', " 2>&1 | tee log.txt", " >& log", " 2>&1", " &"]))
    if draw(st.booleans()):
        return head + " \\\n" + " \\\n".join("    " + a for a in args) + tail
    return head + " " + " ".join(args) + tail


def simple(draw) -> str:
    n, m, w, v = draw(name), draw(name), draw(word), draw(st.sampled_from(VALUES))
    clean = [
        f"{n}={v}", f"{n}+=1", f"{n}=${{{m}}}", f"{n}=${m}", f"{n}=({w} {draw(word)})", f"{n}+=({w})",
        f"declare -a {n}=(1 2)", f"declare -A {n}=([k]=v)", f"local {n}={v}", f"local {n}=({w})",
        f"export {n}={v}", f"readonly {n}=1", f"typeset {n}", f"{n}[{m}]=1", f"{n}[1]=({w})",
        f"echo ${{{n}[{m}]}}", f"echo $(( {n} + 1 ))", f"(( {n}++ ))", f"echo {w} {draw(word)}",
        f"let {n}=1", f"alias {n}={m}", f"{n}=1 {m}=({w})", f"echo {w} 2>&1", f"echo {w} >&{m}",
        f"echo {w} 1>&2", "cat <in >out", f"exec {{{n}}}>log", "exec 3>&1", f"echo {w} 2>/dev/null",
        f"cmd {w}>{m}", f"echo '{w} {m}'", f'echo "{w} ${m}"', f"# {w} {n}={v}", f"echo {w} # {m}",
        f"time -p {m}", f"time -- {m} {w}", f"coproc {n} {{ :; }}", f"select {n} in {w}; do break; done",
        f"[[ ${n} -eq 1 ]]", f"[[ -f {w} ]]", f"[[ {w} -nt {m} ]]", f"[[ ${n} == @(a|b) ]]",
        f"[[ ${n} =~ ^a(b|c)$ ]]", f"[ ${n} = {w} ]", f"{n}=$({m} {w})", f"! {m}", f"{m} && {n} || {w}",
        f"{m} | {n}", f"{m}() {{ :; }}", f"{m} () {{ :; }}", f"{m}=1 {n}", f"{n} 2>{m}", f"{m} {{{n}}}<in",
        f"{n}>x", f"{n}<x", f"2>x {m}", f"{m} 3<&0", f"{m} >&-", f"[[ {w} < {m} ]]", f"[[ ${n}>{m} ]]",
        f"A=1 {n}=2 {m} {w}", f"function {m}() {{ :; }}", f"cat <({m} {w})", f"{n}=`{m} {w}`", f"{n}:{m}=1",
        f"echo {n},{m}@x%y:z+w", f"until {m}; do :; done", f"echo ${{{n}:-{w}}} ${{#{m}}}", "echo $[1+2]",
        f"(( ({n}) )); ( ({m}) )", f"case {w} in ({n}) ;; esac", f"{n}=a=b=c", f"[[ ! -d {w} && -n ${m} ]]",
    ]
    odd = [f"echo {n}=({w})", f"eval {n}=({w})", f"{n} {m}=({w})", f"echo @({w}|{m})", f"{n}.x=({w})",
           f"x{n}=(y)", f"{n} =1"]
    if draw(st.integers(0, 24)) == 0:
        return draw(st.sampled_from(odd))
    return draw(st.sampled_from(clean))


@st.composite
def fragment(draw, depth: int = 0) -> str:
    pick = draw(st.sampled_from([0, 0, 0, 1, 1] + ([2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14] if depth < 2 else [])))
    if pick == 0:
        return simple(draw)
    if pick == 1:
        return draw(hydra_command())
    inner = draw(st.lists(fragment(depth + 1), min_size=1, max_size=3))
    body = draw(st.sampled_from(["\n", "; "])).join(inner)
    n, w = draw(name), draw(word)
    redir = draw(st.sampled_from(["", "", " 2>&1", " >log", " 2>/dev/null", " >&2", " | tee x",
                                  " 1>&2", " 2>&1 | tee -a log", " 2>>err", " &>log"] + [" {fd}>log"] * (depth == 1)))
    if pick == 2:
        return f"if [[ ${n} -eq 1 ]]; then\n{body}\nelif {w}; then :\nelse\n{body}\nfi{redir}"
    if pick == 3:
        return f"if {w}; then {body}; fi{redir}"
    if pick == 4:
        return f"for {n} in {w} {draw(word)}; do\n{body}\ndone{redir}"
    if pick == 5:
        return f"for (( i=0; i<{n}; i++ )); do {body}; done{redir}"
    if pick == 6:
        return f"while {w}; do {body}; done{redir}"
    if pick == 7:
        return f"case ${n} in\n  {w}) {body} ;;\n  a.b|c) ;;\n  @(x|y)) ;;\n  *) ;;\nesac{redir}"
    if pick == 8:
        return f"{n}() {{\n  local {draw(name)}=1\n{body}\n}}{redir}"
    if pick == 9:
        return f"function {n} {{ {body}; }}{redir}"
    if pick == 10:
        return f"{{ {body}; }}{redir}"
    if pick == 11:
        return f"( {body} ){redir}"
    if pick == 12:
        return draw(st.sampled_from([f"{n}=$( {body} )", f"time -p -- {{ {body}; }}", f"time -- {{ {body}; }}",
                                     f"time -- if {w}; then {body}; fi", f"time -p {{ {body}; }}{redir}"]))
    if pick == 13 and draw(st.integers(0, 2)) == 0:
        return draw(st.sampled_from([f"cat <<EOF\n{w} ${n}\nEOF", f"cat <<'EOF' >x\n{body}\nEOF",
                                     f"cat <<-{n}\n\t{w}\n\t{n}", f"cat <<<{w}"]))
    if pick == 14 and draw(st.integers(0, 2)) == 0:
        return draw(st.sampled_from([  # deliberately broken
            f"if {w}; then {body}", f"{body} )", f"{body}; fi", f"{body}; done", f"{body}; esac",
            f"{body} }}", f"2>x {body}",
        ]))
    return simple(draw)


def split_runs(draw, text: str) -> str:
    """Sometimes split a word with a `\\`-newline continuation (bash joins the pieces again)."""
    runs = [m for m in re.finditer(r"[A-Za-z0-9_.=/-]{2,}", text)]
    if not runs or draw(st.integers(0, 4)) != 0:
        return text
    m = draw(st.sampled_from(runs))
    cut = draw(st.integers(m.start() + 1, m.end() - 1))
    return text[:cut] + "\\\n" + text[cut:]


@st.composite
def scripts(draw) -> bytes:
    parts = draw(st.lists(fragment(), min_size=1, max_size=4))
    body = parts[0]
    for part in parts[1:]:
        body += ("\n" if body.endswith("&") else draw(st.sampled_from(["\n", "\n", "; ", " && ", "\n\n"]))) + part
    body += "\n"
    if draw(st.booleans()):
        body = "#!/bin/bash\nset -xeuo pipefail\n" + body
    body = split_runs(draw, body)
    data = body.encode()
    if draw(st.integers(0, 19)) == 0:
        data = data.replace(b"\n", b"\r\n")
    return data


# -- edits ----------------------------------------------------------------------------------------

RESERVED = ["if", "then", "else", "elif", "fi", "case", "esac", "for", "select", "while", "until", "do", "done",
            "in", "function", "time", "coproc"]
BUILTINS = ["declare", "local", "export", "readonly", "typeset", "builtin", "command", "eval", "let", "alias",
            "echo", "exec", "source", "true"]
OPERATORS = ["-eq", "-ne", "-f", "-z", "-n", "-nt", "-ot", "-ef", "-a", "-o", "-v", "-p", "--", "-", "-x"]
PLAIN_VOCABULARY = KEYS + RESERVED + BUILTINS + OPERATORS + [
    "a", "b", "train_etp", "x1", "_", "a.b", "x.y.z", "a/b", "/usr/bin/x", "./run.sh", "1", "2", "0", "10",
    "99999999999", "tensor_parallel_size", "etp", "a-b", ".", "..", "-1", "-9", "-abc", "-a.b", "--x", "-1x",
]
plain_text = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCXYZ0123456789_./-", min_size=1, max_size=10)
replacement = st.one_of(
    st.sampled_from(PLAIN_VOCABULARY), st.sampled_from(PLAIN_VOCABULARY), plain_text,
    st.sampled_from(["", " ", "a b", "'", '"', "a=b", "(", ")", "$x", "\\", "\n", ";", "{", "}", "[x]", "#"]),
).map(str.encode)

PLAIN_RUN = re.compile(rb"[A-Za-z0-9_./-]+")


@st.composite
def span(draw, source: bytes, runs: list[tuple[int, int]]) -> tuple[int, int]:
    mode = draw(st.integers(0, 9))
    if runs and mode <= 6:
        # Half the time a run that touches something other than a blank: `2>&1`, `f()`, `{fd}>`, `a\\`.
        edgy = [(a, b) for a, b in runs if source[a - 1:a] not in (b"", b" ", b"\n", b"\t")
                or source[b:b + 1] not in (b"", b" ", b"\n", b"\t", b";")]
        start, end = draw(st.sampled_from(edgy if edgy and draw(st.booleans()) else runs))
        shape = draw(st.sampled_from(["whole", "whole", "prefix", "suffix", "inner", "before="]))
        if shape == "whole" or end - start == 1:
            return start, end
        if shape == "prefix":
            return start, draw(st.integers(start + 1, end))
        if shape == "suffix":
            return draw(st.integers(start, end - 1)), end
        if shape == "before=":
            eq = source.find(b"=", start)
            return (start, eq) if eq > start else (start, end)
        a = draw(st.integers(start, end - 1))
        return a, draw(st.integers(a + 1, end))
    if mode <= 8:
        words = [m.span() for m in re.finditer(rb"\S+", source)]
        if words:
            return draw(st.sampled_from(words))
    a = draw(st.integers(0, len(source)))
    return a, min(len(source), a + draw(st.integers(0, 6)))


@st.composite
def edit_lists(draw, source: bytes) -> list[Edit]:
    runs = [m.span() for m in PLAIN_RUN.finditer(source)]
    edits: list[Edit] = []
    for _ in range(draw(st.integers(1, 3))):
        if edits and runs and draw(st.integers(0, 3)) == 0:  # another edit in the same run as the last
            last = edits[-1]
            run = next((r for r in runs if r[0] <= last.start < r[1]), None)
            if run and run[1] > last.end:
                a = draw(st.integers(last.end, run[1] - 1))
                start, end = a, draw(st.integers(a + 1, run[1]))
            else:
                start, end = draw(span(source, runs))
        else:
            start, end = draw(span(source, runs))
        if any(start < e.end and e.start < end or start == end == e.start for e in edits):
            continue  # keep edits non-overlapping, as the engine applies them
        edits.append(Edit(start, end, draw(replacement), "key-rename", "test"))
    return sorted(edits, key=lambda e: (e.start, e.end))


# -- the property ---------------------------------------------------------------------------------

@pytest.mark.skipif(BASH is None, reason="needs bash")
@settings(max_examples=EXAMPLES, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])
@given(data=st.data())
def test_keeping_validity_means_bash_n_agrees(data):
    source = data.draw(scripts(), label="source")
    edits = data.draw(edit_lists(source), label="edits")
    new, _, rejected = apply_edits(source, edits)
    assert not rejected
    keeps = edits_keep_validity(source, edits)
    event(f"edits_keep_validity: {keeps}")
    if not keeps:
        return
    assert not parse(source).root_node.has_error, source
    before, after = bash_ok(source), bash_ok(new)
    event(f"bash -n before/after: {before}/{after}")
    assert before == after, (source, edits, new)


# -- examples -------------------------------------------------------------------------------------

def _at(source: bytes, old: bytes, nth: int = 0) -> int:
    at = -1
    for _ in range(nth + 1):
        at = source.index(old, at + 1)
    return at


def _edit(source: bytes, old: str, new: str, nth: int = 0, offset: int = 0, length: int | None = None) -> Edit:
    start = _at(source, old.encode(), nth) + offset
    return Edit(start, start + (len(old) - offset if length is None else length), new.encode(), "key-rename", "t")


HYDRA = (b"python3 -m verl.trainer.main_ppo \\\n    actor_rollout_ref.rollout.tensor_model_parallel_size=2 \\\n"
         b"    trainer.n_gpus_per_node=${NGPU} 2>&1 | tee log.txt\n")

EXAMPLES_TABLE = [
    # (id, source, [(old, new, nth, offset, length)], expected)
    ("hydra-key-rename", HYDRA, [("tensor_model_parallel_size", "tensor_parallel_size", 0, 0, None)], True),
    ("hydra-whole-key", HYDRA, [("actor_rollout_ref.rollout.tensor_model_parallel_size",
                                 "actor_rollout_ref.rollout.infer_tp", 0, 0, None)], True),
    ("two-words-two-edits", HYDRA, [("rollout", "rollout2", 0, 0, None), ("n_gpus", "gpus", 0, 0, None)], True),
    ("word-to-fi", b"if true; then\n  echo foo\nfi\n", [("foo", "fi", 0, 0, None)], False),
    ("fi-to-word", b"if true; then\n  echo foo\nfi\n", [("fi\n", "fx", 0, 0, 2)], False),
    ("to-declare-before-array", b"f() {\n  local a=(x)\n}\n", [("local", "declare", 0, 0, None)], False),
    ("word-to-declare", b"typeset a=(x)\n", [("typeset", "declare", 0, 0, None)], False),
    ("a-to-a.b-in-array", b"a=(x)\n", [("a", "a.b", 0, 0, None)], False),
    ("a-to-a.b-before-assignment", b"a=1 b=(x)\n", [("a", "a.b", 0, 0, None)], False),
    ("right-before-paren", b"f() { :; }\nf\n", [("f", "g", 0, 0, None)], False),
    ("extglob-word", b'[[ $x == ab@(c|d) ]]\n', [("ab", "zz", 0, 0, None)], False),
    ("heredoc-in-source", b"cat <<EOF\nhello\nEOF\necho foo\n", [("foo", "bar", 0, 0, None)], False),
    ("removal", HYDRA, [("tensor_model_parallel_size", "", 0, 0, None)], False),
    ("replacement-with-space", HYDRA, [("tensor_model_parallel_size", "a b", 0, 0, None)], False),
    ("replacement-with-quote", HYDRA, [("tensor_model_parallel_size", "a'b", 0, 0, None)], False),
    ("two-edits-in-one-word", HYDRA, [("rollout", "r", 0, 0, None), ("tensor", "t", 0, 0, None)], False),
    ("tree-sitter-error", b"if true; then\n  echo foo\n", [("foo", "bar", 0, 0, None)], False),
    ("test-operator", b"[[ $a -eq 1 ]]\n", [("eq", "f", 0, 0, None)], False),
    ("subscript", b"a[x]=1\n", [("x", "y", 0, 0, None)], False),
    ("redirect-target-rename", b"echo x 2>&1 >log\n", [("log", "log2", 0, 0, None)], True),
    # Counterexamples: the first version of the proof said True, and `bash -n` changed its verdict
    # (found by the property test, and by reading bash's parse.y for the token kinds a word's spelling picks).
    ("continuation-joins-while", b"w\\\nhile a; do :; done\n", [("w", "x", 0, 0, None)], False),
    ("continuation-joins-if", b"i\\\nf true; then :; fi\n", [("f", "g", 0, 0, None)], False),
    ("continuation-in-override", b"python3 -m verl.trainer.main_ppo trainer.n_gpus\\\n_per_node=8\n",
     [("n_gpus", "gpus", 0, 0, None)], False),
    ("time-ignore-option", b"time -- { :; }\n", [("--", "ab", 0, 0, None)], False),
    ("time-ignore-after-p", b"time -p -- if true; then :; fi\n", [("--", "ab", 0, 0, None)], False),
    ("fd-number-after-fi", b"if true; then :; fi 2>x\n", [("2", "b", 0, 0, None)], False),
    ("fd-number-after-done", b"for i in 1; do :; done 2>&1 | tee log\n", [("2", "x", 0, 0, None)], False),
    ("fd-number-after-brace", b"{ :; } 2>x\n", [("2", "b", 0, 0, None)], False),
    ("fd-number-after-esac", b"case a in a) ;; esac 2>x\n", [("2", "b", 0, 0, None)], False),
    ("fd-number-overflows", b"case a in a) ;; esac 2>x\n", [("2", "99999999999", 0, 0, None)], False),
    ("named-fd-after-compound", b"time -- if a; then { b; } {fd}>log; fi\n", [("fd", "7x", 0, 0, None)], False),
    ("dash-after-dup", b"if true; then :; fi 2>&1\n", [("1", "-1", 0, 0, None)], False),
    ("dash-after-dup-blank", b"if true; then :; fi >& 1\n", [("1", "-1", 0, 0, None)], False),
    # Not seen to change a verdict (tree-sitter rejects `let a=(x)`), but bash accepts `a=(x)` after them:
    ("let-is-a-parser-word", b"let i=1\n", [("let", "lex", 0, 0, None)], False),
    ("eval-is-a-parser-word", b"eval x\n", [("eval", "echo", 0, 0, None)], False),
    ("alias-is-a-parser-word", b"alias a=b\n", [("alias", "echo", 0, 0, None)], False),
]


@pytest.mark.parametrize("source,changes,expected", [e[1:] for e in EXAMPLES_TABLE],
                         ids=[e[0] for e in EXAMPLES_TABLE])
def test_examples(source, changes, expected):
    edits = [_edit(source, old, new, nth, offset, length) for old, new, nth, offset, length in changes]
    assert edits_keep_validity(source, edits) is expected


VERDICT_CHANGERS = [e for e in EXAMPLES_TABLE if e[0] in {
    "continuation-joins-while", "continuation-joins-if", "time-ignore-option", "time-ignore-after-p",
    "fd-number-after-fi", "fd-number-after-brace", "fd-number-after-esac", "fd-number-overflows",
    "named-fd-after-compound", "dash-after-dup", "dash-after-dup-blank"}]


@pytest.mark.skipif(BASH is None, reason="needs bash")
@pytest.mark.parametrize("source,changes", [e[1:3] for e in VERDICT_CHANGERS], ids=[e[0] for e in VERDICT_CHANGERS])
def test_counterexamples_really_change_the_verdict(source, changes):
    """Each pinned counterexample still parses in tree-sitter and flips `bash -n`: a proof saying True is wrong."""
    edits = [_edit(source, old, new, nth, offset, length) for old, new, nth, offset, length in changes]
    new, _, _ = apply_edits(source, edits)
    assert not parse(source).root_node.has_error
    assert bash_ok(source) != bash_ok(new)


@pytest.mark.skipif(BASH is None, reason="needs bash")
@pytest.mark.parametrize("source,changes", [e[1:3] for e in EXAMPLES_TABLE if e[3]],
                         ids=[e[0] for e in EXAMPLES_TABLE if e[3]])
def test_examples_said_true_really_keep_bash_verdict(source, changes):
    edits = [_edit(source, old, new, nth, offset, length) for old, new, nth, offset, length in changes]
    new, _, _ = apply_edits(source, edits)
    assert bash_ok(source) == bash_ok(new)
