"""Every regular expression of the `migrator` package, and a structural proof that matching it is linear.

`inventory()` finds each pattern in the source: the module-level `re.compile(...)` values and every
inline `re.search/match/...(...)` call, with how the package uses it (`search`: tried at every position,
by `search`, `finditer`, `sub`, `split`, `findall`; `match`: at one position). `verdict()` parses a
pattern with Python's own regex parser and proves, by structure, that Python's backtracking engine
needs linear time, or says which rule it cannot show:

- nested runs: a repeated group whose body holds an unbounded repeat must be delimited, each iteration
  starting (or ending) with a character the inner repeats cannot take, and the branches of a repeated
  alternation must start with different characters (`(a+)+`, `(a|a)*` are exponential);
- adjacent runs: an unbounded repeat followed (past optional parts only) by one that can take the same
  characters backtracks quadratically (`\\s*\\s*x`);
- restarts: tried at every position, a match that can run over a long stretch of characters and then
  fail is tried again from inside that stretch, unless a lookbehind at the start forbids it, the run
  ends the pattern (it cannot fail after it), no match can start with its characters, or the pattern
  is anchored (`\\A`, or `^` per line with runs that stay in the line).

Patterns built at run time (from a glob, a fence, a table's names) are checked on the instances the
package builds (`BUILT`).
"""

from __future__ import annotations

import ast
import importlib
import re
import re._constants as C
import re._parser as sre
import warnings
from dataclasses import dataclass

from tests.helpers import REPO

PACKAGE = REPO / "migrator"
SEARCHING = {"search", "finditer", "findall", "sub", "subn", "split"}
MATCHING = {"match", "fullmatch"}
OTHER = 256  # every character above U+00FF, for str patterns: treated as in every class that could hold one
ALL = frozenset(range(257))


@dataclass(frozen=True)
class Pattern:
    where: str  # module:NAME or module:line
    source: str | bytes
    flags: int
    uses: frozenset[str]  # the methods the package calls on it

    @property
    def searched(self) -> bool:
        return bool(self.uses & SEARCHING) or not self.uses


def _literal(node):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the package's own invalid escapes are ruff's business
            return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError):
        return None


def _flags(node) -> int:
    if node is None:
        return 0
    value = 0
    for part in ast.walk(node):
        if isinstance(part, ast.Attribute) and isinstance(part.value, ast.Name) and part.value.id == "re":
            value |= getattr(re, part.attr, 0)
    return value


def _name_of(target) -> str | None:
    """The name a method is called on: `X.finditer`, `mod.X.finditer`, `X[key].match`."""
    if isinstance(target, ast.Subscript):
        target = target.value
    if isinstance(target, ast.Attribute):
        return target.attr
    return getattr(target, "id", None)


def _calls(tree):
    """(method call, the name of the function it is in) for every `X.method(...)` call of a module."""
    def visit(node, function):
        for child in ast.iter_child_nodes(node):
            inner = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else function
            if isinstance(child, ast.Call) and isinstance(child.func, ast.Attribute):
                yield child, function
            yield from visit(child, inner)

    return visit(tree, "<module>")


def inventory() -> list[Pattern]:
    """Every pattern the package compiles at import (module attributes, and those in module-level dicts
    and tuples), every inline `re.search(...)`-style call with a literal pattern, and the uses of each."""
    found: list[Pattern] = []
    uses: dict[str, set[str]] = {}
    compiled: dict[str, tuple[str, re.Pattern]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        module = path.relative_to(REPO).with_suffix("").as_posix().replace("/", ".")
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node, function in _calls(tree):
            func = node.func
            if isinstance(func.value, ast.Name) and func.value.id == "re":
                source = _literal(node.args[0]) if node.args else None
                if func.attr in SEARCHING | MATCHING and source is not None:
                    position = {"sub": 4, "subn": 4, "split": 3}.get(func.attr, 2)  # re.search(p, s, flags)
                    flag_node = node.args[position] if len(node.args) > position else \
                        next((k.value for k in node.keywords if k.arg == "flags"), None)
                    found.append(Pattern(f"{module}:{function}() re.{func.attr}", source, _flags(flag_node),
                                         frozenset({func.attr})))
                continue
            if func.attr not in SEARCHING | MATCHING:
                continue
            sides = (func.value.body, func.value.orelse) if isinstance(func.value, ast.IfExp) else (func.value,)
            for side in sides:  # `(A if x else B).finditer(...)` uses both
                name = _name_of(side)
                if name is not None:
                    uses.setdefault(name, set()).add(func.attr)
        if module.endswith("__main__"):
            continue
        loaded = importlib.import_module(module.removesuffix(".__init__"))  # a package, with its __path__
        own = {target.id for node in tree.body if isinstance(node, (ast.Assign, ast.AnnAssign))
               for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
               if isinstance(target, ast.Name)}  # defined here, not imported
        for name, value in vars(loaded).items():
            if name not in own:
                continue
            if isinstance(value, re.Pattern):
                compiled.setdefault(f"{module}:{name}", (name, value))
            elif isinstance(value, (dict, tuple, list)):
                items = value.items() if isinstance(value, dict) else enumerate(value)
                for key, item in items:
                    if isinstance(item, re.Pattern):
                        compiled.setdefault(f"{module}:{name}[{key!r}]", (name, item))
    for key, (name, pattern) in sorted(compiled.items()):
        found.append(Pattern(key, pattern.pattern, pattern.flags & ~(re.UNICODE), frozenset(uses.get(name, ()))))
    counts: dict[str, int] = {}
    unique = []
    for pattern in found:  # two calls of one function: `#2` for the second
        counts[pattern.where] = counts.get(pattern.where, 0) + 1
        n = counts[pattern.where]
        unique.append(pattern if n == 1 else Pattern(f"{pattern.where} #{n}", pattern.source, pattern.flags, pattern.uses))
    return sorted(unique, key=lambda p: p.where)


# -- character sets of the parsed pattern ------------------------------------------------------------

REPEATS = (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT)
ZERO_WIDTH = (C.AT, C.ASSERT, C.ASSERT_NOT)
NEWLINE = ord("\n")


def _category(name, is_bytes: bool) -> frozenset[int]:
    tests = {C.CATEGORY_DIGIT: str.isdigit, C.CATEGORY_WORD: lambda ch: ch.isalnum() or ch == "_",
             C.CATEGORY_SPACE: str.isspace}
    for positive, negative in ((C.CATEGORY_DIGIT, C.CATEGORY_NOT_DIGIT), (C.CATEGORY_WORD, C.CATEGORY_NOT_WORD),
                               (C.CATEGORY_SPACE, C.CATEGORY_NOT_SPACE)):
        if name in (positive, negative):
            limit = 128 if is_bytes else 256
            inside = frozenset(c for c in range(limit) if tests[positive](chr(c))) | ({OTHER} if not is_bytes else set())
            return inside if name == positive else (ALL - inside) | ({OTHER} if not is_bytes else set())
    return ALL


class _Analysis:
    """One pattern, parsed by Python's own parser (`re._parser`)."""

    def __init__(self, pattern: Pattern):
        self.pattern = pattern
        self.bytes = isinstance(pattern.source, bytes)
        self.tree = list(sre.parse(pattern.source, pattern.flags))
        self.flags = sre.parse(pattern.source, pattern.flags).state.flags
        self.multiline = bool(self.flags & re.MULTILINE)
        self.dotall = bool(self.flags & re.DOTALL)
        self.problems: list[str] = []
        self.runs: list[tuple[frozenset[int], bool, int]] = []  # (characters, can fail after it, id of node)
        self._collect(self.tree, [])

    # what one node takes
    def chars(self, op, av) -> frozenset[int] | None:
        """The characters a one-character node takes; None for anything else."""
        if op is C.LITERAL:
            return frozenset({av if av < 256 else OTHER})
        if op is C.NOT_LITERAL:
            return ALL - {av}
        if op is C.ANY:
            return ALL if self.dotall else ALL - {NEWLINE}
        if op is C.IN:
            out: set[int] = set()
            negate = False
            for item_op, item_av in av:
                if item_op is C.NEGATE:
                    negate = True
                elif item_op is C.LITERAL:
                    out.add(item_av if item_av < 256 else OTHER)
                elif item_op is C.RANGE:
                    out.update(range(item_av[0], min(item_av[1], 255) + 1))
                    if item_av[1] > 255:
                        out.add(OTHER)
                elif item_op is C.CATEGORY:
                    out |= _category(item_av, self.bytes)
                else:
                    out |= ALL
            return frozenset(ALL - out) if negate else frozenset(out)
        return None

    @staticmethod
    def children(op, av) -> list:
        if op is C.SUBPATTERN:
            return list(av[3])
        if op is C.ATOMIC_GROUP:
            return list(av)
        if op in REPEATS:
            return list(av[2])
        if op in (C.ASSERT, C.ASSERT_NOT):
            return list(av[1])
        return []

    def first(self, seq) -> tuple[frozenset[int], bool]:
        """(the characters a match of `seq` can start with, whether it can match nothing)."""
        return self._edge(list(seq), backwards=False)

    def ends(self, seq) -> tuple[frozenset[int], bool]:
        """(the characters a match of `seq` can end with, whether it can match nothing)."""
        return self._edge(list(seq), backwards=True)

    def _edge(self, seq: list, backwards: bool) -> tuple[frozenset[int], bool]:
        out: set[int] = set()
        for op, av in reversed(seq) if backwards else seq:
            chars = self.chars(op, av)
            if chars is not None:
                return frozenset(out | chars), False
            if op in ZERO_WIDTH:
                continue
            if op is C.BRANCH:
                inner, nullable = set(), False
                for alternative in av[1]:
                    edge, empty = self._edge(list(alternative), backwards)
                    inner |= edge
                    nullable = nullable or empty
            else:
                inner, nullable = self._edge(self.children(op, av), backwards)
                nullable = nullable or (op in REPEATS and av[0] == 0)
            out |= inner
            if not nullable:
                return frozenset(out), False
        return frozenset(out), True

    def takes(self, seq) -> frozenset[int]:
        """Every character a match of `seq` may consume."""
        out: set[int] = set()
        for op, av in seq:
            chars = self.chars(op, av)
            if chars is not None:
                out |= chars
            elif op is C.BRANCH:
                for alternative in av[1]:
                    out |= self.takes(alternative)
            elif op not in ZERO_WIDTH:
                out |= self.takes(self.children(op, av))
        return frozenset(out)

    def required(self, seq) -> list[frozenset[int]]:
        """The one-character parts every match of `seq` passes through (at its top level)."""
        out = []
        for op, av in seq:
            chars = self.chars(op, av)
            if chars is not None:
                out.append(chars)
            elif op is C.SUBPATTERN:
                out.extend(self.required(av[3]))
            elif op in REPEATS and av[0] >= 1 and len(av[2]) == 1 and self.chars(*av[2][0]) is not None:
                out.append(self.chars(*av[2][0]))
        return out

    def walk(self, seq):
        for op, av in seq:
            yield op, av
            if op is C.BRANCH:
                for alternative in av[1]:
                    yield from self.walk(alternative)
            else:
                yield from self.walk(self.children(op, av))

    @staticmethod
    def unbounded(op, av) -> bool:
        return op in REPEATS and av[1] == C.MAXREPEAT

    def inner_runs(self, seq) -> list[frozenset[int]]:
        return [self.takes(av[2]) for op, av in self.walk(seq) if self.unbounded(op, av)]

    # which runs the match can fail after
    def _collect(self, seq, rest: list) -> None:
        """Record every unbounded repeat with whether the match can fail after it; `rest` is what follows
        `seq`, innermost first (None: a repeat around it, which may iterate again)."""
        for i, (op, av) in enumerate(seq):
            after = [seq[i + 1:]] + rest
            if self.unbounded(op, av):
                run = self.takes(av[2])
                self.runs.append((run, self._can_fail(run, after), id(av)))
            if op is C.BRANCH:
                for alternative in av[1]:
                    self._collect(list(alternative), after)
            elif op in (C.ASSERT, C.ASSERT_NOT):
                self._collect(self.children(op, av), [None])
            elif op in REPEATS:
                self._collect(self.children(op, av), after if av[1] == 1 else [None])
            else:
                self._collect(self.children(op, av), after)

    def _can_fail(self, run: frozenset[int], after: list) -> bool:
        """After a greedy run of `run` that stopped, can the rest of the match fail?"""
        fresh = True  # nothing consumed since the run stopped
        for part in after:
            if part is None:
                return True
            for op, av in part:
                if op in REPEATS and av[0] == 0 and not self.inner_runs(self.children(op, av)) and not any(
                        o in ZERO_WIDTH for o, _ in self.walk(self.children(op, av))):
                    fresh = fresh and not (self.first(self.children(op, av))[0] - run)
                    continue  # optional and bounded: matches, or is skipped
                if op is C.AT and fresh and ((av is C.AT_END and self.multiline and run >= ALL - {NEWLINE})
                                             or (av in (C.AT_END, C.AT_END_STRING) and run == ALL)):
                    continue  # the run stopped at a line end (or at the end): `$` holds
                return True
        return False

    # the rules
    def check(self) -> list[str]:
        self._nested()
        self._adjacent(self.tree)
        if self.pattern.searched:
            self._restarts()
        if any(op is C.GROUPREF for op, _ in self.walk(self.tree)):
            self.problems.append("a back-reference")
        return sorted(set(self.problems))

    def _delimited(self, body) -> bool:
        """Iterations of `body` cannot share characters: each starts (or ends) with a character its inner
        repeats cannot take, or passes through one and cannot end with a character it can start with."""
        inner = set().union(*self.inner_runs(body))
        if not inner:
            return True
        heads, _ = self.first(body)
        tails, _ = self.ends(body)
        if not (heads & inner) or not (tails & inner):
            return True
        return any(not (d & inner) for d in self.required(body)) and not (heads & tails)

    def _nested(self) -> None:
        for op, av in self.walk(self.tree):
            if not self.unbounded(op, av) or (op is C.MAX_REPEAT and av[1] == 1):
                continue
            body = list(av[2])
            if len(body) == 1 and self.chars(*body[0]) is not None:
                continue
            if self.first(body)[1]:
                self.problems.append("a repeated group that can match nothing")
                continue
            unwrapped = list(body[0][1][3]) if len(body) == 1 and body[0][0] is C.SUBPATTERN else body
            if len(unwrapped) == 1 and unwrapped[0][0] is C.BRANCH:
                alternatives = [list(alt) for alt in unwrapped[0][1][1]]
                heads = [self.first(alt)[0] for alt in alternatives]
                if any(a & b for i, a in enumerate(heads) for b in heads[i + 1:]):
                    self.problems.append("a repeated alternation whose branches start alike")
                elif not all(self._delimited(alt) for alt in alternatives):
                    self.problems.append("nested runs without a delimiter")
            elif not self._delimited(body):
                self.problems.append("nested runs without a delimiter")

    def _adjacent(self, seq) -> None:
        """An unbounded repeat X, then (past optional parts) a part Y that can start with a character X
        can give back and holds a repeat of such characters the match can fail after: every split of
        that stretch between X and Y is tried (quadratic). X gives back one character at a time from
        its last iteration's end: a one-character repeat any of its characters, a group those its
        iterations can end with."""
        seq = list(seq)
        for i, (op, av) in enumerate(seq):
            if self.unbounded(op, av):
                body = list(av[2])
                gives_back = self.takes(body) if len(body) == 1 and self.chars(*body[0]) else self.ends(body)[0]
                for following in seq[i + 1:]:
                    heads, nullable = self.first([following])
                    inside = {id(a) for o, a in self.walk([following]) if self.unbounded(o, a)}
                    if heads & gives_back and any(fails and node in inside and run & gives_back
                                                  for run, fails, node in self.runs):
                        self.problems.append(f"adjacent runs over the same characters ({_show(heads & gives_back)})")
                        return
                    if not nullable:
                        break
        for op, av in seq:
            if op is C.BRANCH:
                for alternative in av[1]:
                    self._adjacent(alternative)
            else:
                self._adjacent(self.children(op, av))

    def _restarts(self) -> None:
        seq = self.tree
        if seq and seq[0] == (C.AT, C.AT_BEGINNING_STRING):
            return
        if seq and seq[0] == (C.AT, C.AT_BEGINNING) and not self.multiline:
            return
        per_line = bool(seq) and seq[0] == (C.AT, C.AT_BEGINNING)
        starts, _ = self.first(seq)
        guard_out = self._guard(seq)
        for run, fails, _node in self.runs:
            if not fails:
                continue
            if per_line:
                if NEWLINE in run:
                    self.problems.append("a run across lines in a pattern tried at every line")
                continue
            if run & starts and not run <= guard_out:
                self.problems.append("a run a new match can start inside, and fail after")

    def _guard(self, seq) -> frozenset[int]:
        """The characters a match may not follow, by the lookbehinds the pattern starts with."""
        out: set[int] = set()
        for op, av in seq:
            if op is C.SUBPATTERN and len(av[3]) == 1:
                op, av = av[3][0]
            if op is C.ASSERT_NOT and av[0] == -1 and len(av[1]) == 1 and self.chars(*av[1][0]) is not None:
                out |= self.chars(*av[1][0])
            elif op is C.ASSERT and av[0] == -1:
                out |= ALL - self._preceding(av[1])
            elif op is C.BRANCH and all(len(alt) == 1 and alt[0][0] is C.ASSERT and alt[0][1][0] == -1
                                        for alt in av[1]):
                out |= ALL - set().union(*(self._preceding(alt[0][1][1]) for alt in av[1]))
            elif op is not C.AT:
                break
        return frozenset(out)

    def _preceding(self, seq) -> frozenset[int]:
        """The characters a positive lookbehind lets a match follow: those it can end with."""
        tails, empty = self.ends(seq)
        return ALL if empty else tails


def _show(chars: frozenset[int]) -> str:
    return "".join(chr(c) if 32 < c < 127 else f"\\x{c:02x}" for c in sorted(chars)[:12] if c < 256)


def verdict(pattern: Pattern) -> list[str]:
    """The rules the pattern breaks (empty: linear by structure)."""
    return _Analysis(pattern).check()


# Patterns the rules cannot show linear, each with the reason it is (checked: still in the package, still
# beyond the rules).
EXPLAINED = {
    "migrator.derive.modules:is_near_empty() re.sub":
        "verl's own sources (derive); a match fails only when no closing quote of its kind follows, so at most "
        "one attempt per kind reads to the end",
    "migrator.derive.scripts:_same_model() re.search": "the common prefix of two script names (one file name)",
    "migrator.mapping.config_objects:_CLASS": "matched (`match`) against a name of the shipped config facts",
    "migrator.layout:_DIRECTORY": "matched (`match`) against one value of the shipped layout.yaml",
    "migrator.rewrite.python.resolution:_PLAIN_IMPORT":
        "tried at each line start; only the parenthesised names `[\\w \\t\\r\\n,]*` run over lines, and a "
        "later attempt reading such a stretch again must start with `from ... import (`, whose `(` ends the "
        "earlier stretch: each byte is read by at most one such run",
}


def built() -> list[Pattern]:
    """The patterns the package builds at run time, as it builds them for typical inputs."""
    from migrator.discover import glob_regex
    from migrator.prefilter import _trie_regex
    from migrator.rewrite.shell.variable_uses import name_pattern

    out = [Pattern(f"migrator.discover:glob_regex({glob!r})", glob_regex(glob).pattern, 0, frozenset({"match"}))
           for glob in ("*.sh", "vendor", "**/vendor", "tree/**/gen_*.sh", "a?b[cd]*", "**")]
    tokens = ("actor_rollout_ref.rollout.update_weights_bucket_megabytes", "actor_rollout_ref.rollout.x",
              "verl.utils.npu_utils", "VLLM_ATTENTION_BACKEND", "examples/grpo_trainer/run.sh")
    out.append(Pattern("migrator.prefilter:_trie_regex", _trie_regex(tokens).pattern, 0, frozenset({"search"})))
    out.append(Pattern("migrator.rewrite.shell.variable_uses:name_pattern", name_pattern(b"train_etp").pattern, 0,
                       frozenset({"finditer"})))
    for fence in (b"```", b"~~~~"):
        closer = rb"^[ \t]*" + re.escape(fence[:1]) + rb"{" + str(len(fence)).encode() + rb",}[ \t]*\r?$"
        out.append(Pattern(f"migrator.rewrite.markdown:code_blocks() closer {fence.decode()}", closer, re.M,
                           frozenset({"search"})))
    name = re.escape(b"NAME")
    out.append(Pattern("migrator.rewrite.shell.keys: export NAME=", rb"(?m)^[ \t]*(?:export[ \t]+)?" + name + rb"=",
                       0, frozenset({"finditer"})))
    return out


def table_patterns() -> list[Pattern]:
    """The regular expressions of the built-in tables (`when: {file-matches: ...}` is searched over file
    text; value patterns are matched against one value)."""
    from migrator.tablecache import composed

    found: dict[str, Pattern] = {}
    seen: set[int] = set()

    from migrator.mapping.fields import FileCondition

    def walk(value, searched=False, depth=0):
        if id(value) in seen or depth > 12:
            return
        seen.add(id(value))
        if isinstance(value, re.Pattern):
            kind = "file-matches" if searched else "value pattern"
            key = f"table {kind}: {value.pattern!r}"
            uses = frozenset({"search"} if searched else {"fullmatch"})
            found.setdefault(key, Pattern(key, value.pattern, value.flags & ~re.UNICODE, uses))
        elif isinstance(value, dict):
            for item in value.values():
                walk(item, searched, depth + 1)
        elif isinstance(value, (list, tuple, frozenset, set)):
            for item in value:
                walk(item, searched, depth + 1)
        elif hasattr(value, "__dataclass_fields__"):
            for name in value.__dataclass_fields__:
                walk(getattr(value, name, None), searched or isinstance(value, FileCondition), depth + 1)

    walk(composed("v0.1", "main", ())[0])
    return sorted(found.values(), key=lambda p: p.where)


def why_linear(pattern: Pattern) -> str:
    """One line for docs/robustness.md: the rule that makes the pattern linear."""
    if pattern.where in EXPLAINED:
        return EXPLAINED[pattern.where]
    analysis = _Analysis(pattern)
    if not pattern.searched:
        return "matched at one position; no nested or adjacent runs"
    seq = analysis.tree
    if seq and seq[0] in ((C.AT, C.AT_BEGINNING_STRING),) or (seq and seq[0] == (C.AT, C.AT_BEGINNING)
                                                              and not analysis.multiline):
        return "anchored at the start: one attempt"
    failing = [run for run, fails, _ in analysis.runs if fails]
    if seq and seq[0] == (C.AT, C.AT_BEGINNING):
        return "tried at each line start; its runs stay within the line"
    if not failing:
        return "tried at every position; nothing can fail after its runs, so each byte is read once"
    if analysis._guard(seq):
        return "tried at every position; a lookbehind keeps a match from starting inside its runs"
    return "tried at every position; no match can start with a byte its runs take"


def audit_rows() -> list[str]:
    rows = ["| pattern | used by | why it is linear |", "|---|---|---|"]
    for pattern in inventory() + built() + table_patterns():
        uses = ", ".join(sorted(pattern.uses)) or "match"
        rows.append(f"| `{pattern.where}` | {uses} | {why_linear(pattern)} |")
    return rows


if __name__ == "__main__":
    print("\n".join(audit_rows()))
