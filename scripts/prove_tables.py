"""Prove every entry of verl's mapping tables from verl's history and the shipped facts (maintainer tool):
writes mappings/verl/facts/table-proofs.tsv, which tests/tables/test_table_proofs.py reads.

    python scripts/prove_tables.py --repo /path/to/verl/.git [--recipe-repo /path/to/verl-recipe/.git] [--out FILE] [--report]

A table `mappings/verl/<release>.yaml` speaks for the change from the release before it to that release.
For each entry the check of its kind asks the facts (mappings/verl/facts/: config keys of every entry
config, file trees, modules and the names they bind, signatures, registries) and verl's history between
the two releases (`git log A..B`: the files each commit deleted, renamed or added, and the config keys on
the lines it deleted or added):

- the old thing (key, script, module, symbol, parameter, value, entry point) existed at the release
  before and is gone at the release (or the entry says it is deprecated, or it is a no-action entry);
- what the entry sends users to exists at the release: a renamed key is declared (and not one verl
  ignores, components.yaml), a moved script or module is in the tree, a moved module binds every public
  name the old one defined (or a symbol entry of the table speaks for it), a value is registered; a path
  a hint names exists there;
- the change is in that range of history, and the entry's pull request is the one that made it: a
  commit of the range deleted or renamed the file, or deleted the old key's line (for a rename, or added
  the new key's line); the entry's `commit:` is that PR's commit.

An entry that passes every check is `proven`; otherwise `unproven`, with the evidence of each failed
check, and the table entry must carry a `why:` a reviewer can check against that evidence. Entries about
verl-recipe (`repo: verl-recipe`) are checked against that repository's history only with
`--recipe-repo`. `--report` prints the unproven entries without writing.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from facts_header import FACTS, ROOT, VERL_TABLES, all_releases, commit_of, git, header, pr_of, releases, revision  # noqa: E402

sys.path.insert(0, str(ROOT))
from migrator.mapping.facts import OPEN_TYPES, ReleaseFacts  # noqa: E402
from migrator.mapping.modulefacts import expand_runs  # noqa: E402

OUT = FACTS / "table-proofs.tsv"
# A config key on a YAML line (`  clip_grad: 1.0`, `- name: x`) or a dataclass field (`clip_grad: float = 1.0`).
KEY_LINE = re.compile(r"^\s*(?:-\s+)?([A-Za-z_][\w-]*)\s*:(?!:)")
HINT_PATH = re.compile(r"(?<![\w/.-])((?:examples|recipe)/[\w./-]+\.(?:sh|py|yaml))")
SCOPES = yaml.safe_load((VERL_TABLES / "scopes.yaml").read_text(encoding="utf-8"))["families"]
COMPONENTS = yaml.safe_load((FACTS / "components.yaml").read_text(encoding="utf-8"))


def git_outcome(repo: str, *args: str) -> subprocess.CompletedProcess:
    """A git command that may fail (a path the revision lacks): its outcome, not an exception."""
    return subprocess.run(["git", f"--git-dir={repo}", *args], capture_output=True, text=True, errors="replace")


# ---------------------------------------------------------------- history of one release pair
@dataclass
class PairHistory:
    """What verl's commits between two releases did: per path the (commit, status, other path) of each
    delete, rename or add, and every commit that touched it; per config key name the commits whose diff
    deleted or added a line naming it."""

    pr: dict[str, int | None] = field(default_factory=dict)  # commit -> PR
    files: dict[str, list[tuple[str, str, str]]] = field(default_factory=lambda: defaultdict(list))
    deleted_keys: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    added_keys: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    touched: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))  # path -> commits

    def commits_of(self, pr: int) -> set[str]:
        return {c for c, p in self.pr.items() if p == pr}

    def prs(self, commits) -> set[int]:
        return {self.pr[c] for c in commits if self.pr.get(c)}


def pair_history(repo: str, old: str, new: str) -> PairHistory:
    span = f"{revision(old)}..{revision(new)}"
    history = PairHistory()
    commit = ""
    for line in git(repo, "log", "-M", "--name-status", "--format=@%h\t%s", span, "--",
                    "examples", "recipe", "verl").splitlines():
        if line.startswith("@"):
            commit, _, subject = line[1:].partition("\t")
            history.pr[commit] = pr_of(subject)
        elif line and line[0] in "ADR":
            status, *paths = line.split("\t")
            if status[0] == "R":
                history.files[paths[0]].append((commit, "R", paths[1]))
                history.files[paths[1]].append((commit, "A", paths[0]))
            else:
                history.files[paths[0]].append((commit, status[0], ""))
    for line in git(repo, "log", "-p", "--unified=0", "--no-renames", "--format=@%h\t%s", span, "--",
                    ":(glob)verl/**/config/**", ":(glob)verl/**/config.py", ":(glob)recipe/**/config/**",
                    ":(glob)verl/**/*config*.py").splitlines():
        if line.startswith("@") and "\t" in line and not line.startswith("@@"):
            commit, _, subject = line[1:].partition("\t")
            history.pr.setdefault(commit, pr_of(subject))
        elif line[:1] in "+-" and not line.startswith(("+++", "---")):
            m = KEY_LINE.match(line[1:])
            if m:
                (history.deleted_keys if line[0] == "-" else history.added_keys)[m.group(1)].add(commit)
    for line in git(repo, "log", "--name-only", "--format=@%h", span, "--", "verl", "recipe").splitlines():
        if line.startswith("@"):
            commit = line[1:]
        elif line:
            history.touched[line].add(commit)
    return history


# ---------------------------------------------------------------- the facts
@dataclass
class Context:
    facts: ReleaseFacts
    order: tuple[str, ...]
    before: str
    release: str
    history: PairHistory | None  # None: an entry of another repository, whose history is not given
    package_moves: dict[str, str] = field(default_factory=dict)  # module-move old -> new of the table
    repo: str = ""
    recipe_repo: str | None = None
    symbols: frozenset[str] = frozenset()  # the table's symbol entries' old names (module:name)

    def configs(self, entry: dict) -> list[str]:
        """The entry configs a key entry speaks of (scope: families or config names; else the PPO family)."""
        names = []
        for scope in entry.get("scope") or ["ppo"]:
            names += SCOPES.get(scope, [scope])
        return names

    def declared(self, release: str, key: str, configs: list[str]) -> bool:
        """Is `key` (or, for `a.b.*`, some key under a.b) declared in one of `configs` at `release`, or under
        a node that takes any sub-key?"""
        for config in configs:
            types = self.facts.entry_config_key_types(release, config)
            if key.endswith(".*"):
                if any(k.startswith(key[:-1]) for k in types):
                    return True
                continue
            if key in types:
                return True
            parts = key.split(".")
            if any(types.get(".".join(parts[:n])) in OPEN_TYPES for n in range(1, len(parts))):
                return True
        return False

    def in_tree(self, release: str, path: str) -> bool:
        return path in self.facts.paths(release)

    def tree_speaks(self, release: str, path: str) -> bool:
        """Do the tree facts list `path`'s root at `release`? (recipe/ is a submodule from v0.7.1.)"""
        root = path.split("/", 1)[0] + "/"
        return any(p.startswith(root) for p in self.facts.paths(release))

    def module_at(self, release: str, module: str) -> bool:
        return self.facts.module_shipped(module, release, self.order)

    def names_at(self, release: str, module: str):
        by_release = self.facts.module_names(self.order)
        return by_release[release].get(module) if release in by_release else None


@dataclass
class Proof:
    failed: list[str] = field(default_factory=list)
    evidence: list[str] = field(default_factory=list)

    def need(self, ok: bool, what: str) -> bool:
        if not ok:
            self.failed.append(what)
        return ok


def _parts(key: str) -> list[str]:
    return [p for p in key.split(".") if p not in ("*", "_target_")]


def leaf(key: str) -> str:
    return (_parts(key) or [key])[-1]


def pickaxe(ctx: Context, words, roots=("verl", "recipe", "examples")) -> set[str]:
    """Commits of the range that added or deleted a line naming a word (`git log -G`): where no
    config line shows a change (a key still declared but set or ignored by code, a variable of a script)."""
    found: set[str] = set()
    if not ctx.repo:
        return found
    for word in sorted(words):
        found |= set(git(ctx.repo, "log", "--format=%h", "-G", rf"\b{re.escape(word)}\b", f"{revision(ctx.before)}..{revision(ctx.release)}",
                         "--", *roots).split())
    return found


def check_pr(entry: dict, ctx: Context, proof: Proof, commits: set[str], what: str, words=()) -> None:
    """The entry's PR is one whose commit in the range made the change (`commits`; failing that, one that
    changed how often `words` occur in verl's code); its `commit:` is that PR's."""
    if ctx.history is None:
        prove_recipe_pr(entry, ctx, proof)
        return
    pr = int(entry["pr"])
    if words and pr not in ctx.history.prs(commits) and ctx.history.commits_of(pr):
        commits = commits | pickaxe(ctx, words)
        what += " (or lines naming them, git log -G)"
    made_by = sorted(ctx.history.prs(commits))
    proof.evidence.append(f"{what}: " + (",".join(f"#{p}" for p in made_by) or "no commit of the range"))
    own = ctx.history.commits_of(pr)
    proof.need(bool(own), f"#{pr} is not in {ctx.before}..{ctx.release}")
    if own:
        proof.need(pr in made_by, f"#{pr} did not make it")
    if "commit" in entry and own:
        proof.need(any(str(entry["commit"]).startswith(c) or c.startswith(str(entry["commit"])) for c in own),
                   f"commit {entry['commit']} is not #{pr}'s ({','.join(sorted(own))})")


def prove_recipe_pr(entry: dict, ctx: Context, proof: Proof) -> None:
    """An entry about verl-recipe: its commit is its PR's in that repository and changed the old path."""
    if not ctx.recipe_repo:
        proof.evidence.append("history of verl-recipe not given (--recipe-repo)")
        proof.failed.append("pr not checked")
        return
    commit = str(entry.get("commit", ""))
    done = git_outcome(ctx.recipe_repo, "show", "--name-status", "-M", "--format=%s", commit)
    if not proof.need(done.returncode == 0 and commit != "", f"commit {commit} not in verl-recipe"):
        return
    subject, *changes = done.stdout.splitlines()
    proof.need(pr_of(subject) == int(entry["pr"]), f"verl-recipe commit {commit} is #{pr_of(subject)}, not #{entry['pr']}")
    # verl-recipe's root is verl's recipe/: `recipe/gkd/config` is its gkd/config, `recipe.gkd.main_gkd` its gkd/main_gkd.py
    if entry["kind"].startswith("entry-point"):
        old = entry["old"].removeprefix("recipe.").replace(".", "/") + ".py"
    else:
        old = entry["old"].removeprefix("recipe/")
    moved = [c for c in changes if c and c[0] in "DR" and c.split("\t")[1].startswith(old)]
    proof.need(bool(moved), f"verl-recipe commit {commit} deleted or renamed nothing under {old}")
    proof.evidence.append(f"verl-recipe {commit}: {len(moved)} files of {old} deleted or renamed")


def check_hint_paths(entry: dict, ctx: Context, proof: Proof) -> None:
    for named in HINT_PATH.findall(entry.get("hint") or ""):
        if named != entry.get("old") and ctx.tree_speaks(ctx.release, named):
            proof.need(ctx.in_tree(ctx.release, named), f"hint names {named}, absent at {ctx.release}")


def file_changes(ctx: Context, path: str, statuses: str) -> set[str]:
    if ctx.history is None:
        return set()
    return {c for c, s, _ in ctx.history.files.get(path, ()) if s in statuses}


def module_files(module: str) -> list[str]:
    stem = module.replace(".", "/")
    return [stem + ".py", stem + "/__init__.py"]


def module_changes(ctx: Context, module: str, statuses: str) -> set[str]:
    """Commits that deleted (or renamed away) a file of the module or package, also under the name a
    package move of the same release gave it (recipe.fully_async_policy -> verl.experimental..., #4795:
    a later PR of the release removed a submodule under the new name)."""
    if ctx.history is None:
        return set()
    stems = {module.replace(".", "/")}
    for old, new in ctx.package_moves.items():
        if module.startswith(old + "."):
            stems.add((new + module[len(old):]).replace(".", "/"))
    return {c for path, events in ctx.history.files.items()
            if any(path == stem + ".py" or path.startswith(stem + "/") for stem in stems)
            for c, s, _ in events if s in statuses}


# ---------------------------------------------------------------- one proof per entry kind
def prove_key(entry: dict, ctx: Context, proof: Proof) -> None:
    old, configs = entry["old"], ctx.configs(entry)
    proof.need(ctx.declared(ctx.before, old, configs) or any(
        ctx.declared(r, old, configs) for r in ctx.order[:ctx.order.index(ctx.before)]),
        f"{old} declared at no release up to {ctx.before}")
    unread = entry["kind"] == "key-removal" and _ignored(ctx.release, old)  # declared still, read by nothing
    deprecated = unread or "deprecat" in (entry.get("note", "") + entry.get("hint", "")).lower()
    if entry["kind"] != "key-no-action" and not deprecated:
        proof.need(not ctx.declared(ctx.release, old, configs) or old.endswith(".*")
                   and not _all_under_declared(ctx, old, configs), f"{old} still declared at {ctx.release}")
    names = {leaf(old)}
    commits = ctx.history.deleted_keys.get(leaf(old), set()) if ctx.history else set()
    if entry["kind"] == "key-rename":
        new = entry["new"]
        proof.need(ctx.declared(ctx.release, new, configs), f"{new} not declared at {ctx.release}")
        proof.need(not _ignored(ctx.release, new), f"{new} is declared but nothing reads it at {ctx.release}")
        # `ray_init.x` -> `ray_kwargs.x`: the line that changed names the part that differs
        old_parts, new_parts = set(_parts(old)), set(_parts(new))
        names = {leaf(old), leaf(new)} | (old_parts ^ new_parts)
        if ctx.history:
            for name in old_parts - new_parts | {leaf(old)}:
                commits = commits | ctx.history.deleted_keys.get(name, set())
            for name in new_parts - old_parts | {leaf(new)}:
                commits = commits | ctx.history.added_keys.get(name, set())
    elif unread and ctx.declared(ctx.release, old, configs):
        proof.evidence.append(f"declared at {ctx.release}, read by nothing (components.yaml ignored)")
    check_pr(entry, ctx, proof, commits, f"lines of {', '.join(sorted(names))} changed by",
             words=names - {"*"} if ctx.history else ())


def _all_under_declared(ctx: Context, pattern: str, configs: list[str]) -> bool:
    """`a.*` is still declared at the release only if every key under a. at the release before still is."""
    prefix = pattern[:-1]
    before = {k for c in configs for k in ctx.facts.entry_config_keys(ctx.before, c) if k.startswith(prefix)}
    now = {k for c in configs for k in ctx.facts.entry_config_keys(ctx.release, c) if k.startswith(prefix)}
    return bool(before) and before <= now


def _ignored(release: str, key: str) -> bool:
    return any(i["key"] == key and release in i.get("releases", ()) for i in COMPONENTS.get("ignored") or ())


def prove_path(entry: dict, ctx: Context, proof: Proof) -> None:
    old = entry["old"]
    if ctx.tree_speaks(ctx.before, old):
        proof.need(ctx.in_tree(ctx.before, old) or bool(file_changes(ctx, old, "A")),
                   f"{old} in neither {ctx.before}'s tree nor added in the range")
    if ctx.tree_speaks(ctx.release, old):
        proof.need(not ctx.in_tree(ctx.release, old), f"{old} still in {ctx.release}'s tree")
    gone = file_changes(ctx, old, "DR")
    if entry["kind"] == "path-move":
        new = entry["new"]
        proof.need(ctx.in_tree(ctx.release, new) or not ctx.tree_speaks(ctx.release, new),
                   f"{new} absent at {ctx.release}")
        renamed = {c for c, s, other in (ctx.history.files.get(old, ()) if ctx.history else ()) if s == "R" and other == new}
        added = file_changes(ctx, new, "A")
        if renamed:
            proof.evidence.append("renamed onto it")
        elif gone & added:
            proof.evidence.append("deleted and added by one commit")
        elif ctx.facts.script_move(ctx.release, old, new) is not None:
            proof.evidence.append("no rename in the history; script-moves.yaml proves the new script trains the same")
        elif ctx.in_tree(ctx.before, new):
            proof.evidence.append(f"{new} already in {ctx.before}")
            proof.failed.append("a replacement, not a move: the history holds no rename")
        else:
            proof.failed.append("the history holds no rename onto it")
        gone |= added
    check_hint_paths(entry, ctx, proof)
    check_pr(entry, ctx, proof, gone, "deleted or renamed by")


def prove_module(entry: dict, ctx: Context, proof: Proof) -> None:
    old = entry["old"]
    proof.need(ctx.module_at(ctx.before, old), f"{old} not shipped at {ctx.before}")
    if entry["kind"] != "module-no-action":
        proof.need(not ctx.module_at(ctx.release, old), f"{old} still shipped at {ctx.release}")
    gone = module_changes(ctx, old, "DR")
    if entry["kind"] == "module-move":
        new = entry["new"]
        proof.need(ctx.module_at(ctx.release, new), f"{new} not shipped at {ctx.release}")
        before, after = ctx.names_at(ctx.before, old), ctx.names_at(ctx.release, new)
        if before is not None and after is not None:
            # what the module defined (its API), not the helpers it imported from elsewhere in verl
            lost = sorted(n for n in before.defined if not n.startswith("_") and not after.binds(n)
                          and f"{old}:{n}" not in ctx.symbols)
            proof.need(not lost, f"{new} lacks {', '.join(lost[:5])}{' ...' if len(lost) > 5 else ''}")
        gone |= module_changes(ctx, new, "A")
    check_hint_paths(entry, ctx, proof)
    check_pr(entry, ctx, proof, gone, "files deleted or renamed by")


def _symbol(ctx: Context, release: str, spec: str) -> bool:
    module, _, name = spec.partition(":")
    names = ctx.names_at(release, module)
    return names is not None and names.binds(name.partition(".")[0])


def prove_symbol(entry: dict, ctx: Context, proof: Proof) -> None:
    old = entry["old"]
    proof.need(_symbol(ctx, ctx.before, old), f"{old} not bound at {ctx.before}")
    proof.need(not _symbol(ctx, ctx.release, old), f"{old} still bound at {ctx.release}")
    if "new" in entry:
        new = entry["new"] if ":" in entry["new"] else old.partition(":")[0] + ":" + entry["new"]
        proof.need(_symbol(ctx, ctx.release, new), f"{new} not bound at {ctx.release}")
    module = old.partition(":")[0]
    made = module_changes(ctx, module, "DR") | _touched(ctx, module)
    if "new" in entry and ":" in entry["new"]:
        made |= module_changes(ctx, entry["new"].partition(":")[0], "A") | _touched(ctx, entry["new"].partition(":")[0])
    check_pr(entry, ctx, proof, made, "module touched by")


def _touched(ctx: Context, module: str) -> set[str]:
    """Commits of the range that touched the module's files (a symbol moves inside unchanged file names)."""
    if ctx.history is None:
        return set()
    return set().union(*(ctx.history.touched.get(path, ()) for path in module_files(module)))


def _params(ctx: Context, release: str, spec: str) -> list[str] | None:
    for run in ctx.facts.api_shapes.get(spec) or ():
        if release in expand_runs(run.get("releases", ""), list(ctx.order)):
            shape = run.get("function") or run.get("init") or run.get("class") or ""
            return [p.rstrip("=").lstrip("*") for p in shape.strip("()").split(",") if p]
    module, _, name = spec.partition(":")
    names = ctx.names_at(release, module)
    if names is not None and name in names.defined and names.defined[name] is not None:
        return [p.rstrip("=").lstrip("*") for p in names.defined[name]]
    return None


def prove_parameter(entry: dict, ctx: Context, proof: Proof) -> None:
    function = entry["function"]
    before, after = _params(ctx, ctx.before, function), _params(ctx, ctx.release, function)
    if (before is None or after is None) and ctx.history:
        # the facts keep no signature (a private function, a method): the PR's own diff must show the def
        # line losing or gaining the parameter
        param = entry.get("param") or entry["old"]
        if proof.need(_def_changed(ctx, int(entry["pr"]), function.rpartition(".")[2].rpartition(":")[2], param),
                      f"no signature facts, and no `def` line of #{entry['pr']} gains or loses {param}"):
            proof.evidence.append("the PR's diff changes the def line")
            check_pr(entry, ctx, proof, ctx.history.commits_of(int(entry["pr"])), "the def line changed by")
            return
    elif before is not None and after is not None:
        if entry["kind"] == "keyword-rename":
            proof.need(entry["old"] in before and entry["old"] not in after,
                       f"{entry['old']} not a parameter at {ctx.before} only")
            proof.need(entry["new"] in after, f"{entry['new']} not a parameter at {ctx.release}")
        else:
            proof.need(before != after or entry["param"] in after,
                       f"{function}'s parameters are the same at both releases")
    module = function.partition(":")[0]
    check_pr(entry, ctx, proof, _touched(ctx, module), "module touched by")


def _def_changed(ctx: Context, pr: int, name: str, param: str) -> bool:
    word = re.compile(rf"\b{re.escape(param)}\b")
    for commit in ctx.history.commits_of(pr):
        lines = git(ctx.repo, "show", "--format=", "--unified=0", commit, "--", "verl", "recipe").splitlines()
        defs = [line for line in lines if line[:1] in "+-" and re.search(rf"\bdef {re.escape(name)}\(", line)]
        removed = [line for line in defs if line[0] == "-"]
        added = [line for line in defs if line[0] == "+"]
        if removed and added and any(word.search(x) for x in removed) != any(word.search(x) for x in added):
            return True
    return False


def _registered(release: str, key: str) -> set[str] | None:
    for registry in COMPONENTS.get("registries") or ():
        if registry["key"] == key and registry["release"] == release:
            return set(registry["names"])
    return None


def count_in(ctx: Context, release: str, pattern: str, paths: list[str]) -> int:
    """How many lines of `paths` at `release` hold the word `pattern` (git grep -w -F)."""
    if not ctx.repo:
        return 0
    done = git_outcome(ctx.repo, "grep", "-c", "-w", "-F", "-e", pattern, revision(release), "--", *paths)
    return sum(int(line.rpartition(":")[2]) for line in done.stdout.splitlines() if line.rpartition(":")[2].isdigit())


def prove_value(entry: dict, ctx: Context, proof: Proof) -> None:
    """A value of a key: the registry facts where verl registers the key's names; else the words of the file
    the entry names (the code that reads or checks the value) at both releases."""
    key = entry.get("key") or entry.get("old-key")
    before, after = _registered(ctx.before, key), _registered(ctx.release, key)
    kind, source = entry["kind"], entry.get("file")
    if before is not None and after is not None and kind in ("value-rename", "value-removal"):
        proof.evidence.append("registry facts")
        proof.need(entry["old"] in before and entry["old"] not in after, f"{entry['old']} not dropped by {ctx.release}")
        if "new" in entry:
            proof.need(entry["new"] in after, f"{entry['new']} not registered at {ctx.release}")
    elif source and kind in ("value-rename", "value-removal") and isinstance(entry.get("old"), str):
        old = entry["old"].rpartition(".")[2] if "." in entry["old"] and " " not in entry["old"] else entry["old"]
        n_before, n_after = count_in(ctx, ctx.before, old, [source]), count_in(ctx, ctx.release, old, [source])
        proof.evidence.append(f"{old} in {source}: {n_before} lines at {ctx.before}, {n_after} at {ctx.release}")
        proof.need(n_before > n_after, f"{source} names {old} no less at {ctx.release}")
        if isinstance(entry.get("new"), str) and kind == "value-rename":
            new = entry["new"].rpartition(".")[2] if "." in entry["new"] and " " not in entry["new"] else entry["new"]
            proof.need(count_in(ctx, ctx.release, new, [source]) > 0 or not _file_at(ctx, ctx.release, source),
                       f"{source} does not name {new} at {ctx.release}")
    elif source and "old-pattern" in entry:
        # a pattern of old values: the file that read or checked them matches it less at the release (or went)
        pattern = re.compile(entry["old-pattern"].removeprefix("(.*/)?"))
        n_before, n_after = (len(pattern.findall(_show(ctx, r, source))) for r in (ctx.before, ctx.release))
        renamed = ctx.history and {p for p, events in ctx.history.files.items() if any(
            s == "R" and other == source for _, s, other in events)}
        if renamed:  # a pattern of paths (`.../math\.py`): the old file's own name matches it too
            n_before = max(n_before, *(len(pattern.findall(_show(ctx, ctx.before, p) + p)) for p in renamed))
        proof.evidence.append(f"{source} matches the old pattern on {n_before} places at {ctx.before}"
                              + (f" (renamed from {', '.join(sorted(renamed))})" if renamed else "")
                              + f", {n_after} at {ctx.release}" + ("" if _file_at(ctx, ctx.release, source) else " (gone)"))
        went = _file_at(ctx, ctx.before, source) and not _file_at(ctx, ctx.release, source)
        proof.need(n_before > n_after or went, f"{source} matches the old pattern no less at {ctx.release}")
    elif source and kind == "value-default":
        line = f"{leaf(key)}: {entry['new-default']}"
        proof.need(_file_at(ctx, ctx.release, source) and line in _show(ctx, ctx.release, source)
                   and f"{leaf(key)}: {entry['old-default']}" not in _show(ctx, ctx.release, source),
                   f"{source} at {ctx.release} lacks `{line}`")
    elif source and kind == "value-map":
        new_leaf = leaf(entry["new-key"])
        proof.need(count_in(ctx, ctx.release, new_leaf, [source]) > count_in(ctx, ctx.before, new_leaf, [source])
                   or count_in(ctx, ctx.before, leaf(key), [source]) > count_in(ctx, ctx.release, leaf(key), [source]),
                   f"{source} names {leaf(key)} and {new_leaf} alike at both releases")
    else:
        proof.failed.append(f"no registry facts for {key} and no file to read")
    touched = set(ctx.history.touched.get(source or "", ())) | file_changes(ctx, source or "", "ADR") if ctx.history else set()
    check_pr(entry, ctx, proof, touched, f"{source or '?'} touched by")


def _show(ctx: Context, release: str, path: str) -> str:
    done = git_outcome(ctx.repo, "show", f"{revision(release)}:{path}")
    return done.stdout if done.returncode == 0 else ""


def _file_at(ctx: Context, release: str, path: str) -> bool:
    return bool(ctx.repo) and git_outcome(ctx.repo, "cat-file", "-e", f"{revision(release)}:{path}").returncode == 0


CONFIG_TREES = ["verl/trainer/config", "verl/experimental", "recipe"]


def prove_target(entry: dict, ctx: Context, proof: Proof) -> None:
    """A `_target_` value: the config trees name the old class less at the release and the new one more."""
    old, new = (f"_target_: {entry[f]}" for f in ("old", "new"))
    counts = [count_in(ctx, r, text, CONFIG_TREES) for text in (old, new) for r in (ctx.before, ctx.release)]
    proof.evidence.append(f"`{old}` {counts[0]} -> {counts[1]} lines, `{new}` {counts[2]} -> {counts[3]}")
    proof.need(counts[0] > counts[1], f"the configs name {entry['old']} no less at {ctx.release}")
    proof.need(counts[3] > counts[2], f"the configs name {entry['new']} no more at {ctx.release}")
    module, _, name = entry["new"].rpartition(".")
    names = ctx.names_at(ctx.release, module)
    proof.need(names is None or names.binds(name), f"{entry['new']} not bound at {ctx.release}")
    config_commits = set()
    if ctx.history:
        config_commits = {c for path, commits in ctx.history.touched.items()
                          if path.endswith(".yaml") and path.startswith(tuple(CONFIG_TREES)) for c in commits}
    check_pr(entry, ctx, proof, config_commits, "a config touched by")


def prove_entry_point(entry: dict, ctx: Context, proof: Proof) -> None:
    before, after = ctx.facts.entry_configs(ctx.before), ctx.facts.entry_configs(ctx.release)
    old = entry["old"]
    if entry["kind"] in ("entry-point-move", "entry-point-removal"):
        proof.need(old in before, f"{old} no entry point at {ctx.before}")
        if entry["kind"] == "entry-point-removal":
            proof.need(old not in after, f"{old} still an entry point at {ctx.release}")
        else:
            proof.need(entry["new"] in after, f"{entry['new']} no entry point at {ctx.release}")
        gone = module_changes(ctx, old, "DR")
    elif entry["kind"] == "config-name-move":
        # the old config stays (deprecated); the new one with the entry's arguments declares their keys
        for arg in entry.get("args") or ():
            key = arg.partition("=")[0].lstrip("+")
            proof.need(ctx.declared(ctx.release, key, [entry["new"]]) or key in _groups(ctx, ctx.release, entry["new"]),
                       f"{entry['new']} at {ctx.release} has no {key}")
        proof.need(bool(ctx.facts.entry_config_keys(ctx.release, entry["new"])), f"no config {entry['new']} at {ctx.release}")
        gone = set().union(*(ctx.history.touched.get(f"verl/trainer/config/{n}.yaml", set()) for n in (entry["old"], entry["new"]))) \
            if ctx.history else set()
        check_pr(entry, ctx, proof, gone, "the configs touched by")
        return
    elif entry["kind"] == "key-scope":
        configs = [c for scope in entry.get("applies-to") or entry.get("not-in") or () for c in SCOPES.get(scope, [scope])]
        if "applies-to" in entry:
            proof.need(ctx.declared(ctx.before, old, configs), f"{old} not declared in {configs} at {ctx.before}")
            proof.need(not ctx.declared(ctx.release, old, configs), f"{old} still declared in {configs} at {ctx.release}")
        else:  # what did not change: the configs still declare the key; no commit of the range made that
            if proof.need(ctx.declared(ctx.release, old, configs), f"{old} not declared in {configs} at {ctx.release}"):
                proof.evidence.append(f"still declared in {', '.join(configs)} at {ctx.release}")
            return
        check_pr(entry, ctx, proof, set(), "changed by", words={leaf(old), *_parts(old)[:1]})
        return
    else:  # config-dir-move, config-dir-removal
        gone = set()
        if ctx.history:
            gone = {c for path, events in ctx.history.files.items() if path.startswith(old + "/")
                    for c, s, _ in events if s in "DR"}
    check_hint_paths(entry, ctx, proof)
    check_pr(entry, ctx, proof, gone, "deleted or renamed by")


def _groups(ctx: Context, release: str, config: str) -> set[str]:
    """The config groups a config's defaults choose (`model_engine`): the first part of its keys is not one."""
    text = _show(ctx, release, f"verl/trainer/config/{config}.yaml")
    return set(re.findall(r"^\s*-\s*(?:override\s+)?([\w/]+?)(?:@[\w.]+)?\s*:", text, re.M))


def prove_script_word(entry: dict, ctx: Context, proof: Proof) -> None:
    """env-* and var-rename: verl's own scripts name the old variable less at the release (and the new
    one more), and the entry's PR is one that changed how often they do."""
    counts = {w: (count_in(ctx, ctx.before, w, ["examples", "recipe"]), count_in(ctx, ctx.release, w, ["examples", "recipe"]))
              for w in filter(None, (entry["old"], entry.get("new")))}
    proof.evidence.append("; ".join(f"{w} in verl's scripts: {a} -> {b} lines" for w, (a, b) in counts.items()))
    a, b = counts[entry["old"]]
    proof.need(a > b, f"verl's scripts name {entry['old']} no less at {ctx.release}")
    if entry.get("new"):
        a, b = counts[entry["new"]]
        proof.need(b > a, f"verl's scripts name {entry['new']} no more at {ctx.release}")
    check_pr(entry, ctx, proof, set(), "changed by", words=set(counts))


PROOFS = {
    "key-rename": prove_key, "key-removal": prove_key, "key-no-action": prove_key,
    "path-move": prove_path, "path-removal": prove_path,
    "module-move": prove_module, "module-removal": prove_module, "module-no-action": prove_module,
    "symbol-move": prove_symbol, "symbol-rename": prove_symbol, "symbol-removal": prove_symbol,
    "keyword-rename": prove_parameter, "signature-change": prove_parameter,
    "value-rename": prove_value, "value-removal": prove_value, "value-map": prove_value,
    "value-default": prove_value, "target-move": prove_target,
    "entry-point-move": prove_entry_point, "entry-point-removal": prove_entry_point,
    "config-name-move": prove_entry_point, "config-dir-move": prove_entry_point,
    "config-dir-removal": prove_entry_point, "key-scope": prove_entry_point,
    "env-rename": prove_script_word, "env-removal": prove_script_word, "var-rename": prove_script_word,
}


def entry_name(entry: dict) -> str:
    return str(entry.get("old") or entry.get("old-key") or entry.get("key") or entry.get("function"))


def prove(entry: dict, ctx: Context) -> Proof:
    proof = Proof()
    PROOFS[entry["kind"]](entry, ctx, proof)
    return proof


def rows(repo: str, recipe_repo: str | None) -> list[tuple[str, ...]]:
    order = tuple(releases())
    facts = ReleaseFacts(FACTS)
    out = []
    for before, release in zip(order, order[1:]):
        history = pair_history(repo, before, release)
        table = yaml.safe_load((VERL_TABLES / f"{release}.yaml").read_text(encoding="utf-8"))
        moves = {e["old"]: e["new"] for e in table["entries"] if e["kind"] == "module-move"}
        symbols = frozenset(e["old"] for e in table["entries"] if e["kind"].startswith("symbol-"))
        for entry in table["entries"]:
            own = history if entry.get("repo") != "verl-recipe" else None
            proof = prove(entry, Context(facts, order, before, release, own, moves, repo, recipe_repo, symbols))
            verdict = "unproven" if proof.failed else "proven"
            out.append((release, entry["kind"], entry_name(entry), str(entry["pr"]), verdict,
                        "; ".join(proof.failed + proof.evidence)))
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", required=True, help="verl's git directory")
    parser.add_argument("--recipe-repo", help="verl-recipe's git directory (entries with repo: verl-recipe)")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--report", action="store_true", help="print the unproven entries; write nothing")
    args = parser.parse_args(argv)
    found = rows(args.repo, args.recipe_repo)
    unproven = [r for r in found if r[4] != "proven"]
    if args.report:
        for row in unproven:
            print("\t".join(row))
        print(f"{len(found) - len(unproven)} of {len(found)} entries proven", file=sys.stderr)
        return 0
    text = header(__file__, all_releases(), commit_of(args.repo, "main"))
    text += "# release\tkind\told\tpr\tverdict\tevidence (failed checks first; ';'-separated)\n"
    text += "".join("\t".join(r) + "\n" for r in found)
    args.out.write_text(text, encoding="utf-8")
    print(f"{args.out}: {len(found) - len(unproven)} of {len(found)} entries proven", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
