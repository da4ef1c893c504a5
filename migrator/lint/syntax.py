"""VM001 syntax: the script does not pass `bash -n`; bash would refuse to run any of it.

Catches a missing `fi`/`done`/`esac`, an unclosed quote or `$(`, a stray `then`. The line is the
one bash reports (for an unclosed block, often the end of the file). Without bash on the machine,
tree-sitter's parse errors are reported instead.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess

from migrator.lint.registry import Problem, check

_BASH_N_ARGS = ("-n", "/dev/stdin")
_BASH_ERROR = re.compile(r"^/dev/stdin: line (\d+): (.*)$")


@check("VM001", "syntax")
def syntax(script):
    bash = shutil.which("bash")
    if bash is None:
        yield from _tree_sitter_errors(script)
        return
    returncode, stderr = bash_n(bash, script.src.replace(b"\r\n", b"\n"))
    if returncode == 0:
        return
    lines = script.src.split(b"\n")
    if len(lines) > 1 and not lines[-1]:
        lines.pop()  # the newline ending the file starts no line
    seen = set()
    for raw in stderr.decode("utf-8", "replace").splitlines():
        m = _BASH_ERROR.match(raw.strip())
        if not m or m.group(2).startswith("`"):  # bash echoes the offending line as a second message
            continue
        line = min(int(m.group(1)), len(lines))
        if line in seen:
            continue
        seen.add(line)
        offset = sum(len(x) + 1 for x in lines[:line - 1])
        indent = len(lines[line - 1]) - len(lines[line - 1].lstrip()) if line - 1 < len(lines) else 0
        yield Problem(offset + indent, f"bash -n: {m.group(2)}", _hint(script, m.group(2)))


def bash_n(bash: str, source: bytes) -> tuple[int, bytes]:
    """`bash -n`'s exit status and messages for `source`, kept between runs (`BASH_N`): a process start
    per script was a quarter of linting verl's own checkout, and most runs lint unchanged scripts. Keyed
    by the bytes and by the bash binary (its path, size and modification time: another bash, another
    verdict)."""
    from migrator.verdict.memo import BASH_N

    try:
        st = os.stat(bash)
        binary = (os.path.realpath(bash), st.st_size, st.st_mtime_ns)
    except OSError:
        binary = None
    env = {"PATH": os.environ.get("PATH", ""), "LC_ALL": "C"}
    key = (hashlib.sha256(source).hexdigest(), binary, _BASH_N_ARGS, env["PATH"])
    table = BASH_N.table if binary is not None else {}
    found = table.get(key)
    if found is None:
        proc = subprocess.run([bash, *_BASH_N_ARGS], input=source, capture_output=True, env=env, timeout=60)
        found = table[key] = (proc.returncode, proc.stderr)
    return found


def _hint(script, message: str) -> str | None:
    if "unexpected end of file" not in message:
        return None
    for missing in _missing_closers(script.tree.root_node):
        opener = missing.parent
        if opener is not None and opener.children:
            word = opener.children[0].type
            return f"the `{word}` on line {opener.start_point[0] + 1} has no `{missing.type}`"
    return "a block is not closed: look for a missing `fi`, `done`, `esac`, `}` or closing quote"


def _missing_closers(root):
    stack = [root]
    while stack:
        node = stack.pop()
        if node.is_missing and node.type in ("fi", "done", "esac", "}", ")"):
            yield node
        stack.extend(node.children)


def _tree_sitter_errors(script):
    stack = [script.tree.root_node]
    while stack:
        node = stack.pop()
        if node.type == "ERROR" or node.is_missing:
            yield Problem(node.start_byte, "parse error (bash not found; tree-sitter's parse)")
            continue
        stack.extend(node.children)
