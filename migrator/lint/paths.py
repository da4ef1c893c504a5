"""VM006 missing verl path: a path under examples/, verl/ or recipe/ (or a `-m verl....` module) that
does not exist in the target release's tree (`mappings/verl/facts/trees/<rev>.paths`).

A move the tables know gives the new place as the hint; one whose new script is not proven to train what
the old one trained is the rewrite's manual step for it, VM103, with what differs. A path or entry point a table entry removed is
the rewrite's finding for it, with its code: VM101 (`path-removal`), VM151 (`entry-point-removal`). Judged only where the shipped tree lists
that part of verl: all of examples/, the .py and .sh files of verl/ and recipe/ (not their YAML), and
not recipe/ at all once it became a git submodule. Paths with `$`, `*` or `{` in them are skipped, and so
is a path that names the user's own file, one their checkout holds and no verl release shipped
(`Script.users_own`): a fork of verl that keeps its scripts under examples/ runs them whatever verl's
tree holds.
"""

from __future__ import annotations

import re

from migrator.codes import finding_code
from migrator.layout import verl_layout
from migrator.lint.facts import extension
from migrator.lint.registry import Problem, check
from migrator.mapping.kinds.path import SCRIPT_MOVE_DIFFERS, not_proven_same
from migrator.pulls import pr_name
from migrator.rewrite.moved_scripts import hint, what_differs

REMOVED_PATH_CODE = finding_code("path-removal", "manual")  # VM101
REMOVED_ENTRY_POINT_CODE = finding_code("entry-point-removal", "manual")  # VM151
MOVE_DIFFERS_CODE = finding_code(SCRIPT_MOVE_DIFFERS, "manual")  # VM103
_TOKEN = re.compile(rb"[A-Za-z0-9_.+/:~-]+")
# What may stand before `examples/...` in a token and still mean verl's checkout: nothing, `./`, `../`,
# `~/`, `/`, and at most one directory (the clone, `$HOME/verl/examples/...`). Deeper paths are someone else's.
_CHECKOUT_PREFIX = re.compile(r"(?:~|\.{1,2})?/?(?:[\w.+-]+/)?")


@check("VM006", "missing-path", also=(REMOVED_PATH_CODE, REMOVED_ENTRY_POINT_CODE, MOVE_DIFFERS_CODE))
def missing_paths(script):
    tree = script.facts.tree(script.rev)
    if tree is None:
        script.notes.append(f"paths not checked: no tree for {script.rev}")
        return
    seen = set()
    stack = [script.tree.root_node]
    while stack:
        node = stack.pop()
        if node.type in ("comment", "heredoc_body"):
            continue
        if node.type in ("word", "string_content", "raw_string") and node.start_byte not in seen:
            seen.add(node.start_byte)
            yield from _paths_in(script, tree, node.start_byte, node.end_byte)
            continue
        stack.extend(node.children)
    roots = verl_layout().roots
    for _node, words in script.commands:
        for i, word in enumerate(words[:-1]):
            if word == "-m" and words[i + 1].split(".")[0] in roots and re.fullmatch(r"\w+(?:\.\w+)+", words[i + 1]):
                yield from _module(script, tree, _node, words[i + 1])


def _paths_in(script, tree, start: int, end: int):
    src = script.src
    if src.find(b"/", start, end) < 0:
        return  # every candidate below holds a `/`: most words of a launch (`a.b.c=1`) hold none
    roots = verl_layout().roots
    for m in _TOKEN.finditer(src, start, end):
        if b"/" not in m.group():
            continue
        token = m.group().decode("ascii")
        if "://" in token or src[m.end():m.end() + 1] in (b"$", b"*", b"{", b"?", b"["):
            continue
        token = token.rstrip(".:")
        candidates = [(i, token[i:]) for i in range(len(token)) if (i == 0 or token[i - 1] == "/")
                      and token[i:].split("/", 1)[0] in roots and "/" in token[i:]
                      and _CHECKOUT_PREFIX.fullmatch(token[:i])]
        if not candidates:
            continue
        if any(tree.exists(c) or script.users_own(c) for _i, c in candidates):
            continue  # verl's, or the user's own file (a fork's script), which runs whatever verl holds
        offset, path = max(candidates, key=lambda ic: (_known_depth(tree, ic[1]), ic[0]))
        if not _judgeable(tree, path):
            continue
        change = script.mappings.path(path)
        if change is not None and not_proven_same(change):  # the rewrite leaves it to a person: its finding
            yield Problem(m.start() + offset, f"`{path}` does not exist in verl {script.rev}: it "
                          f"{what_differs(change)}", hint(change), code=MOVE_DIFFERS_CODE)
            continue
        moved_to = (f"moved to {change.new}; run `verl-migrate --to {script.rev}`" if change and change.new
                    else change.hint if change else None)
        removed = change is not None and not change.new
        yield Problem(m.start() + offset, f"`{path}` does not exist in verl {script.rev}", moved_to,
                      code=REMOVED_PATH_CODE if removed else None)


def _known_depth(tree, path: str) -> int:
    parts = path.split("/")
    depth = 0
    for n in range(1, len(parts)):
        if "/".join(parts[:n]) not in tree.dirs:
            break
        depth = n
    return depth


def _judgeable(tree, path: str) -> bool:
    top = path.split("/", 1)[0]
    if top not in tree.extensions:
        return False  # that part of verl is not in the tree (e.g. recipe/ as a submodule)
    ext = extension(path)
    if not ext:
        return top in verl_layout().lint_judges_directories_under  # a directory: only under these
    return ext in tree.extensions[top]


def _module(script, tree, node, module: str):
    path = module.replace(".", "/")
    if not _judgeable(tree, path + ".py") or tree.exists(path + ".py") or tree.exists(path + "/__init__.py") \
            or script.users_own(path + ".py") or script.users_own(path + "/__init__.py"):
        return  # verl's module, or a fork's own, which `python -m` in its checkout imports
    change = script.mappings.module(module)
    offset = script.src.find(module.encode(), node.start_byte, node.end_byte)
    moved = script.mappings.entry_point(module)
    if moved is not None:  # an entry point that moved: say where, with what the move brings
        prs = ", ".join(pr_name(pr) for pr in moved.prs)
        hint = (f"moved to {moved.new} ({prs}): run verl-migrate, which remaps its overrides"
                + (f" and adds {' '.join(moved.args)}" if moved.args else "")) if moved.new else \
            f"removed ({prs}): {moved.hint}"
        yield Problem(max(offset, node.start_byte), f"entry point `{module}` does not exist in verl {script.rev}",
                      hint, code=None if moved.new else REMOVED_ENTRY_POINT_CODE)
        return
    yield Problem(max(offset, node.start_byte), f"module `{module}` does not exist in verl {script.rev}",
                  (f"moved to {change.new}" if change.new else f"removed: {change.hint}") if change else None)
