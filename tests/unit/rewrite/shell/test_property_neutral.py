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

The search size is `NEUTRAL_EXAMPLES` (default 800, under 10 s; removals and insertions
`NEUTRAL_REMOVAL_EXAMPLES`, appended overrides `NEUTRAL_APPEND_EXAMPLES`); run it with e.g.
`NEUTRAL_EXAMPLES=20000` to hunt for counterexamples.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import tempfile

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from migrator.edits import Edit
from migrator.fileprocess import apply_edits
from migrator.rewrite.shell import edits_keep_validity, parse
from migrator.rewrite.shell.removal_spans import argument_removal_span
from tests.helpers import HANG_GUARD

BASH = shutil.which("bash")
EXAMPLES = int(os.environ.get("NEUTRAL_EXAMPLES", "800"))


def bash_ok(source: bytes) -> bool:
    # As the engine's validation does: CRLF normalised, the script passed as a file.
    with tempfile.NamedTemporaryFile(prefix="neutral-", suffix=".sh") as script:
        script.write(source.replace(b"\r\n", b"\n"))
        script.flush()
        proc = subprocess.run([BASH, "-n", script.name], check=False, stdin=subprocess.DEVNULL, capture_output=True,
                              env={"PATH": os.environ.get("PATH", ""), "LC_ALL": "C"}, timeout=HANG_GUARD)
    return proc.returncode == 0


def bash_search(examples: int):
    """A hypothesis search whose every example runs `bash -n`: `examples` of them, no deadline, no database."""
    def wrap(test):
        test = given(data=st.data())(test)
        test = settings(max_examples=examples, deadline=None, database=None, suppress_health_check=[
            HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])(test)
        return pytest.mark.skipif(BASH is None, reason="needs bash")(test)
    return wrap


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


OVERRIDES = st.lists(override, min_size=1, max_size=4)
HEAD = st.sampled_from(["python3 -m verl.trainer.main_ppo", "python3 -m verl.trainer.main_ppo --config-name=x",
                        "time -p python3 -m verl.trainer.main_ppo", "srun python3 -m verl.trainer.main_ppo",
                        'HYDRA_FULL_ERROR=1 python3 -m verl.trainer.main_ppo'])
TAIL = st.sampled_from(["", " $@", ' "$@"', " 2>&1 | tee log.txt", " >& log", " 2>&1", " &"])
VALUE = st.sampled_from(VALUES)


@st.composite
def hydra_command(draw) -> str:
    args = draw(OVERRIDES)
    head = draw(HEAD)
    tail = draw(TAIL)
    if draw(st.booleans()):
        return head + " \\\n" + " \\\n".join("    " + a for a in args) + tail
    return head + " " + " ".join(args) + tail


HYDRA_COMMAND = hydra_command()


def simple(draw) -> str:
    n, m, w, v = draw(name), draw(name), draw(word), draw(VALUE)
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
        return odd[draw(_index(len(odd)))]
    return clean[draw(_index(len(clean)))]


@functools.lru_cache(maxsize=None)
def _index(size: int):
    """An index into a list made per draw: as `sampled_from` draws it, without building a strategy each time."""
    return st.integers(0, size - 1)


# Strategies built once (a strategy made per draw cost more than the draw: hypothesis validates each new one).
PICKS = {False: st.sampled_from([0, 0, 0, 1, 1]),
         True: st.sampled_from([0, 0, 0, 1, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14])}
SEPARATORS = st.sampled_from(["\n", "; "])
_REDIRECTIONS = ["", "", " 2>&1", " >log", " 2>/dev/null", " >&2", " | tee x", " 1>&2", " 2>&1 | tee -a log",
                 " 2>>err", " &>log"]
REDIRECTIONS = {False: st.sampled_from(_REDIRECTIONS), True: st.sampled_from(_REDIRECTIONS + [" {fd}>log"])}


@functools.lru_cache(maxsize=None)
def _fragment_lists(depth: int):
    return st.lists(fragment(depth), min_size=1, max_size=3)


@st.composite
def fragment(draw, depth: int = 0) -> str:
    pick = draw(PICKS[depth < 2])
    if pick == 0:
        return simple(draw)
    if pick == 1:
        return draw(HYDRA_COMMAND)
    inner = draw(_fragment_lists(depth + 1))
    body = draw(SEPARATORS).join(inner)
    n, w = draw(name), draw(word)
    redir = draw(REDIRECTIONS[depth == 1])
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


FRAGMENTS = st.lists(fragment(), min_size=1, max_size=4)


@st.composite
def scripts(draw) -> bytes:
    parts = draw(FRAGMENTS)
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

@bash_search(EXAMPLES)
def test_keeping_validity_means_bash_n_agrees(data):
    source = data.draw(scripts(), label="source")
    edits = data.draw(edit_lists(source), label="edits")
    _assert_bash_agrees_when_kept(source, edits, "")


def _assert_bash_agrees_when_kept(source: bytes, edits: list, label: str) -> None:
    """The property: when `edits_keep_validity` says so, bash -n judges the edited script as the original."""
    new, _, rejected = apply_edits(source, edits)
    assert not rejected
    keeps = edits_keep_validity(source, edits)
    event(f"{label}edits_keep_validity: {keeps}")
    if not keeps:
        return
    assert not parse(source).root_node.has_error, source
    before, after = bash_ok(source), bash_ok(new)
    event(f"{label}bash -n before/after: {before}/{after}")
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
    # Counterexamples: a looser proof says True, and `bash -n` changes its verdict (from the property
    # test, and from bash's parse.y: the token kinds a word's spelling picks).
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


# -- removals ---------------------------------------------------------------------------------------
# Edits with an empty replacement, judged by `_removal_keeps_validity`: the shapes the rewriter cuts
# (`argument_removal_span`, the trailing run of `plan_removals`) and random spans, in verl-style
# override lists and in every context where a word is not just a removable argument.

REMOVAL_EXAMPLES = int(os.environ.get("NEUTRAL_REMOVAL_EXAMPLES", str(EXAMPLES)))

REMOVABLE = ["a.b=1", "key=1", "actor_rollout_ref.rollout.x=1", "+a.b=x", "++a.b=2", "~a.b", "a.b=$X", 'a.b="${X}"',
             'a.b="$X/y"', "a.b='x y'", "a.b=[1,2]", "a.b=null", "a.b=x:y@z", "a.b=${X}", "x", "a.b=1e-6",
             "trainer.logger='[console,wandb]'", "a.b=c=d"]
ODD_WORDS = ["fi", "done", "in", "do", "--", "-p", "}", "{", "]]", "[[", "!", "x'", '"a b"', "(", ")", "esac",
             "then", "time", "2>&1", ">x", "#c", "\\", "a\\", "$(x)", "`x`", "@(a|b)", "a=(x)", "{fd}>x", ";;"]
removable = st.one_of(*[st.sampled_from(REMOVABLE)] * 5, st.sampled_from(ODD_WORDS))

# `{o}` is a removable-looking word; `{w}` any word.
HYDRA_TEMPLATES = [
    "python3 -m verl.trainer.main_ppo \\\n    {o} \\\n    {o} \\\n    {o}",
    "python3 -m verl.trainer.main_ppo \\\n    {o} \\\n    {o} $@",
    "python3 -m verl.trainer.main_ppo \\\n  {o} \\\n  {o} 2>&1 | tee log",
    "python3 -m verl.trainer.main_ppo {o} {o} {o}", "python3 -m verl.trainer.main_ppo {o} {o} \\\n    {o}",
    "HYDRA_FULL_ERROR=1 python3 -m verl.trainer.main_ppo \\\n    {o} \\\n    {o} &",
    "python3 -m verl.trainer.main_ppo \\\n    {o} \\\n    {o} \\\n    \"${{EXTRA[@]}}\" \\\n    {o}",
    "python3 -m verl.trainer.main_ppo \\\n    {o} \\\n    {o}     \t\\\n    {o}\n",
    "python3 -m verl.trainer.main_ppo \\\n    {o} \\\n    {o} \\\n    # {o}\n",
    "python3 -m verl.trainer.main_ppo \\\n    {o} \\\n    {o} \\\n    ${{EXTRA:-}} {o}",
    "ARGS=(\n    {o}\n    {o}\n    {o}\n)", "ARGS=(\n    {o} {o}\n    {o}\n)",
]
# A `\` list whose last line is followed by a line that would join the command if that line went.
NEXT_LINES = ["(x)", "x=(a)", "f() {{ :; }}", ";", "&& b", ")", "}}", "fi", "# c", "", "\n(x)", "  ( a )", "a b",
              "[[ a ]]", "{{ a; }}", "2>x", "|| b", "\tx=(a)"]
REMOVAL_TEMPLATES = HYDRA_TEMPLATES * 3 + [
    f"python3 -m verl.trainer.main_ppo \\\n    {{o}} \\\n    {{o}}\n{line}" for line in NEXT_LINES] + [
    "echo $'a \\' {o} b'", 'echo "$(echo ")" {o} ")"', "cmd @(a {o})", "cmd a \\\n{o}\n(x)",
    "cmd 'a\n{o}\n' {o}", "cmd \"a\n{o} b\n\" {o}", "cmd `echo {o}` {o}", "cmd ${{x:-{o} }} {o}",
    "echo 2> {o}", "echo {o} 2> {o} {o}", "cmd >{o} {o}", "cmd 1>> \\\n    {o}", "cmd {{fd}}> {o} {o}",
    "cmd >& {o}", "cmd <& {o} {o}", "cmd &> {o}", "cmd >| {o}", "cmd {o} 2>&1 {o}", "cmd {o} >x {o}",
    "( #c \\\n{o}\n)", "{{ #c \\\n{o}\n}}", "if a; then #c \\\n{o}\nfi", "echo a # {o} \\\n{o}", "cmd {o} # {o}",
    'echo "a {o} b"', "echo 'a {o} b'", "echo \"a {o}' b' c\"'", "echo 'a \\\n{o}\n'", 'echo "a \\\n{o} b"',
    "case {o} in {o}) ;; esac", "case a in\n  {o}|b) cmd {o} ;;\nesac", "case a {o}\nin a) ;; esac",
    "for x in {o} {o}; do cmd {o}; done", "for x {o}\ndo :; done", "select x in {o}; do :; done",
    "[[ {w} == {o} ]]", "[[ -n {o} && {o} ]]", "[[ {w} {o}\n]]", "[ {o} = {o} ]", "test {w} {o}",
    "X=({o} {o})", "X=(\n  {o}\n  {o}\n)", "X+=(a {o})", "declare -a X=({o} {o})", "declare {o} {o}",
    "export {o} {o}", "f() {{\n  local {o} {o}\n}}", "readonly {o}", "f() {{ cmd {o} {o}; }}",
    "function f {{ cmd {o}; }}", "time cmd {o} {o}", "time -p {o} {o}", "time {o}", "! cmd {o}", "coproc cmd {o}",
    "coproc C {{ cmd {o}; }}", "x=$(cmd {o} {o})", "x=`cmd {o} {o}`", "cmd {o} | tee {o}", "cmd {o} && cmd {o}",
    "cmd {o}; cmd {o}", "cmd {o} & cmd {o}", 'cmd {o}"x" {o}', "cmd {o}#c", "cmd {o}\\\n{o}", "cmd a\\\n{o} b",
    "{o} cmd {o}", "A=1 {o} cmd", "A=(x) {o}", "A=1 {o}", "cmd $(( {o} ))", "(( {w} ))", "cmd {o} (x)",
    "f {o} () {{ :; }}", "cmd {o} {w}", "cmd {w} {o} {w}", "eval {o} {o}", "let {o}", "alias {o}",
    "cmd a\\ {o}", "cmd a\\\\\n{o}", "cmd {o} ) ", "cmd ( {o} )", "( {o} )", "( cmd {o} )", "{{ cmd {o}; }}",
    "if cmd {o}; then cmd {o}; fi", "while cmd {o}; do cmd {o}; done", "cmd {o} {o} ;", "cmd {o}\t{o}",
    "cmd $({o})", "cmd <({o} {o})", "cmd {o}=(x)", "{o}() {{ :; }}", "cmd {o}[x] {o}", "cmd x {o}\r{o}",
]


HYDRA_TEMPLATE, REMOVAL_TEMPLATE = st.sampled_from(HYDRA_TEMPLATES), st.sampled_from(REMOVAL_TEMPLATES)
REMOVABLE_WORD, FRAGMENT = st.sampled_from(REMOVABLE), fragment()


@st.composite
def removal_scripts(draw) -> bytes:
    parts = []
    clean = draw(st.booleans())  # only override lists with plain arguments: what the rewriter edits
    for _ in range(draw(st.integers(1, 4))):
        if clean:
            template = draw(HYDRA_TEMPLATE)
            parts.append(re.sub(r"\{o\}", lambda m: draw(REMOVABLE_WORD), template).replace("{{", "{")
                         .replace("}}", "}"))
            continue
        if draw(st.integers(0, 3)) == 0:
            parts.append(draw(FRAGMENT))
            continue
        template = draw(REMOVAL_TEMPLATE)
        filled = re.sub(r"\{([ow])\}", lambda m: draw(removable) if m.group(1) == "o" else draw(word), template)
        parts.append(filled.replace("{{", "{").replace("}}", "}"))
    body = parts[0]
    for part in parts[1:]:
        body += ("\n" if body.endswith("&") else draw(st.sampled_from(["\n", "\n", "; ", " && ", "\n\n"]))) + part
    body += draw(st.sampled_from(["\n", "\n", "", " \\\n"]))
    if draw(st.integers(0, 5)) == 0:
        body = "#!/bin/bash\nset -xeuo pipefail\n" + body
    body = split_runs(draw, body)
    data = body.encode()
    crlf = draw(st.integers(0, 9))
    if crlf == 0:
        data = data.replace(b"\n", b"\r\n")
    elif crlf == 1 and b"\n" in data:  # a lone CR somewhere
        at = draw(st.integers(0, len(data) - 1))
        data = data[:at] + b"\r" + data[at:]
    return data


# Words as the shell splits them (quotes kept together), as whitespace splits them, and finer pieces.
SHELL_WORD = re.compile(rb"(?:'[^']*'|\"(?:[^\"\\\\]|\\\\.)*\"|\\\\[^\n]|[^ \t\r\n'\"\\\\])+")
TOKENS = [SHELL_WORD, SHELL_WORD, SHELL_WORD, re.compile(rb"[^ \t\r\n]+"), re.compile(rb"[^ \t\r\n;&|()<>]+"),
          re.compile(rb"[^ \t\r\n;&|()<>'\"`#]+")]


def _blanks_back(source: bytes, at: int) -> int:
    while at and source[at - 1] in b" \t":
        at -= 1
    return at


def _blanks_forward(source: bytes, at: int) -> int:
    while at < len(source) and source[at] in b" \t":
        at += 1
    return at


@st.composite
def removal_span(draw, source: bytes) -> tuple[int, int]:
    tokens = [m.span() for m in draw(st.sampled_from(TOKENS)).finditer(source)]
    mode = draw(st.integers(0, 13))
    if not tokens or mode == 13:
        a = draw(st.integers(0, len(source)))
        return a, min(len(source), a + draw(st.integers(0, 12)))
    i = draw(st.integers(0, len(tokens) - 1))
    start, end = tokens[i]
    if mode <= 2:  # what the rewriter cuts for one argument
        return argument_removal_span(source, start, end)
    if mode == 3:  # the whole line
        line_start = source.rfind(b"\n", 0, start) + 1
        nl = source.find(b"\n", end)
        return line_start, len(source) if nl == -1 else nl + 1
    if mode == 4:  # the last argument with the ` \` + newline before it
        line_start = source.rfind(b"\n", 0, start) + 1
        m = re.search(rb"[ \t]*\\\r?\n\Z", source[:line_start])
        return (m.start() if m else _blanks_back(source, start)), end
    if mode == 5:  # the word and the blanks after it
        return start, _blanks_forward(source, end)
    if mode == 6:  # blanks before and the word
        return _blanks_back(source, start), end
    if mode == 7:  # several adjacent words, with or without the blanks around them
        j = draw(st.integers(i, min(len(tokens) - 1, i + 3)))
        a, b = start, tokens[j][1]
        if draw(st.booleans()):
            a = _blanks_back(source, a)
        elif draw(st.booleans()):
            b = _blanks_forward(source, b)
        return a, b
    if mode == 8:  # a trailing run: from the end of a kept word to the end of a later one
        if i + 1 < len(tokens):
            return end, tokens[draw(st.integers(i + 1, min(len(tokens) - 1, i + 3)))][1]
        return _blanks_back(source, start), end
    if mode == 9:  # part of a word
        a = draw(st.integers(start, end - 1))
        return a, draw(st.integers(a + 1, end))
    if mode == 10:  # a word with one byte more or less on either side
        a = max(0, start + draw(st.integers(-2, 1)))
        return a, max(a, min(len(source), end + draw(st.integers(-1, 2))))
    if mode == 11:  # just the word
        return start, end
    a = _blanks_back(source, start)  # from a word to a random later point
    return a, min(len(source), end + draw(st.integers(0, 20)))


@st.composite
def removal_edit_lists(draw, source: bytes) -> list[Edit]:
    edits: list[Edit] = []
    for _ in range(draw(st.sampled_from([1, 1, 1, 2, 2, 3]))):
        start, end = draw(removal_span(source))
        if start >= end or any(start < e.end and e.start < end or start == e.end or end == e.start for e in edits):
            continue
        edits.append(Edit(start, end, b"", "key-removal", "test"))
    if draw(st.integers(0, 3)) == 0:  # renames in the same script, mostly of plain runs to plain names
        runs = [m.span() for m in PLAIN_RUN.finditer(source)]
        renames = draw(edit_lists(source)) if draw(st.booleans()) or not runs else [
            Edit(*draw(st.sampled_from(runs)), draw(st.sampled_from([b"a", b"x.y", b"new_key", b"b1"])), "key-rename",
                 "test")]
        for rename in renames:
            if rename.replacement and not any(rename.start < e.end and e.start < rename.end or
                                              rename.start in (e.start, e.end) for e in edits):
                edits.append(rename)
    return sorted(edits, key=lambda e: (e.start, e.end))


@bash_search(REMOVAL_EXAMPLES)
def test_removals_keep_bash_verdict(data):
    source = data.draw(removal_scripts(), label="source")
    edits = data.draw(removal_edit_lists(source), label="edits")
    if not edits:
        return
    renames = any(e.replacement for e in edits)
    _assert_bash_agrees_when_kept(source, edits, f"removals{' and renames' if renames else ''}: ")


def _removal(source: bytes, old: bytes, nth: int = 0) -> Edit:
    start = _at(source, old, nth)
    return Edit(start, start + len(old), b"", "key-removal", "t")


HYDRA_LIST = (b"python3 -m verl.trainer.main_ppo \\\n    data.train_batch_size=256 \\\n"
              b"    actor_rollout_ref.rollout.x=1 \\\n    trainer.logger='[console,wandb]' \\\n"
              b"    trainer.n_gpus_per_node=8\n")

REMOVAL_TABLE = [
    # (id, source, removed bytes, nth occurrence, expected)
    ("hydra-whole-line", HYDRA_LIST, b"    actor_rollout_ref.rollout.x=1 \\\n", 0, True),
    ("hydra-last-argument", HYDRA_LIST, b" \\\n    trainer.n_gpus_per_node=8", 0, True),
    ("hydra-trailing-run", HYDRA_LIST,
     b" \\\n    trainer.logger='[console,wandb]' \\\n    trainer.n_gpus_per_node=8", 0, True),
    ("mid-line-var", b"python3 -m verl.trainer.main_ppo a.b=1 key=$VAR c.d=2\n", b" key=$VAR", 0, True),
    ("mid-line-quoted-var", b'python3 -m verl.trainer.main_ppo a.b=1 key="${VAR}" c.d=2\n', b' key="${VAR}"', 0, True),
    ("first-on-line-with-blanks", b"python3 -m verl.trainer.main_ppo \\\n    key=1 a.b=2\n", b"key=1 ", 0, True),
    ("first-word-of-command", b"key.x=1 a.b=2\n", b"key.x=1 ", 0, False),
    ("empties-subshell", b"( key=1 )\n", b"key=1", 0, False),
    ("case-word", b"case a key=1 in a) ;; esac\n", b" key=1", 0, False),
    ("cond-operand", b"[[ a key=1 ]]\n", b" key=1", 0, False),
    ("glued-by-continuation", b"cmd a\\\nkey=1 b\n", b"key=1", 0, False),
    ("followed-by-hash", b"cmd a key=1#c\n", b" key=1", 0, False),
    # Counterexamples: the first version of the removal proof said True, and `bash -n` changed its verdict.
    ("continuation-in-comment", b"( #c \\\nkey=1\n)\n", b"key=1\n", 0, False),
    ("redirection-target", b"echo 2> key=1\n", b" key=1", 0, False),
    ("redirection-target-last-line", b"echo a 2> \\\n    key=1\n", b" \\\n    key=1", 0, False),
    ("crosses-quotes", b"echo \"a key='x\" b' c\"'\n", b"key='x\" b'", 0, False),
    ("continuation-joins-if", b"i\\\r\nf train_etp; then train_etp=2; fi\r\n", b"\\\r\nf", 0, False),
    ("line-joins-subshell", b"cmd \\\nkey=1\n(x)\n", b"key=1\n", 0, False),
    ("line-joins-array", b"cmd \\\n  a.b=1 \\\n  key=1\nx=(a)\n", b"  a.b=1 \\\n  key=1\n", 0, False),
    ("line-joins-function", b"cmd \\\nkey=1\nf() { :; }\n", b"key=1\n", 0, False),
    # The word before the removal is itself split by a continuation.
    ("previous-word-split-into-if", b"i\\\r\nf train_etp; then train_etp=2; fi\r\n", b" train_etp", 0, False),
    ("next-word-split-by-continuation", b"cmd a key=1 x\\\ny\n", b" key=1", 0, False),
    ("escaped-blank-before-removal", b"python3 -m x \\\r\n    a\\ \\\r\n    a.b=1\r\n\tx=(a)\r\n",
     b" \\\r\n    a.b=1", 0, False),
    # tree-sitter reads `time if ...; then [[ ... ]]` as commands named `time` and `then`.
    # (A broken `[[ ]]` makes bash -n give up on the rest: the `x.y=(z)` error below is then not seen.)
    ("inside-cond-after-time", b"time -- if a; then [[ $x k=1 == y ]]; fi\nx.y=(z)\n", b" k=1", 0, False),
    # Still True: nothing joins the command after the removed line.
    ("line-before-blank-line", b"cmd \\\nkey=1\n\nx=(a)\n", b"key=1\n", 0, True),
]
REMOVAL_VERDICT_CHANGERS = {"inside-cond-after-time", "continuation-in-comment", "redirection-target", "redirection-target-last-line",
                            "crosses-quotes", "continuation-joins-if", "line-joins-subshell", "line-joins-array",
                            "line-joins-function", "previous-word-split-into-if", "escaped-blank-before-removal"}


@pytest.mark.parametrize("source,removed,nth,expected", [e[1:] for e in REMOVAL_TABLE],
                         ids=[e[0] for e in REMOVAL_TABLE])
def test_removal_examples(source, removed, nth, expected):
    assert edits_keep_validity(source, [_removal(source, removed, nth)]) is expected


@pytest.mark.skipif(BASH is None, reason="needs bash")
@pytest.mark.parametrize("source,removed,nth", [e[1:4] for e in REMOVAL_TABLE if e[0] in REMOVAL_VERDICT_CHANGERS],
                         ids=[e[0] for e in REMOVAL_TABLE if e[0] in REMOVAL_VERDICT_CHANGERS])
def test_removal_counterexamples_really_change_the_verdict(source, removed, nth):
    new, _, _ = apply_edits(source, [_removal(source, removed, nth)])
    assert not parse(source).root_node.has_error
    assert bash_ok(source) != bash_ok(new)


@pytest.mark.skipif(BASH is None, reason="needs bash")
@pytest.mark.parametrize("source,removed,nth", [e[1:4] for e in REMOVAL_TABLE if e[4]],
                         ids=[e[0] for e in REMOVAL_TABLE if e[4]])
def test_removal_examples_said_true_really_keep_bash_verdict(source, removed, nth):
    new, _, _ = apply_edits(source, [_removal(source, removed, nth)])
    assert bash_ok(source) == bash_ok(new)


def test_rewriter_spans_of_a_hydra_list_are_judged_neutral():
    """The spans `argument_removal_span` cuts from a `\\` list are the ones the proof lets through."""
    for word in (b"data.train_batch_size=256", b"actor_rollout_ref.rollout.x=1", b"trainer.n_gpus_per_node=8"):
        start = HYDRA_LIST.index(word)
        span = argument_removal_span(HYDRA_LIST, start, start + len(word))
        assert edits_keep_validity(HYDRA_LIST, [Edit(*span, b"", "key-removal", "t")]), word


# -- insertions: a value default appended to a launch ----------------------------------------------

def _as_insertions(source: bytes, removals: list[Edit]) -> tuple[bytes, list[Edit]]:
    """The script without the removed spans, and the insertions that put them back."""
    shorter, _, _ = apply_edits(source, removals)
    insertions, removed = [], 0
    for edit in sorted(removals, key=lambda e: e.start):
        at = edit.start - removed
        insertions.append(Edit(at, at, source[edit.start:edit.end], "value-default", "test"))
        removed += edit.end - edit.start
    return shorter, insertions


@bash_search(REMOVAL_EXAMPLES)
def test_insertions_keep_bash_verdict(data):
    """Every removal the removal search draws, put back into the script without it, is an insertion."""
    source = data.draw(removal_scripts(), label="source")
    removals = [e for e in data.draw(removal_edit_lists(source), label="edits") if not e.replacement]
    if not removals:
        return
    shorter, insertions = _as_insertions(source, removals)
    _assert_bash_agrees_when_kept(shorter, insertions, "insertions: ")


APPENDED = [b" \\\n    actor_rollout_ref.rollout.name=vllm", b" actor_rollout_ref.rollout.name=vllm", b" k=1",
            b" \\\n  x.y='a b'", b" fi", b" then", b" (", b" ;k=1", b" k=1 \\", b"\n k=1", b" \\\nk=$V", b" k=\"$V\""]


# 6,000 examples found nothing once the `time ... then` case was fixed (commit 5b4ac96, 2026-12-03).
APPEND_EXAMPLES = int(os.environ.get("NEUTRAL_APPEND_EXAMPLES", "300"))


@bash_search(APPEND_EXAMPLES)
def test_appended_arguments_keep_bash_verdict(data):
    """Overrides appended where the shell rewriter appends them (after a word), and anywhere, among renames."""
    source = data.draw(scripts(), label="source")
    ends = [m.end() for m in PLAIN_RUN.finditer(source)]
    edits = data.draw(edit_lists(source), label="renames") if data.draw(st.booleans()) else []
    for _ in range(data.draw(st.integers(1, 2))):
        at = data.draw(st.sampled_from(ends) if ends and data.draw(st.integers(0, 3)) else st.integers(0, len(source)))
        if any(e.start < at < e.end or e.start == at for e in edits):
            continue
        edits.append(Edit(at, at, data.draw(st.sampled_from(APPENDED)), "value-default", "test"))
    _assert_bash_agrees_when_kept(source, sorted(edits, key=lambda e: (e.start, e.end)), "appended: ")


def _append(source: bytes, after: bytes, text: bytes) -> Edit:
    at = _at(source, after) + len(after)
    return Edit(at, at, text, "value-default", "t")


@pytest.mark.parametrize("source,after,text,expected", [
    (HYDRA_LIST, b"trainer.n_gpus_per_node=8", b" \\\n    actor_rollout_ref.rollout.name=vllm", True),
    (b"python3 -m verl.trainer.main_ppo a=1 2>&1 | tee log\n", b"a=1", b" b.c=vllm", True),
    (b"python3 -m verl.trainer.main_ppo a=1; echo x\n", b"a=1", b" b.c=vllm", True),
    (b"echo 2> k\n", b"2>", b" k=1", False),  # the redirection's target
    (b"echo 'a b' c\n", b"'a", b" k=1", False),  # inside quotes
    (b"cmd a\\\nb\n", b"a", b" k=1", False),  # before a continuation that glues a word
    (b"x=1\n", b"x=1", b" k=1", False),  # after an assignment alone: it becomes a command's environment
    # Found by the search: tree-sitter reads the `[[ ]]` after `time ... then` as a command's arguments.
    (b"time -- if a; then [[ $x == y ]]; fi\nx.y=(z)\n", b"$x", b" \\\n    k.x=vllm", False),
])
def test_append_examples(source, after, text, expected):
    assert edits_keep_validity(source, [_append(source, after, text)]) is expected
