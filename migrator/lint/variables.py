"""VM005 undefined variable: `$name` or `${name}` that the script never assigns, exports, declares or
reads with a default. Typically a rename left half done (`${train_etp}` when only `actor_etp` exists):
the override silently becomes empty.

Deliberately conservative. Never findings: ALL_CAPS names (they may come from the environment),
lower-case proxy variables, positional and special parameters, names assigned anywhere in the file
(any order: functions), loop and `select` variables, `read`/`getopts`/`mapfile`/`printf -v` targets,
`declare`/`local`/`export`/`readonly` names, names read with a default anywhere (`${x:-d}`, `${x-d}`,
`${x:=d}`, `${x:?msg}`, `${x:+alt}`) or tested with `[[ -v x ]]`/`-z`/`-n`. A script that sources
another file or uses `eval` is not checked (its variables may come from there).
"""

from __future__ import annotations

import difflib
import re

from migrator.lint.registry import Problem, check

ENV_LOWERCASE = frozenset({"http_proxy", "https_proxy", "no_proxy", "ftp_proxy", "all_proxy"})
_DEFAULT_OPERATOR = re.compile(rb"\s*\$\{[A-Za-z_][A-Za-z0-9_]*(?::?[-=?+])")
_TESTED = re.compile(rb"-[vzn][ \t]+[\"']?\$?\{?([A-Za-z_][A-Za-z0-9_]*)")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Commands that assign the names among their arguments.
_ASSIGNING_COMMANDS = frozenset({"read", "getopts", "mapfile", "readarray", "export", "declare", "typeset",
                                 "local", "readonly", "unset"})
_EXPANSIONS = frozenset({"simple_expansion", "expansion"})


@check("VM005", "undefined-variable")
def undefined_variables(script):
    src = script.src
    for _node, words in script.commands:
        if words and words[0] in ("source", ".", "eval"):
            script.notes.append(f"variables not checked: the script runs `{words[0]}`")
            return
    known: set[str] = set()
    uses: list[tuple[str, int]] = []
    stack = [script.tree.root_node]
    while stack:
        node = stack.pop()
        kind = node.type
        if kind in _EXPANSIONS:
            name = _expanded_name(node)
            if name is not None:
                text = src[node.start_byte:node.end_byte]
                if kind == "expansion" and _DEFAULT_OPERATOR.match(text):
                    known.add(name)
                elif not _in_quoted_heredoc(script, node):
                    uses.append((name, node.start_byte + len(text) - len(text.lstrip())))
            stack.extend(c for c in node.children if c.type not in ("variable_name", "subscript"))
            continue
        if kind == "variable_name":
            known.add(src[node.start_byte:node.end_byte].decode("utf-8", "replace"))  # assigned, looped, declared
        elif kind in ("test_command", "command"):
            known.update(m.group(1).decode("ascii") for m in _TESTED.finditer(src, node.start_byte, node.end_byte))
        stack.extend(node.children)
    for _node, words in script.commands:
        if not words:
            continue
        if words[0] in _ASSIGNING_COMMANDS:
            known.update(w.split("=", 1)[0] for w in words[1:] if _IDENT.match(w))
        elif words[0] == "printf" and "-v" in words[:-1]:
            known.add(words[words.index("-v") + 1])
    reported: set[str] = set()
    for name, offset in sorted(uses, key=lambda u: u[1]):
        if name in known or name in reported or name.isupper() or name in ENV_LOWERCASE:
            continue
        if not any(c.islower() for c in name):
            continue  # `_X1` and friends: environment-style
        reported.add(name)
        close = closest_name(name, known)
        yield Problem(offset, f"`${name}` is never assigned in this script (it expands to an empty string)",
                      f"did you mean `${close}`?" if close else None)


def closest_name(name: str, candidates) -> str | None:
    """The most similar candidate (difflib ratio, taken both ways: it is not symmetric), if similar enough."""
    def score(other: str) -> float:
        return max(difflib.SequenceMatcher(None, name, other).ratio(),
                   difflib.SequenceMatcher(None, other, name).ratio())

    best = max(sorted(candidates), key=score, default=None)
    return best if best is not None and score(best) >= 0.6 else None


def _expanded_name(node) -> str | None:
    for child in node.children:
        if child.type == "variable_name":
            return child.text.decode("utf-8", "replace")
        if child.type == "subscript":
            name = child.child_by_field_name("name")
            return name.text.decode("utf-8", "replace") if name is not None else None
        if child.type in ("!", "special_variable_name"):
            return None
    return None


def _in_quoted_heredoc(script, node) -> bool:
    for parent in script.ancestors(node):
        if parent.type == "heredoc_redirect":
            start = next((c for c in parent.children if c.type == "heredoc_start"), None)
            return start is not None and start.text[:1] in (b"'", b'"', b"\\")
    return False
