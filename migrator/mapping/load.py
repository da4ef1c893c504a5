"""Load and validate mapping tables: every error names the file, the line, the entry and the fault."""

from __future__ import annotations

import functools
import os
import select
import stat
from dataclasses import dataclass
from pathlib import Path

from migrator.builtin_tables import TableError, builtin_mappings_dir, raise_all
from migrator.mapping.config_objects import ConfigObjects, ConfigObjectsError, config_objects_from
from migrator.mapping.facts import ReleaseFacts
from migrator.mapping.fields import FieldError
from migrator.mapping.kind import Entry, Origin, Role
from migrator.mapping.kinds import KINDS


@dataclass(frozen=True)
class ReleaseTable:
    release: str
    file: str
    entries: tuple[Entry, ...]


# Anchors and aliases are allowed (a shared `when:`), but expanded they may not explode
# ("billion laughs") or refer to themselves; tables are small and shallow.
MAX_NODES = 100_000
MAX_DEPTH = 50
PLAIN_TAGS = {"tag:yaml.org,2002:seq", "tag:yaml.org,2002:map"}


class _Lines(list):
    """A YAML sequence as a list that remembers the line of each item."""

    lines: list[int]


def yaml_values(node, file: str, _state: dict | None = None, _depth: int = 0):
    """Convert a composed YAML node tree to plain values, keeping each mapping's line as `__line__`."""
    import yaml  # imported here: a cached run (migrator.tablecache) never needs PyYAML

    state = _state if _state is not None else {"budget": MAX_NODES, "active": set()}
    line = node.start_mark.line + 1
    state["budget"] -= 1
    if state["budget"] < 0:
        raise TableError(file, line, f"table too large: more than {MAX_NODES} YAML values once aliases are expanded")
    if _depth > MAX_DEPTH:
        raise TableError(file, line, f"values nested more than {MAX_DEPTH} levels deep")
    if isinstance(node, (yaml.MappingNode, yaml.SequenceNode)):
        if node.tag not in PLAIN_TAGS:
            raise TableError(file, line, f"unsupported YAML tag {node.tag!r}")
        if id(node) in state["active"]:
            raise TableError(file, line, "a YAML alias refers to a value that contains it")
        state["active"].add(id(node))
        try:
            return _container(node, file, state, _depth)
        finally:
            state["active"].discard(id(node))
    try:
        return yaml.SafeLoader.construct_object(_scalar_loader(), node)  # type: ignore[arg-type]
    except yaml.YAMLError as exc:
        problem = getattr(exc, "problem", None) or str(exc)
        raise TableError(file, line, f"invalid YAML value: {problem}") from None


def _container(node, file: str, state: dict, depth: int):
    import yaml

    if isinstance(node, yaml.MappingNode):
        out: dict = {}
        lines: dict = {}
        for key_node, value_node in node.value:
            key = yaml_values(key_node, file, state, depth + 1)
            if not isinstance(key, (str, int, float, bool)) or key is None:
                raise TableError(file, key_node.start_mark.line + 1, f"mapping key {key!r} is not a scalar")
            if key in out:
                raise TableError(file, key_node.start_mark.line + 1, f"field {key!r} is given twice")
            out[key] = yaml_values(value_node, file, state, depth + 1)
            lines[key] = key_node.start_mark.line + 1
        out["__line__"] = node.start_mark.line + 1
        out["__lines__"] = lines
        return out
    items = _Lines(yaml_values(child, file, state, depth + 1) for child in node.value)
    items.lines = [child.start_mark.line + 1 for child in node.value]
    return items


# Line breaks only the pure-Python reader counts; with them a libyaml mark's line could differ.
_ODD_BREAKS = ("\x85", "\u2028", "\u2029")


def yaml_nodes(text: str):
    """The table's node tree: libyaml when PyYAML has it (the pure-Python parser was most of a cache-missing
    run), the pure-Python parser for any text libyaml refuses, so an error's line and words stay the same."""
    import yaml

    fast = getattr(yaml, "CSafeLoader", None) if getattr(yaml, "__with_libyaml__", False) else None
    if fast is not None and not any(c in text for c in _ODD_BREAKS):
        try:
            return yaml.compose(text, Loader=fast)
        except yaml.YAMLError:
            pass
    return yaml.compose(text, Loader=yaml.SafeLoader)


@functools.lru_cache(maxsize=None)
def _scalar_loader():
    """A loader with no stream: used only to construct scalars with YAML 1.1 safe semantics."""
    import yaml

    return yaml.SafeLoader("")


def _plain(value):
    """Strip the line bookkeeping from nested values (env presets, when-conditions)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items() if k not in ("__line__", "__lines__")}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def parse_entry(raw: object, file: str, release: str, index: int, line: int | None = None) -> Entry:
    if not isinstance(raw, dict):
        raise TableError(file, line, f"entry #{index + 1} is not a mapping: {raw!r}")
    line = raw.get("__line__")
    kind = raw.get("kind")
    label = f"entry #{index + 1} ({kind} {raw.get('old', raw.get('function', raw.get('key', raw.get('old-key', '?'))))})"
    if kind not in KINDS:
        known = ", ".join(sorted(KINDS))
        raise TableError(file, line, f"unknown kind {kind!r} (known: {known})", label)
    unit = KINDS[kind]
    fields = {k: v for k, v in raw.items() if k not in ("kind", "__line__", "__lines__")}
    extra = sorted(set(fields) - set(unit.fields))
    if extra:
        raise TableError(file, raw["__lines__"].get(extra[0], line),
                         f"unexpected field(s) {', '.join(map(str, extra))} for {kind} "
                         f"(allowed: {', '.join(unit.fields)})", label)
    missing = [name for name, (required, _) in unit.fields.items() if required and name not in fields]
    if missing:
        raise TableError(file, line, f"missing field(s) {', '.join(missing)} for {kind}", label)
    values = {}
    for name, value in fields.items():
        _, check = unit.fields[name]
        try:
            values[name.replace("-", "_")] = check(_plain(value))  # type: ignore[operator]
        except FieldError as exc:
            raise TableError(file, raw["__lines__"].get(name, line), f"{name}: {exc}", label) from None
    values.setdefault("note", None)
    entry = unit.entry(origin=Origin(file, line or 0, release), **values)
    problem = unit.problem(entry)  # the rules that relate the entry's fields to each other
    if problem:
        raise TableError(file, line, problem, label)
    return entry


def _target(entry: Entry) -> str | None:
    """What a rename renames to (a symbol-rename's bare `new` completed with its module)."""
    return getattr(entry, "target", None) or getattr(entry, "new", None)


def _chains(entry: Entry) -> bool:
    """Does the entry take part in the one-table rules on renames (its family's names move or go)?"""
    return entry.unit.family.chains and entry.unit.role in (Role.MOVE, Role.REMOVAL)


def check_table_consistency(table: ReleaseTable) -> None:
    """Duplicates, chains and cycles inside one table, and renames into something removed: all reported."""
    raise_all(consistency_problems(table))


def consistency_problems(table: ReleaseTable) -> list[TableError]:
    problems: list[TableError] = []
    seen: dict[tuple, Entry] = {}
    for entry in table.entries:
        other = seen.get(entry.identity)
        if other is not None:
            problems.append(TableError(table.file, entry.origin.line, f"duplicate {entry.duplicate_name()}: "
                                       f"already given at line {other.origin.line}", entry.describe()))
            continue
        seen[entry.identity] = entry
    by_family: dict[str, list[Entry]] = {}
    for entry in table.entries:
        if _chains(entry):
            by_family.setdefault(entry.FAMILY, []).append(entry)
    for entries in by_family.values():
        family = entries[0].unit.family
        for entry in entries:
            new = _target(entry)
            if new is None:
                continue
            probe = new[:-2] if new.endswith(".*") else new
            for other in entries:
                if other is entry or not family.covers(other.old, probe) or not family.same_subject(entry, other):
                    continue
                if getattr(other, "scope", ()) != getattr(entry, "scope", ()):
                    continue  # entries for different configs never meet
                if other.unit.role is Role.REMOVAL:
                    problem = "renames into something this table removes"
                elif family.covers(entry.old, _target(other).removesuffix(".*")):
                    problem = "forms a rename cycle"
                else:
                    problem = "chains into another rename in the same table (write old -> final new)"
                problems.append(TableError(table.file, entry.origin.line,
                                           f"{problem}: {other.describe()} at line {other.origin.line}",
                                           entry.describe()))
                break  # one problem per entry
    return problems


# How long a table that is a FIFO may wait for its writer (`--table <(cmd)` has one at once).
FIFO_WAIT_SECONDS = 30.0
# The most bytes a table may have (the largest built-in one has ~60 KB): `--table /dev/zero` must end.
MAX_TABLE_BYTES = 16 << 20


def read_table(path: Path, display: str | None = None) -> bytes:
    """A table's bytes, read exactly once: a regular file, or a pipe or FIFO (`--table <(cat t.yaml)`
    is `/dev/fd/N`, which a second read would find empty). A FIFO that no one writes to fails after
    FIFO_WAIT_SECONDS instead of hanging."""
    file = display or str(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO's open would block until a writer comes
    except FileNotFoundError:
        raise TableError(file, None, "no such table file") from None
    except OSError as exc:
        raise TableError(file, None, f"cannot read table: {exc.strerror or exc}") from None
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise TableError(file, None, "cannot read table: is a directory")
        if stat.S_ISFIFO(mode):
            poller = select.poll()
            poller.register(fd, select.POLLIN | select.POLLHUP)
            if not poller.poll(FIFO_WAIT_SECONDS * 1000):
                raise TableError(file, None, f"cannot read table: a pipe or FIFO that nothing wrote to in "
                                             f"{FIFO_WAIT_SECONDS:g} s")
        os.set_blocking(fd, True)
        chunks, size = [], 0
        while True:
            chunk = os.read(fd, min(1 << 20, MAX_TABLE_BYTES + 1 - size))
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
            size += len(chunk)
            if size > MAX_TABLE_BYTES:
                raise TableError(file, None, f"cannot read table: larger than {MAX_TABLE_BYTES >> 20} MiB")
    except OSError as exc:
        raise TableError(file, None, f"cannot read table: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def load_table(path: Path, release: str | None = None, display: str | None = None,
               data: bytes | None = None) -> ReleaseTable:
    """Load one table file. `release` is the release the table must declare (built-in tables).
    `data`: the file's bytes when the caller read them already (`read_table`)."""
    import yaml

    file = display or str(path)
    if data is None:
        data = read_table(path, file)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise TableError(file, None, f"cannot read table: {exc}") from None
    try:
        node = yaml_nodes(text)
    except RecursionError:
        raise TableError(file, None, "invalid YAML: values nested too deeply") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark else None
        problem = getattr(exc, "problem", None) or str(exc)
        raise TableError(file, line, f"invalid YAML: {problem}") from None
    if node is None:
        raise TableError(file, None, "table is empty (expected 'release:' and 'entries:')")
    data = yaml_values(node, file)
    if not isinstance(data, dict):
        raise TableError(file, 1, "table must be a mapping with 'release:' and 'entries:'")
    extra = sorted(set(data) - {"release", "entries", "__line__", "__lines__"})
    if extra:
        raise TableError(file, data["__lines__"][extra[0]], f"unexpected top-level field(s): {', '.join(map(str, extra))}")
    declared = data.get("release")
    if declared is not None and not isinstance(declared, str):
        declared = str(declared)
    if release is not None and declared != release:
        raise TableError(file, data["__lines__"].get("release", 1),
                         f"table declares release {declared!r} but is the table for {release!r}")
    entries_raw = data.get("entries")
    if entries_raw is None:
        entries_raw = []
    if not isinstance(entries_raw, list):
        raise TableError(file, data["__lines__"].get("entries"), "'entries' must be a list")
    lines = getattr(entries_raw, "lines", [None] * len(entries_raw))
    entries, problems = [], []
    for i, raw in enumerate(entries_raw):  # every broken entry is reported, not just the first
        try:
            entries.append(parse_entry(raw, file, declared or "", i, lines[i]))
        except TableError as exc:
            problems.append(exc)
    table = ReleaseTable(release=declared or "", file=file, entries=tuple(entries))
    raise_all(problems + consistency_problems(table))
    return table


@dataclass(frozen=True)
class TableSet:
    """All releases in order, with their tables (the first release is the baseline)."""

    name: str
    releases: tuple[str, ...]
    tables: dict[str, ReleaseTable]
    facts: ReleaseFacts | None = None
    # Config families for key-entry scopes (scopes.yaml): family name -> config names.
    families: dict[str, tuple[str, ...]] | None = None
    # verl's Python objects that carry its config (config-objects.yaml), for the Python provenance rule.
    config_objects: ConfigObjects = ConfigObjects()
    # Releases that are no tag (the index's `unreleased`: verl's main): asked for by name, never the default.
    unreleased: tuple[str, ...] = ()

    @property
    def newest_release(self) -> str:
        """The default `--to`: the newest release that is a tag."""
        return newest_tag(self.releases, self.unreleased)


def newest_tag(releases, unreleased) -> str:
    """The last of `releases` not in `unreleased` (the last release when every one is unreleased)."""
    tags = [r for r in releases if r not in unreleased]
    return tags[-1] if tags else releases[-1]


def load_families(path: Path, display: str) -> dict[str, tuple[str, ...]]:
    """`scopes.yaml`: `families: {name: [config, ...]}`; absent means no families (every scope names configs)."""
    import yaml

    if not path.is_file():
        return {}
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise TableError(display, None, f"cannot read config families: {exc}") from None
    families = data.get("families") if isinstance(data, dict) else None
    if not isinstance(families, dict) or not all(
            isinstance(k, str) and isinstance(v, list) and all(isinstance(c, str) for c in v)
            for k, v in families.items()):
        raise TableError(display, None, "'families' must map family names to lists of config names")
    return {name: tuple(configs) for name, configs in families.items()}


def load_config_objects(path: Path, display: str) -> ConfigObjects:
    """`config-objects.yaml` (mapping/config_objects.py); absent means none."""
    import yaml

    if not path.is_file():
        return ConfigObjects()
    try:
        data = yaml_values(yaml_nodes(path.read_text(encoding="utf-8")), display)
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise TableError(display, None, f"cannot read config objects: {exc}") from None
    try:
        return config_objects_from(data)
    except ConfigObjectsError as exc:
        raise TableError(display, exc.line, exc.message) from None


def load_release_index(directory: Path, display_as: str | None = None) -> TableSet:
    """`display_as` is the name messages and generated files give `directory` (default: its path)."""
    import yaml

    index = directory / "releases.yaml"
    display = _display(index, display_as)
    try:
        data = yaml.safe_load(index.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise TableError(display, None, f"cannot read release index: {exc}") from None
    releases = data.get("releases") if isinstance(data, dict) else None
    if not isinstance(releases, list) or not releases or not all(isinstance(r, str) for r in releases):
        raise TableError(display, None, "'releases' must be a non-empty list of release names")
    if len(set(releases)) != len(releases):
        raise TableError(display, None, "a release is listed twice")
    unreleased = data.get("unreleased", [])
    if not isinstance(unreleased, list) or not all(isinstance(r, str) and r in releases for r in unreleased):
        raise TableError(display, None, "'unreleased' must be a list of releases the index lists")
    tables = {}
    for release in releases[1:]:
        path = directory / f"{release}.yaml"
        tables[release] = load_table(path, release=release, display=_display(path, display_as))
    facts = ReleaseFacts(directory / "facts")
    scopes = directory / "scopes.yaml"
    families = load_families(scopes, _display(scopes, display_as))
    objects_path = directory / "config-objects.yaml"
    objects = load_config_objects(objects_path, _display(objects_path, display_as))
    return TableSet(directory.name, tuple(releases), tables, facts if facts.available else None, families, objects,
                    tuple(unreleased))


def _display(path: Path, display_as: str | None) -> str:
    return f"{display_as}/{path.name}" if display_as else str(path)


def load_builtin() -> TableSet:
    # Named as in the repository whatever the install layout (the wheel has migrator/_builtin_mappings):
    # generated shims record the name, so they must not depend on where they were generated.
    return load_release_index(builtin_mappings_dir() / "verl", display_as="mappings/verl")
