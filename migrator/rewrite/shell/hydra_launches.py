"""The python launches of a script and the Hydra overrides each one passes, as Hydra will receive them.

A launch is a command running `python -m X`, `python3 path/x.py`, `torchrun ... -m X` or
`python -m torch.distributed.run ... -m X` (also behind `ray job submit -- ...`). Its overrides are the
override words after the entry point, found where the rewriter finds them (`shell.override_occurrences`),
plus those of the arrays and strings it expands (`"${ARGS[@]}"`, `$ARGS`), followed where the script
assigns them. `"$@"` is noted: what it passes is unknowable here.

Each override's text is what bash hands to Python: quotes removed, `$NAME` with one literal value in the
script replaced by it, every other expansion by `PLACEHOLDER` (the verdict then judges the key only).
"""

from __future__ import annotations

import bisect
import posixpath
import re
from dataclasses import dataclass, field
from functools import cached_property

from migrator.rewrite.shell.overrides import override_occurrences
from migrator.rewrite.shell.syntax import ARGUMENT_TYPES, command_arguments, parse
from migrator.verdict import PLACEHOLDER

_ARGUMENTS = ARGUMENT_TYPES | {"simple_expansion", "expansion", "command_name"}
_LAUNCHERS = ("torch.distributed.run", "torch.distributed.launch")  # `-m` that runs another `-m`
_EXPANDED = re.compile(r'"?\$\{?([A-Za-z_]\w*)(\[[@*]\])?\}?"?')
_GROUP_AT = re.compile(rb"(?<![\w.@/+~-])(?P<prefix>\+\+|\+|~)?(?P<key>[A-Za-z_][\w/.-]*@[\w.]*)=")
_UNDOTTED = re.compile(rb"(?:(?<=[\s\"'])|(?<=\\\n))(?P<prefix>\+\+|\+|~|)(?P<key>[A-Za-z_][\w-]*)=")
_ALL_ARGS = re.compile(r'"?\$(?:@|\*|\{@\}|\{\*\})"?')
_UNSEEN = frozenset({"command_substitution", "process_substitution"})  # an argument of words only run time knows
_STARTS_AS_OVERRIDE = re.compile(r"""["']?(?:\+\+|\+|~)?[A-Za-z_][\w.@/-]*(?:=|["']?$)""")  # `key=$v`: the key is seen
_FLAG_VALUE = {"--config-path": "config_path", "-cp": "config_path", "--config-name": "config_name",
               "-cn": "config_name"}


@dataclass(frozen=True)
class Occurrence:
    prefix: str  # "", "+", "++" or "~"
    key: str
    start: int  # byte offset of the key (after its prefix)
    end: int


class ShellScript:
    """A script's bytes, tree, overrides, commands and one-literal variables: what `launches` reads."""

    def __init__(self, src: bytes, tree=None):
        self.src = src
        if tree is not None:
            self.tree = tree

    @cached_property
    def tree(self):
        return parse(self.src)

    @cached_property
    def overrides(self) -> list[Occurrence]:
        return [Occurrence(*o) for o in override_occurrences(self.src, self.tree)]

    @cached_property
    def commands(self) -> list[tuple[object, list[str]]]:
        return commands(self.src, self.tree)

    @cached_property
    def literal_values(self) -> dict[str, str | None]:
        return literal_values(self.src, self.tree)


def commands(src: bytes, tree) -> list[tuple[object, list[str]]]:
    """Every command node with its words (quotes removed from plain literals)."""
    out, stack = [], [tree.root_node]
    while stack:
        node = stack.pop()
        if node.type == "command":
            words = [_unquote(src[c.start_byte:c.end_byte].decode("utf-8", "replace")) for c in command_arguments(node)]
            out.append((node, words))
        stack.extend(reversed(node.children))
    return out


def literal_values(src: bytes, tree) -> dict[str, str | None]:
    """Shell variables with one plain literal value in the whole script (None: assigned otherwise too)."""
    values: dict[str, str | None] = {}
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.type == "variable_assignment":
            name, value = node.child_by_field_name("name"), node.child_by_field_name("value")
            if name is not None and name.type == "variable_name":
                literal = _literal(src, value)
                key = name.text.decode("utf-8", "replace")
                values[key] = literal if values.get(key, literal) == literal else None
        stack.extend(node.children)
    return values


def _literal(src: bytes, node) -> str | None:
    """A plain value (`x`, `'x'`, `"x"`) or the literal default of `${NAME:-x}`; None otherwise."""
    if node is None:
        return ""
    text = src[node.start_byte:node.end_byte].decode("utf-8", "replace")
    m = re.fullmatch(r"\$\{\w+:?-([\w.-]*)\}", text)
    if m:
        return m.group(1)
    text = _unquote(text)
    return text if re.fullmatch(r"[\w.-]*", text) else None


def _unquote(word: str) -> str:
    if len(word) >= 2 and word[0] == word[-1] and word[0] in "\"'":
        return word[1:-1]
    return word


@dataclass(frozen=True)
class LaunchOverride:
    text: str  # as Hydra receives it (PLACEHOLDER where the shell decides)
    written: str  # as written in the script
    prefix: str
    key: str
    start: int  # byte offset of the override (its prefix included)
    branch: tuple = ()  # the if/case branches it sits in: ((statement start, branch start), ...)


@dataclass
class Launch:
    start: int  # byte offset of the entry point word
    entry: str  # module (`verl.trainer.main_ppo`) or script path as written
    is_module: bool
    config_path: str | None = None  # `--config-path` / `-cp` value (quotes removed, variables resolved)
    config_name: str | None = None
    overrides: list[LaunchOverride] = field(default_factory=list)
    passes_all_args: bool = False  # `"$@"`: overrides from the caller, unknowable
    # An argument whose words the script does not show (`"${ARGS[@]}"` of an array it never assigns, a
    # sourced file's, `$(cat args)`, `"$EXTRA"`): it may pass any override.
    unseen_args: bool = False


def launches(script) -> list[Launch]:
    """Every python launch in the script that passes at least one override (or `"$@"`)."""
    found = []
    occurrences = sorted(script.overrides, key=lambda o: o.start)
    starts = [o.start for o in occurrences]
    assignments = _assignments(script)
    for node, _words in script.commands:
        args = [c for c in node.children if c.type in _ARGUMENTS]
        words = [_plain(script, a) for a in args]
        entry_at = _entry_index(words)
        if entry_at is None:
            continue
        module = words[entry_at - 1] == "-m" if entry_at else False
        launch = Launch(args[entry_at].start_byte, words[entry_at], module)
        launch.unseen_args = any(c.type in _UNSEEN and c.start_byte > launch.start for c in node.children)
        _take_arguments(script, launch, words[entry_at + 1:], args[entry_at + 1:], node.start_byte, assignments,
                        occurrences, starts)
        if launch.overrides or launch.passes_all_args:
            found.append(launch)
    found += _string_launches(script, occurrences, starts, assignments)
    return sorted(found, key=lambda launch: launch.start)


# Commands that show a string rather than run it: `echo "$CMD"` is not a launch.
_SHOWS = frozenset({"echo", "printf", "cat", "tee", "logger", "print", "log", "info"})
_SHELLS = frozenset({"bash", "sh", "zsh", "dash"})
_EVAL_WORD = re.compile(rb"(?:[^\s\\]|\\[^\n])+")  # a blank-separated word of a string that `eval` splits


@dataclass(frozen=True)
class _Span:
    """A word inside a string (what `eval` or `bash -c` makes one argument), for `_collect`."""

    start_byte: int
    end_byte: int
    parent: object
    type: str = "string"
    double_quoted: bool = True  # the string is "..." (bash expands it once when it is assigned)

    def shell_text(self, script, at: int) -> tuple[str, int]:
        """What the launch receives of src[at:end]: the string's own quoting undone (for "...": `\\"` is
        `"`, `$X` its value), then the word's, as `eval` reads it again."""
        raw = script.src[at:self.end_byte]
        if self.double_quoted:
            out, i = [], 0
            while i < len(raw):
                c = raw[i:i + 1]
                if c == b"\\" and raw[i + 1:i + 2] in (b'"', b"\\", b"$", b"`", b"\n"):
                    out.append("" if raw[i + 1:i + 2] == b"\n" else raw[i + 1:i + 2].decode())
                    i += 2
                elif c in (b"$", b"`"):
                    j, value = _expansion(script, at + i, self.end_byte)
                    out.append(value)
                    i = j - at
                else:
                    out.append(c.decode("utf-8", "replace"))
                    i += 1
            raw = "".join(out)
        else:
            raw = raw.decode("utf-8", "replace")
        return _unquoted_word(script, raw), self.end_byte


def _unquoted_word(script, word: str) -> str:
    """One word as bash reads it (quote removal, `$X` to its one literal value or PLACEHOLDER)."""
    out, i, quote = [], 0, ""
    while i < len(word):
        c = word[i]
        if quote == "'":
            if c == "'":
                quote = ""
            else:
                out.append(c)
            i += 1
        elif c == "'" and not quote:
            quote, i = "'", i + 1
        elif c == '"':
            quote, i = ("" if quote else '"'), i + 1
        elif c == "\\" and i + 1 < len(word):
            out.append(word[i + 1])
            i += 2
        elif c == "$":
            m = re.match(r"\$(?:([A-Za-z_]\w*)|\{([A-Za-z_]\w*)[^}]*\})", word[i:])
            name = (m.group(1) or m.group(2)) if m else None
            out.append((script.literal_values.get(name) if name else None) or PLACEHOLDER)
            i += m.end() if m else 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _string_launches(script, occurrences, starts, assignments) -> list[Launch]:
    """Launches held in a string the script runs: `CMD="python3 -m verl... $ARGS k=v"` with `eval $CMD`,
    `$CMD` or `bash -c "$CMD"` later, and `eval "python3 -m ..."` / `bash -c '...'` themselves. Their words
    are the string's, split at blanks as `eval` splits them; an expansion in the string (`${BASE}`) passes
    the overrides of its value, as for a command's own argument."""
    found = []
    ran = set()
    for node, words in script.commands:
        name, args = (words[0] if words else ""), words[1:]
        if name in _SHOWS:
            continue
        runs_text = name == "eval" or (name in _SHELLS and "-c" in args)
        for child in node.children:
            if child.type not in _ARGUMENTS:
                continue
            text = _plain(script, child)
            expanded = _EXPANDED.fullmatch(text)
            if expanded:  # `$CMD` run as the command itself, or handed whole to one (`eval`, `srun $CMD`)
                ran.add(expanded.group(1))
            elif runs_text:
                ran.update(m.group(1) for m in _EXPANDED.finditer(text))
                if child.type in ("string", "raw_string"):
                    launch = _launch_in_string(script, child, child.start_byte, occurrences, starts, assignments)
                    found += [launch] if launch else []
    for name in sorted(ran):
        for node in assignments.get(name, ()):
            value = node.child_by_field_name("value")
            if value is not None and value.type in ("string", "raw_string"):
                launch = _launch_in_string(script, value, node.start_byte, occurrences, starts, assignments)
                found += [launch] if launch else []
    return found


def _launch_in_string(script, container, before, occurrences, starts, assignments) -> Launch | None:
    spans = [m.span() for m in _EVAL_WORD.finditer(script.src, container.start_byte + 1, container.end_byte - 1)]
    words = [script.src[a:b].decode("utf-8", "replace") for a, b in spans]
    entry_at = _entry_index(words)
    if entry_at is None:
        return None
    module = words[entry_at - 1] == "-m" if entry_at else False
    launch = Launch(spans[entry_at][0], words[entry_at], module)
    double_quoted = container.type == "string"
    _take_arguments(script, launch, words[entry_at + 1:],
                    [_Span(a, b, container, double_quoted=double_quoted) for a, b in spans[entry_at + 1:]],
                    before, assignments, occurrences, starts)
    return launch if launch.overrides or launch.passes_all_args else None


def _take_arguments(script, launch: Launch, words: list[str], containers: list, before: int, assignments: dict,
                    occurrences, starts) -> None:
    """The arguments after a launch's entry point (each word with its node or span): `--config-*` flags,
    `"$@"`, expansions followed to their assignments before `before`, and the overrides themselves."""
    skip_next = False
    for i, (word, container) in enumerate(zip(words, containers)):
        if skip_next:
            skip_next = False
            continue
        flag, eq, value = word.partition("=")
        if flag in _FLAG_VALUE:
            if not eq:
                value, skip_next = (words[i + 1] if i + 1 < len(words) else ""), True
            setattr(launch, _FLAG_VALUE[flag], _resolved(script, value, assignments))
            continue
        if _ALL_ARGS.fullmatch(word):
            launch.passes_all_args = True
            continue
        expanded = _EXPANDED.fullmatch(word)
        if expanded:
            if not _follow(script, expanded.group(1), before, assignments, occurrences, starts, launch.overrides, set()):
                launch.unseen_args = True
            continue
        if ("$" in word or "`" in word) and not _STARTS_AS_OVERRIDE.match(word):
            launch.unseen_args = True  # an expansion that is not an override's value: words unseen
        _collect(script, container, occurrences, starts, launch.overrides, whole_word=True)


def _entry_index(words: list[str]) -> int | None:
    for i, word in enumerate(words):
        if word == "-m" and i + 1 < len(words):
            if words[i + 1] in _LAUNCHERS:
                continue
            return i + 1
        if i > 0 and word.endswith(".py") and not word.startswith("-"):
            return i
    return None


def _assignments(script) -> dict[str, list]:
    """name -> its variable_assignment nodes, in source order."""
    out: dict[str, list] = {}
    stack = [script.tree.root_node]
    while stack:
        node = stack.pop()
        if node.type == "variable_assignment":
            name = node.child_by_field_name("name")
            if name is not None:
                out.setdefault(name.text.decode("utf-8", "replace"), []).append(node)
        stack.extend(reversed(node.children))
    for nodes in out.values():
        nodes.sort(key=lambda n: n.start_byte)
    return out


def _follow(script, name, before, assignments, occurrences, starts, out, seen) -> bool:
    """The overrides an expansion of `name` passes: its last `=` assignment before the command, plus the
    `+=` appends after that; assignments only after it (a function defined below) count all. False when
    the script assigns `name` (or a name its value expands) nowhere: its words are not known here."""
    if name in seen:
        return True
    seen.add(name)
    nodes = assignments.get(name, [])
    if not nodes:
        return False
    earlier = [n for n in nodes if n.start_byte < before]
    if earlier:
        last_set = max((i for i, n in enumerate(earlier) if not _appends(n)), default=0)
        nodes = earlier[last_set:]
    known = True
    for node in nodes:
        value = node.child_by_field_name("value")
        if value is None:
            continue
        elements = [c for c in value.children if c.type in _ARGUMENTS] if value.type == "array" else [value]
        for element in elements:
            inner = _EXPANDED.fullmatch(_plain(script, element))
            if inner and element.type != "word":
                known = _follow(script, inner.group(1), before, assignments, occurrences, starts, out, seen) \
                    and known
            else:
                _collect(script, element, occurrences, starts, out)
    return known


def _branches(node) -> tuple:
    """Which branch of each enclosing `if`/`case` the node is in: ((statement, branch), ...) by start offset."""
    out = []
    child, parent = node, node.parent
    while parent is not None:
        if parent.type in ("if_statement", "case_statement"):
            branch = child.start_byte if child.type in ("elif_clause", "else_clause", "case_item") else -1
            out.append((parent.start_byte, branch))
        child, parent = parent, parent.parent
    return tuple(out)


def exclusive(a: LaunchOverride, b: LaunchOverride) -> bool:
    """Do a and b sit in different branches of one `if`/`case` (so no run passes both)?"""
    branches = dict(a.branch)
    return any(statement in branches and branches[statement] != branch for statement, branch in b.branch)


def _appends(node) -> bool:
    return any(c.type == "+=" for c in node.children)


def _collect(script, container, occurrences, starts, out, whole_word: bool = False) -> None:
    """The overrides whose key starts inside `container` (an argument, an array element, a string), and
    the `group@package=choice` selections there (not keys, so the rewriter does not list them).

    `whole_word`: the container is the command's own argument, which bash passes as one word, blanks and
    all (`'trainer.logger=[console, wandb]'`): one override, from the word's start (after its quotes)."""
    lo = bisect.bisect_left(starts, container.start_byte)
    hi = bisect.bisect_left(starts, container.end_byte)
    found = [(o.start - len(o.prefix), o.prefix, o.key) for o in occurrences[lo:hi]]
    for m in _GROUP_AT.finditer(script.src, container.start_byte, container.end_byte):
        found.append((m.start(), (m.group("prefix") or b"").decode(), m.group("key").decode("ascii")))
    if container.type in ("string", "raw_string"):  # `"engine=megatron a.b=1"`: group choices are undotted
        known = {begin for begin, _, _ in found}
        for m in _UNDOTTED.finditer(script.src, container.start_byte, container.end_byte):
            if m.start("prefix") not in known:
                found.append((m.start("prefix"), m.group("prefix").decode(), m.group("key").decode("ascii")))
    if whole_word:
        found = [f for f in sorted(found) if not script.src[container.start_byte:f[0]].strip(b"'\"")][:1]
    for begin, prefix, key in sorted(found):
        if isinstance(container, _Span):
            text, end = container.shell_text(script, begin)
        else:
            text, end = shell_text(script, container.start_byte, container.end_byte, begin, split=not whole_word)
        written = script.src[begin:end].decode("utf-8", "replace")
        if written[-1:] in ("'", '"') and written.count(written[-1]) % 2:
            written = written[:-1]  # the quote that closes one opened before the override
        out.append(LaunchOverride(text, written, prefix, key, begin, _branches(container)))


def shell_text(script, start: int, end: int, at: int, split: bool = True) -> tuple[str, int]:
    """What bash makes of src[at:end], `at` lying inside the word src[start:end]: (text, end offset).

    The text ends at the word's end, or (`split`) at a blank in the same quoting as `at` (a string
    holding several overrides is split by the expansion that passes it)."""
    src = script.src
    if not _SHELL_SPECIAL.search(src, start, end):
        # No quote, escape, expansion or tilde in the word (most overrides): bash passes its bytes as they are.
        if split:
            blank = _BLANK.search(src, at, end)
            end = blank.start() if blank is not None else end
        return src[at:end].decode("utf-8", "replace"), end
    return _read_shell_text(script, start, end, at, split)


def _read_shell_text(script, start: int, end: int, at: int, split: bool) -> tuple[str, int]:
    """`shell_text` following the quoting: a run of bytes that mean themselves in every quoting at once, the
    rest byte by byte (each byte of `data.train_files=` was a turn of this loop)."""
    src, i, quote, out = script.src, start, "", bytearray()
    start_quote = None
    while i < end:
        if i >= at and start_quote is None:
            start_quote = quote
        run = _LITERAL_RUN.match(src, i, end)
        if run is not None:  # no quote, escape, expansion, tilde or blank: kept from `at` on, the quoting as it was
            if run.end() > at:
                start_quote = quote if start_quote is None else start_quote
                out += src[max(i, at):run.end()]
            i = run.end()
            continue
        c = src[i:i + 1]
        keep = out if i >= at else bytearray()  # before `at`: only the quoting state matters
        if split and start_quote is not None and c in (b" ", b"\t", b"\n") and quote == start_quote:
            end = i
            break
        if quote == "'" or (c == b"'" and not quote):
            if c == b"'":
                quote = "" if quote else "'"
            else:
                keep += c
            i += 1
        elif c == b'"':
            quote, i = ("" if quote == '"' else '"'), i + 1
        elif c == b"\\" and i + 1 < end and (not quote or src[i + 1:i + 2] in b'$`"\\\n'):
            keep += b"" if src[i + 1:i + 2] == b"\n" else src[i + 1:i + 2]
            i += 2
        elif c in (b"$", b"`"):
            i, value = _expansion(script, i, end)
            keep += value.encode("utf-8")
        elif c == b"~" and not quote and src[i - 1:i] in (b"=", b":") and i - 1 >= at:
            keep += PLACEHOLDER.encode()  # bash expands `key=~/x` to $HOME/x (tilde after `=` or `:`)
            i += 1
        else:
            keep += c
            i += 1
    return out.decode("utf-8", "replace"), end


# What `shell_text` must read byte by byte: quotes, escapes, expansions, a tilde; and the blanks that split.
_SHELL_SPECIAL = re.compile(rb"[\'\"\\$`~]")
_LITERAL_RUN = re.compile(rb"[^\'\"\\$`~ \t\n]+")  # what no quoting reads differently, blanks apart
_BLANK = re.compile(rb"[ \t\n]")
_VARIABLE = re.compile(rb"\$(?:([A-Za-z_]\w*)|\{([A-Za-z_]\w*)\})")
_SPECIAL = re.compile(rb"\$(?:[@*#?$!0-9-]|'[^']*')?")


def _expansion(script, i: int, end: int) -> tuple[int, str]:
    """(offset after the expansion at i, its value: a one-literal variable's value, else PLACEHOLDER)."""
    src = script.src
    m = _VARIABLE.match(src, i, end)
    if m:
        value = script.literal_values.get((m.group(1) or m.group(2)).decode("ascii"))
        return m.end(), value if value else PLACEHOLDER
    if src[i:i + 1] == b"`":
        close = src.find(b"`", i + 1, end)
        return (close + 1 if close != -1 else end), PLACEHOLDER
    opener = src[i + 1:i + 2]
    if opener in (b"{", b"("):
        closer, depth, j = (b"}" if opener == b"{" else b")"), 0, i + 1
        while j < end:
            ch = src[j:j + 1]
            depth += ch == opener
            depth -= ch == closer
            j += 1
            if depth == 0:
                break
        return j, PLACEHOLDER
    m = _SPECIAL.match(src, i, end)
    return m.end(), PLACEHOLDER


def _plain(script, node) -> str:
    text = script.src[node.start_byte:node.end_byte].decode("utf-8", "replace")
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'" and "$" not in text[1:-1]:
        return text[1:-1]
    return text


def _resolved(script, value: str, assignments: dict) -> str:
    """A `--config-*` value with quotes removed and variables filled in: a one-literal value, else the text
    of the variable's only assignment (`CONFIG_PATH="$PROJECT_DIR/examples/x/config"`: its tail is enough)."""
    value = value.strip("\"'")

    def fill(m):
        name = m.group(1) or m.group(2)
        literal = script.literal_values.get(name)
        if literal:
            return literal
        nodes = assignments.get(name, [])
        assigned = nodes[0].child_by_field_name("value") if len(nodes) == 1 else None
        return _plain(script, assigned).strip("\"'") if assigned is not None else m.group(0)

    return re.sub(r"\$(?:([A-Za-z_]\w*)|\{([A-Za-z_]\w*)\})", fill, value)


def config_dir_of_launch(configs, entry, config_path: str) -> str | None:
    """The shipped config dir a `--config-path` names, as Hydra resolves it: absolute, or relative to the
    directory of the script that declares `@hydra.main`; None when it is not one of verl's."""
    relative = posixpath.normpath(posixpath.join(posixpath.dirname(entry.script), config_path))
    return relative if relative in configs.config_dirs else configs.config_dir_of(config_path)
