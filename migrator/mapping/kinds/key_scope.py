"""`key-scope`: where the unscoped key entry of the same release with that `old` applies besides main_ppo's
configs (the `ppo` family: `applies-to`), or where it does not (`not-in`): other configs that share the key."""

from __future__ import annotations

from dataclasses import dataclass

from migrator.mapping.fields import COMMON, check_commit, check_key, check_names, check_text
from migrator.mapping.kind import Entry, EntryKind, Family, Role, Section
from migrator.mapping.presentation import entry_row, links, table_section

KEY_SCOPE = Family("key-scope", chains=False)


@dataclass(frozen=True)
class KeyScope(Entry):
    """Where an unscoped key entry of the same release applies besides the `ppo` family (`applies-to`)
    and where it does not (`not-in`): configs outside PPO that share the key."""

    KIND = "key-scope"
    FAMILY = "key-scope"
    FIELDS = {"old": (True, check_key), "applies-to": (False, check_names), "not-in": (False, check_names),
              "commit": (False, check_commit), **COMMON, "why": (True, check_text)}
    old: str = ""
    applies_to: tuple[str, ...] = ()
    not_in: tuple[str, ...] = ()
    why: str = ""
    commit: str | None = None


def names_a_place(entry: KeyScope) -> str | None:
    return None if entry.applies_to or entry.not_in else "a key-scope needs applies-to or not-in"


def row(entry: KeyScope, mappings):
    return entry_row(entry, None, "scope", entry.why, applies_to=list(entry.applies_to), not_in=list(entry.not_in))


def notes_rows(mappings) -> list[dict]:
    return [{"old": e.old, "applies_to": list(e.applies_to), "not_in": list(e.not_in), "why": e.why, "prs": [e.pr]}
            for e in mappings.entries() if e.unit is KEY_SCOPE_KIND]


KEY_SCOPES = Section(
    "key_scopes", 90, "Key changes in other trainer configs", notes_rows,
    table_section(["Key", "Also in", "Not in", "Why", "PR"],
                  lambda w, r: [w.code(r["old"]), ", ".join(w.code(n) for n in r["applies_to"]),
                                ", ".join(w.code(n) for n in r["not_in"]), w.text(r["why"]), links(w, r["prs"])],
                  "A key change above applies to the PPO trainer's configs; these say which other configs "
                  "(or families of configs) it applies to as well, or not."),
    "scoped key change", 120)

KEY_SCOPE_KIND = EntryKind(
    KeyScope, family=KEY_SCOPE, role=Role.SCOPE, rules=(names_a_place,), tokens=lambda entry, mappings: (),
    codes=(), silent="it says where the key entries of its release apply; their findings carry their codes",
    shown_in=None, row=row, notes=KEY_SCOPES, position=730,
    example={"kind": "key-scope", "old": "trainer.old_name", "applies-to": ["evaluation"],
             "why": "the evaluation config has the key too", "pr": 3})
