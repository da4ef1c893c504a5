"""The config a launch actually trains with, at a release: verl's composed defaults plus the command's
overrides, applied by Hydra itself; and the differences between two such configs.

Hydra accepting a migrated script is not the same as the run being the same. `effective_config` composes
what the launch gets (the group selections it makes, then every config override Hydra accepts, in order,
on the command's own copy), and keeps it as flat leaves: dotted key -> value as written in the config
(interpolations as their `${...}` text). `compare` puts the source release's config beside the target's,
through the composed tables' renames and value changes, and returns every leaf whose value differs: a
default verl changed (the command never set it), or a setting the migrated command no longer gives.

Interpolations (`${oc.select:actor_rollout_ref.actor.use_dynamic_bsz,false}`) are resolved on the flat
leaves (`resolve`): the copy-on-write config shares nodes with the base, whose parents would resolve them
against the base instead of the command's own values. A form `resolve` does not know stays `UNKNOWN`, and
an unknown value is never reported as a difference.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property, lru_cache

from migrator.verdict.compose import ComposeError, base_config
from migrator.verdict.judge import NEUTRAL_VALUE, Verdict, apply_override, compose_groups, judge, sort_overrides
from migrator.verdict.store import ReleaseConfigs


class _Unknown:
    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN = _Unknown()  # a value only run time knows, or an interpolation `resolve` cannot follow
MISSING = "???"


@dataclass(frozen=True)
class EffectiveConfig:
    release: str
    config: str  # config_dir/config_name
    leaves: Mapping[str, object]  # key -> value as the config holds it (a list as a tuple, a mapping as a dict)
    set_keys: frozenset[str] = frozenset()  # keys the command's accepted overrides set (nodes included)
    symbolic: frozenset[str] = frozenset()  # keys set to a value the shell decides at run time
    failure: str | None = None  # the config does not compose (Hydra's message): no leaves
    rejected: frozenset[int] = frozenset()  # positions of the overrides Hydra rejects (left out of the leaves)
    added: tuple[str, ...] = ()  # keys the command added to `leaves` after verl's own, in order (OmegaConf's)

    def sets(self, key: str) -> bool:
        """Does the command set `key`, or a node above it?"""
        parts = key.split(".")
        return any(".".join(parts[:n]) in self.set_keys for n in range(1, len(parts) + 1))

    def resolve(self, key: str) -> object:
        return resolve(self.leaves, key)

    def disabled(self, key: str) -> bool:
        """Is `key` under a node whose `enable` is false (a component the run does not start)?"""
        off = self._switched_off
        if not off:
            return False
        parts = key.split(".")
        return any(".".join(parts[:n]) in off for n in range(1, len(parts)))

    @cached_property
    def _switched_off(self) -> frozenset[str]:
        """The nodes whose `enable` leaf is false."""
        return frozenset(key[:-len(".enable")] for key in self.leaves
                         if key.endswith(".enable") and self.resolve(key) is False)


def effective_config(configs: ReleaseConfigs, config_dir: str, config_name: str,
                     overrides: tuple[str, ...] | list[str]) -> EffectiveConfig:
    """What the launch runs with at `configs.release` (see the module's docstring)."""
    return _effective(configs, config_dir, config_name, tuple(overrides))


@lru_cache(maxsize=256)
def _effective(configs: ReleaseConfigs, config_dir: str, config_name: str,
               overrides: tuple[str, ...]) -> EffectiveConfig:
    config = f"{config_dir}/{config_name}"
    verdict = Verdict(config)
    sorted_ = sort_overrides(configs, config_dir, config_name, list(overrides), verdict)
    if sorted_ is None:
        return EffectiveConfig(configs.release, config, {}, failure=verdict.failure or "chosen at run time")
    parsed, groups = sorted_
    # Hydra's verdict decides what is applied: a rejected override (a group option or key the release lacks)
    # is left out, and its position kept, so that a comparison can leave it out on both sides.
    rejected = frozenset(r.index for r in judge(configs, config_dir, config_name, list(overrides)).rejections)
    try:
        selected = compose_groups(configs, config_dir, config_name, groups, verdict)
        base = (configs, config_dir, config_name, selected)
        shared = base_leaves(*base)
        flat = Leaves(shared)
        flat._nodes = shared.nodes  # an add never makes a node (its parent exists), so the base's index holds
    except ComposeError as exc:
        return EffectiveConfig(configs.release, config, {}, failure=str(exc))
    # A plain `key=value` on a leaf is Hydra's assignment of the parsed value, so it is written into the
    # flat leaves. Anything else (a `+`/`~`, a mapping value, a key that is a node) is applied by Hydra
    # itself, on the command's own copy.
    accepted = [item for item in parsed if item.index not in rejected]
    if not all(_plain_assignment(item.override, flat) for item in accepted):
        return dataclasses.replace(_applied_by_hydra(base, accepted), rejected=rejected)
    set_keys, symbolic, added = set(), set(), []
    for item in accepted:
        key = item.override.key_or_group
        if key not in flat:
            added.append(key)
        parent = key.rpartition(".")[0]
        if flat.get(parent) == {}:  # the empty mapping becomes a node with this key
            del flat[parent]
            flat._nodes = flat.nodes | {parent}
        flat[key] = _as_leaf(item.override.value())
        set_keys.add(key)
        if NEUTRAL_VALUE in item.text.partition("=")[2]:
            symbolic.add(key)
    return EffectiveConfig(configs.release, config, flat, frozenset(set_keys), frozenset(symbolic),
                           rejected=rejected, added=tuple(added))


def _plain_assignment(override, flat: Mapping[str, object]) -> bool:
    """A `key=value` on an existing leaf, or a `+key=value` adding a leaf under an existing node, with a
    scalar or a list of scalars: Hydra's apply of it is the assignment of its parsed value."""
    if override.is_delete() or override.is_sweep_override():
        return False
    key = override.key_or_group
    if override.is_add():
        parent = key.rpartition(".")[0]
        nodes = flat.nodes if isinstance(flat, Leaves) else {k.rpartition(".")[0] for k in flat}
        empty_parent = flat.get(parent) == {}  # `override_transformer_config: {}` takes its first key
        if key in flat or key in nodes or (parent and parent not in nodes and not empty_parent):
            return False
    elif key not in flat or isinstance(flat[key], dict):
        return False
    try:
        value = override.value()
    except Exception:  # noqa: BLE001 - a value Hydra's grammar builds at apply time
        return False
    return not isinstance(value, dict) and not (isinstance(value, list) and any(isinstance(v, (dict, list))
                                                                               for v in value))


def _as_leaf(value: object) -> object:
    return tuple(value) if isinstance(value, list) else value


def _applied_by_hydra(base: tuple, accepted: list) -> EffectiveConfig:
    from migrator.verdict.cow import private_root

    configs, config_dir, config_name, _selected = base
    cfg = private_root(base_config(*base))
    set_keys, symbolic = set(), set()
    for item in accepted:
        if apply_override(cfg, item.override) is not None:
            continue  # accepted alone, refused after an earlier override: as Hydra does, in order
        key = item.override.key_or_group
        set_keys.add(key)
        if NEUTRAL_VALUE in item.text.partition("=")[2]:
            symbolic.add(key)
    return EffectiveConfig(configs.release, f"{config_dir}/{config_name}", Leaves(leaves(cfg)), frozenset(set_keys),
                           frozenset(symbolic))


@lru_cache(maxsize=64)
def base_leaves(configs: ReleaseConfigs, config_dir: str, config_name: str, groups: tuple[str, ...]) -> Leaves:
    """The leaves of a composed base (with these group selections), flattened once per process; never
    written (each command copies them)."""
    return Leaves(leaves(base_config(configs, config_dir, config_name, groups)))


def leaves(cfg) -> dict[str, object]:
    """Every leaf of a composed config as `dotted key -> value`, without resolving interpolations; an empty
    mapping is a leaf of its own (`engine_kwargs.vllm: {}`); Hydra's own `hydra.*` node is left out."""
    out: dict[str, object] = {}
    stack = [("", cfg)]
    while stack:
        prefix, node = stack.pop()
        content = node.__dict__.get("_content")
        if isinstance(content, dict) and content:
            for name, child in content.items():
                key = f"{prefix}.{name}" if prefix else str(name)
                if key != "hydra":
                    stack.append((key, child))
        elif prefix:
            out[prefix] = _value(node)
    return out


def _value(node) -> object:
    content = node.__dict__.get("_content")
    if isinstance(content, dict):
        return {str(name): _value(child) for name, child in content.items()}
    if isinstance(content, list):
        return tuple(_value(child) for child in content)
    if isinstance(content, str) and content.startswith("${"):
        return content
    return node._value()


# -- interpolations, on the flat leaves --------------------------------------------------------------

_WHOLE = re.compile(r"\$\{(?P<body>.*)\}\Z", re.S)
_KEY = re.compile(r"\.*[A-Za-z_][\w-]*(?:\.[A-Za-z_][\w-]*)*\Z|\.+\Z")


def resolve(leaves: Mapping[str, object], key: str, _depth: int = 0) -> object:
    """`key`'s value with interpolations followed the way OmegaConf would, or UNKNOWN for forms it does not
    know (string interpolation, other resolvers)."""
    if key not in leaves:
        return UNKNOWN
    value = leaves[key]
    if _depth > 32:
        return UNKNOWN
    if not (isinstance(value, str) and "${" in value):
        return value
    m = _WHOLE.match(value)
    if m is not None and _balanced(m.group("body")):
        return _interpolated(leaves, key, m.group("body").strip(), _depth)
    return _string_interpolation(leaves, key, value, _depth)


def _string_interpolation(leaves, key: str, value: str, depth: int) -> object:
    """`checkpoints/${trainer.project_name}/x`: each `${...}` resolved and written into the text, as
    OmegaConf does (`str()` of each value)."""
    out, i = [], 0
    while i < len(value):
        start = value.find("${", i)
        if start < 0:
            out.append(value[i:])
            break
        out.append(value[i:start])
        depth_, j = 0, start + 1
        while j < len(value):
            depth_ += value[j] == "{"
            depth_ -= value[j] == "}"
            j += 1
            if depth_ == 0:
                break
        if depth_:
            return UNKNOWN
        part = _interpolated(leaves, key, value[start + 2:j - 1].strip(), depth + 1)
        if part is UNKNOWN or isinstance(part, (dict, tuple)):
            return UNKNOWN
        out.append(str(part))
        i = j
    return "".join(out)


def _interpolated(leaves, key: str, body: str, depth: int) -> object:
    if body.startswith("oc.select:"):
        args = _split_args(body[len("oc.select:"):])
        if not args or len(args) > 2:
            return UNKNOWN
        target = _absolute(key, args[0].strip())
        if target is None:
            return UNKNOWN
        if target in leaves and leaves[target] is not None and leaves[target] != MISSING:
            return resolve(leaves, target, depth + 1)
        if _node_exists(leaves, target):
            return UNKNOWN  # a node, not a leaf: a mapping value
        return _literal(leaves, key, args[1].strip(), depth) if len(args) == 2 else None
    if ":" in body.split(".", 1)[0]:
        return UNKNOWN  # another resolver (`oc.env:`, ...)
    target = _absolute(key, body)
    if target is None or target not in leaves:
        return UNKNOWN
    return resolve(leaves, target, depth + 1)


def interpolated_key(key: str, value: object) -> str | None:
    """The key a leaf's whole interpolation names (`${a.b}`, `${..b}`, `${oc.select:a.b,null}`: `a.b`), made
    absolute from `key`; None for any other value or resolver."""
    m = _WHOLE.match(value.strip()) if isinstance(value, str) else None
    if m is None:
        return None
    body = m.group("body").strip()
    if body.startswith("oc.select:"):
        args = _split_args(body[len("oc.select:"):])
        body = args[0].strip() if args else ""
    elif ":" in body.split(".", 1)[0]:
        return None  # another resolver
    return _absolute(key, body)


def _absolute(key: str, reference: str) -> str | None:
    """A reference made absolute: `a.b` stays, `.x` is a sibling of `key`, `..x` one node up."""
    if not _KEY.match(reference):
        return None
    if not reference.startswith("."):
        return reference
    dots = len(reference) - len(reference.lstrip("."))
    parts = key.split(".")[:-1]  # the node holding `key`
    if dots - 1 > len(parts):
        return None
    base = parts[:len(parts) - (dots - 1)]
    rest = reference[dots:]
    return ".".join([*base, rest]) if rest else ".".join(base) or None


class Leaves(dict):
    """A config's leaves (`key -> value`) that know their nodes: `a.b` for a leaf `a.b.c`."""

    _nodes: frozenset[str] | None = None

    @property
    def nodes(self) -> frozenset[str]:
        if self._nodes is None:
            self._nodes = frozenset(key[:n] for key in self for n in range(len(key)) if key[n] == ".")
        return self._nodes


def _node_exists(leaves, key: str) -> bool:
    if isinstance(leaves, Leaves):
        return key in leaves.nodes
    prefix = key + "."
    return any(k.startswith(prefix) for k in leaves)


def _literal(leaves, key: str, text: str, depth: int) -> object:
    if text.startswith("${"):
        m = _WHOLE.match(text)
        return _interpolated(leaves, key, m.group("body").strip(), depth + 1) if m else UNKNOWN
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    lowered = text.lower()
    if lowered in ("null", "none", "~"):
        return None
    if lowered in ("true", "false"):
        return lowered == "true"
    for number in (int, float):
        try:
            return number(text)
        except ValueError:
            pass
    return text


def _split_args(text: str) -> list[str]:
    """Split `a,${b,c},d` at its top-level commas."""
    out, depth, current, quote = [], 0, [], ""
    for ch in text:
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append("".join(current))
            current = []
            continue
        current.append(ch)
    out.append("".join(current))
    return out


def _balanced(body: str) -> bool:
    """Is `body` one interpolation's inside (`${a}-${b}` is two, glued by text)?"""
    depth = 0
    for n, ch in enumerate(body):
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth < 0:
                return False
        elif ch == "$" and depth == 0 and body[n + 1:n + 2] == "{" and n > 0 and body[:n].strip():
            if not body[:n].rstrip().endswith(","):
                return False
    return depth == 0


# -- before and after --------------------------------------------------------------------------------

@dataclass(frozen=True)
class Difference:
    key: str  # at the target
    source_key: str  # at the source (the same key unless the tables renamed it)
    before: object  # the effective value at the source, as it composes there
    after: object
    cause: str  # "default": neither command sets it; "setting": a command sets it
    mapped: object = None  # `before` in the target's terms (the tables' value changes applied)
    note: str | None = None  # why the tables leave the target's value (a moved entry point's own default)


@dataclass
class Comparison:
    differences: list[Difference] = field(default_factory=list)
    unknown: int = 0  # leaves whose value only run time knows, on either side: not compared


NOT_RENAMED = object()


def compare(before: EffectiveConfig, after: EffectiveConfig, rename: Callable[[str], object] | None = None,
            revalue: Callable[[str, object], object] | None = None,
            inactive: Callable[[EffectiveConfig, str], bool] | None = None) -> Comparison:
    """Every leaf of `before` whose value at the target differs. `rename(source key)`: the key at the target,
    None when the tables remove it (an intended edit, not compared), NOT_RENAMED to keep it. `revalue(source
    key, value)`: the value in the target's terms (a value the tables rename), else the value itself.
    `inactive(config, key)`: the key belongs to a component that run does not start (not compared)."""
    out = Comparison()
    after_leaves = after.leaves
    for source_key, raw in before.leaves.items():
        if source_key.endswith("_target_") and source_key.rpartition(".")[2] == "_target_":
            continue  # the class verl instantiates for a node: its own code's choice, not a training setting
        key = rename(source_key) if rename is not None else NOT_RENAMED
        if key is None:
            continue
        key = source_key if key is NOT_RENAMED else key
        if key != source_key and key in before.leaves:
            continue  # the source has the new key itself beside the old (a deprecated alias): that one is compared
        if key not in after_leaves:
            continue  # gone at the target: Hydra's verdict and the tables' removals speak for it
        if _plainly_equal(raw, after_leaves[key]) and (revalue is None or same_value(revalue(source_key, raw), raw)):
            continue  # the same literal on both sides (most leaves): nothing to resolve
        if before.disabled(source_key) or after.disabled(key):
            continue  # a component off on either side: its own `enable` (or what turns it on) differs, if anything
        if inactive is not None and (inactive(before, source_key) or inactive(after, key)):
            continue
        if before.sets(source_key) and source_key in before.symbolic or after.sets(key) and key in after.symbolic:
            out.unknown += 1
            continue
        old, new = before.resolve(source_key), after.resolve(key)
        if _shell_decided(old) or _shell_decided(new):  # through an interpolation of a key the shell sets
            out.unknown += 1
            continue
        if old is UNKNOWN or new is UNKNOWN:
            if before.leaves[source_key] != after.leaves[key]:
                out.unknown += 1
            continue
        mapped = revalue(source_key, old) if revalue is not None else old
        if same_value(mapped, new):
            continue
        cause = "setting" if before.sets(source_key) or after.sets(key) else "default"
        out.differences.append(Difference(key, source_key, old, new, cause, mapped))
    return out


def compare_through_tables(before: EffectiveConfig, after: EffectiveConfig, mappings, context=None,
                           inactive: Callable[[EffectiveConfig, str], bool] | None = None) -> Comparison:
    """`compare` through the composed tables (a MappingSet): their key changes in `context` (a key they
    remove is not compared) and their value changes."""
    def rename(key):
        change = mappings.key(key, context)
        return NOT_RENAMED if change is None else change.new

    def revalue(key, value):
        if isinstance(value, (dict, tuple)):
            return value
        change = mappings.value(key, shown(value))
        return value if change is None or change.new is None else change.new

    return compare(before, after, rename, revalue, inactive)


def _plainly_equal(a: object, b: object) -> bool:
    """The same literal, no interpolation and no shell-decided value in it."""
    if type(a) is not type(b) or a != b:
        return False
    if isinstance(a, str):
        return "${" not in a and NEUTRAL_VALUE not in a
    if isinstance(a, (tuple, dict)):
        return "${" not in repr(a) and NEUTRAL_VALUE not in repr(a)
    return True


def _shell_decided(value: object) -> bool:
    if isinstance(value, str):
        return NEUTRAL_VALUE in value
    if isinstance(value, tuple):
        return any(_shell_decided(v) for v in value)
    if isinstance(value, dict):
        return any(_shell_decided(v) for v in value.values())
    return False


def same_value(a: object, b: object) -> bool:
    """Equal as verl reads them: 0 and 0.0 alike, but a bool is never a number, and None is no value."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return float(a) == float(b)
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_value(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def shown(value: object) -> str:
    """A value as a Hydra override writes it (`null`, `true`, `[a,b]`)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        return "[" + ",".join(shown(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{k}:{shown(v)}" for k, v in value.items()) + "}"
    return str(value)
