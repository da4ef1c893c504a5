"""`key-rename`, `key-removal` and `key-no-action`: Hydra config keys (a subtree when `old` ends in `.*`).
Without `scope:` an entry is about main_ppo's config (the `ppo` family); with it, about the configs,
families or entry modules it names (docs/table-format.md, "Entry points")."""

from __future__ import annotations

from dataclasses import dataclass

from migrator.mapping.changes import EntryContext
from migrator.mapping.fields import COMMON, SCOPED, FileCondition, check_action, check_key, check_text, check_when
from migrator.mapping.kind import Code, Entry, EntryKind, Family, Group, GroupChoice, Role, Row, Section, new_differs
from migrator.mapping.kinds.entry_point import LAUNCHES
from migrator.mapping.presentation import entry_row, links, releases, table_section

SUBTREE = ".__subtree__"  # a probe for a whole subtree: `a.b.__subtree__` asks what becomes of `a.b.*`


def covers(old: str, key: str) -> bool:
    return key == old or (old.endswith(".*") and (key == old[:-2] or key.startswith(old[:-1])))


KEY = Family("key", covers)
UNCHANGED = "composes to no change over the range: a later entry undoes it, or verl brought the key back"


class _KeyEntry:
    old: str
    scope: tuple[str, ...]

    @property
    def is_subtree(self) -> bool:
        return self.old.endswith(".*")

    @property
    def identity(self) -> tuple:
        return (self.FAMILY, self.old, self.scope)


@dataclass(frozen=True)
class KeyRename(_KeyEntry, Entry):
    KIND = "key-rename"
    FAMILY = "key"
    FIELDS = {"old": (True, check_key), "new": (True, check_key), "manual-when": (False, check_when),
              "hint": (False, check_text), **COMMON, **SCOPED}
    old: str = ""
    new: str = ""
    scope: tuple[str, ...] = ()
    commit: str | None = None
    # In a file that matches, `new` may be the wrong home (at v0.5.0 `profiler.discrete` drove the NPU
    # profiler too; its v0.6.0 home on Ascend is `...tool_config.npu.discrete`): no edit, a manual step
    # with `hint` (MappingSet.for_file).
    manual_when: FileCondition | None = None
    hint: str | None = None


@dataclass(frozen=True)
class KeyRemoval(_KeyEntry, Entry):
    KIND = "key-removal"
    FAMILY = "key"
    FIELDS = {"old": (True, check_key), "action": (True, check_action), "hint": (True, check_text), **COMMON,
              **SCOPED}
    old: str = ""
    action: str = "warn"
    hint: str = ""
    scope: tuple[str, ...] = ()
    commit: str | None = None


@dataclass(frozen=True)
class KeyNoAction(_KeyEntry, Entry):
    KIND = "key-no-action"
    FAMILY = "key"
    FIELDS = {"old": (True, check_key), **COMMON, **SCOPED, "why": (True, check_text)}
    old: str = ""
    why: str = ""
    scope: tuple[str, ...] = ()
    commit: str | None = None


def subtree_on_both(entry: KeyRename) -> str | None:
    if entry.old.endswith(".*") != entry.new.endswith(".*"):
        return "a subtree rename needs '.*' on both old and new"
    return None


def manual_when_has_hint(entry: KeyRename) -> str | None:
    if (entry.manual_when is None) != (entry.hint is None):
        return "manual-when and hint go together: the hint is the manual step in the files that match"
    return None


def tokens(entry, mappings):
    """A subtree and a scoped key always; a key of main_ppo's config only when it composes to a change
    (`actor_rollout_ref.model.enable_gradient_checkpointing`, which only a no-action entry names, is in
    nearly every script)."""
    key = entry.old.removesuffix(".*")
    if entry.scope or mappings.is_subtree(key) or mappings.key(key) is not None:
        yield key


# -- mappings show ----------------------------------------------------------------------------------

def composed_rows(mappings) -> list[Row]:
    """One row per key of main_ppo's config that some entry names, composed over the range."""
    rows = []
    for old in sorted(mappings.old_keys()):
        is_subtree = mappings.is_subtree(old)
        change = mappings.key(old + SUBTREE) if is_subtree else mappings.key(old)
        if change is None:
            continue
        new = change.new
        if is_subtree and new is not None:
            new = new.removesuffix(SUBTREE) + ".*"
        rows.append(Row({"family": "key", "old": old + ".*" if is_subtree else old, "new": new,
                         "action": change.action, "hint": change.hint, "prs": list(change.prs),
                         "releases": releases(change.entries)}, change.entries))
    return rows


KEYS = Group("key", 10, composed_rows)


def context_row(entry, mappings) -> Row:
    """The entry composed in the config it is about (its first scope; main_ppo's without one)."""
    names = entry.scope
    context = None
    if names:
        context = EntryContext(names[0], None) if "." in names[0] else \
            EntryContext(None, mappings.families.get(names[0], (names[0],))[0])
    change = mappings.key(entry.old.replace(".*", SUBTREE), context)
    new = change.new.replace(SUBTREE, ".*") if change and change.new else None
    where = {"scope": list(names)} if names else {}
    fields = {"family": "key", "old": entry.old, "new": new, "action": change.action if change else "unchanged",
              "hint": change.hint if change else UNCHANGED, **where,
              "prs": list(change.prs) if change else [entry.pr],
              "releases": releases(change.entries) if change else [entry.origin.release]}
    return Row(fields, change.entries if change else (entry,))


def no_action_row(entry, mappings) -> Row:
    return entry_row(entry, None, "no action", entry.why, **({"scope": list(entry.scope)} if entry.scope else {}))


# -- release notes ----------------------------------------------------------------------------------

def _changes(mappings):
    for old in sorted(mappings.old_keys()):
        is_subtree = mappings.is_subtree(old)
        change = mappings.key(old + SUBTREE if is_subtree else old)
        if change is not None:
            yield old + ".*" if is_subtree else old, is_subtree, change


def renamed_rows(mappings) -> list[dict]:
    """`unless`: the hint of a `manual-when` entry of the chain (where the rename is a manual step instead)."""
    rows = []
    for shown, is_subtree, change in _changes(mappings):
        if change.action != "rename":
            continue
        held = next((e.hint for e in change.entries if getattr(e, "manual_when", None) is not None), None)
        rows.append({"old": shown, "new": change.new.removesuffix(SUBTREE) + ".*" if is_subtree else change.new,
                     **({"unless": held} if held else {}), "prs": list(change.prs),
                     "releases": releases(change.entries)})
    return rows


def removed_rows(mappings) -> list[dict]:
    rows = []
    for shown, _, change in _changes(mappings):
        if change.action == "rename":
            continue
        guidance = change.hint or ""
        note = change.entries[-1].note
        if note and note not in guidance:
            guidance = f"{guidance} ({note})" if guidance else note
        rows.append({"old": shown, "action": change.action, "guidance": guidance, "prs": list(change.prs)})
    return rows


def _status(action: str) -> str:
    return "removed (the override is deleted)" if action == "remove" else "ineffective (warn only, no edit)"


def left_alone_rows(mappings) -> list[dict]:
    """Entries that need nothing from a user: what verl changed and why it does not matter."""
    return [{"family": e.FAMILY, "old": e.old, "why": e.why, "prs": [e.pr]}
            for e in mappings.entries() if e.unit.role is Role.NO_ACTION]


RENAMED_KEYS = Section(
    "renamed_keys", 40, "Renamed config keys", renamed_rows,
    table_section(["Old key", "New key", "PR"],
                  lambda w, r: [w.code(r["old"]), w.code(r["new"]) + (f" (a manual step instead: {w.text(r['unless'])})"
                                                                    if r.get("unless") else ""), links(w, r["prs"])],
                  "Renames across several releases are shown composed, with every PR of the chain."),
    "renamed config key", 30, always=True)
REMOVED_KEYS = Section(
    "removed_keys", 50, "Removed and ineffective config keys", removed_rows,
    table_section(["Key", "Status", "Guidance", "PR"],
                  lambda w, r: [w.code(r["old"]), _status(r["action"]), w.text(r["guidance"]), links(w, r["prs"])],
                  "Removed keys are deleted from scripts by verl-migrate; ineffective keys are only reported."),
    "removed or ineffective config key", 40, always=True)
LEFT_ALONE = Section(
    "left_alone", 95, "Changes that need nothing from you", left_alone_rows,
    table_section(["Kind", "Name", "Why nothing changes for you", "PR"],
                  lambda w, r: [r["family"], w.code(r["old"]), w.text(r["why"]), links(w, r["prs"])],
                  "verl changed these, but scripts and code that use them keep working: verl-migrate leaves them "
                  "as they are."),
    "left-alone change", 130)


# A scoped entry is about another entry point's config: listed beside the launches.
BY_SCOPE = GroupChoice((KEYS, LAUNCHES), lambda entry: LAUNCHES if entry.scope else KEYS)


KEY_RENAME = EntryKind(
    KeyRename, family=KEY, role=Role.MOVE, rules=(subtree_on_both, manual_when_has_hint, new_differs), tokens=tokens,
    codes=(Code("VM113", "manual", "renamed config key the tool cannot rewrite here: edit by hand"),
           Code("VM115", "manual", "renamed config key in Python code on an object not provably verl's config: "
                "rename every place by hand, or none", explicit=True),
           Code("VM116", "manual", "a `+` the target release refuses, which the tool cannot drop here: drop it by hand",
                finding="plus-dropped")),
    shown_in=BY_SCOPE, row=context_row, notes=RENAMED_KEYS, position=200,
    example={"kind": "key-rename", "old": "trainer.old_name", "new": "trainer.new_name", "pr": 3})
KEY_REMOVAL = EntryKind(
    KeyRemoval, family=KEY, role=Role.REMOVAL, rules=(), tokens=tokens,
    codes=(Code("VM111", "manual", "removed config key: delete or replace it by hand"),
           Code("VM112", "warning", "config key that has no effect in the target release (warn-only)",
                finding="key-warn"),
           Code("VM114", "info", "removed config key, deleted automatically")),
    shown_in=BY_SCOPE, row=context_row, notes=REMOVED_KEYS, position=201,
    example={"kind": "key-removal", "old": "trainer.gone", "action": "remove", "hint": "nothing replaces it",
             "pr": 4})
KEY_NO_ACTION = EntryKind(
    KeyNoAction, family=KEY, role=Role.NO_ACTION, rules=(), tokens=tokens, codes=(),
    silent="the key is left as it is: nothing to edit, nothing to report",
    shown_in=None, row=no_action_row, notes=LEFT_ALONE, position=202,
    example={"kind": "key-no-action", "old": "trainer.internal._target_", "why": "internal dataclass target",
             "pr": 5})
