"""Every entry kind is one unit (migrator/mapping/kind.py, `EntryKind`) found by one registry
(migrator/mapping/kinds/): this enumerates them and fails when a kind lacks a piece: its fields, its
rules and role in composition, its prefilter tokens, its codes (each documented), its `mappings show`
row, its release-notes section, its section of docs/table-format.md. No finding has the catch-all VM199.
"""

from __future__ import annotations

import ast
import re

import pytest
import yaml

from migrator import release_notes
from migrator.cli.mappings import shown_rows
from migrator.codes import RULES, finding_code
from migrator.mapping import compose
from migrator.mapping.fields import COMMON
from migrator.mapping.kind import SEVERITIES, Code, Entry, Family, Role, Row, Section
from migrator.mapping.kinds import FINDING_CODES, KINDS
from migrator.mapping.load import load_release_index
from tests.helpers import REPO

UNITS = list(KINDS.values())
TABLE_FORMAT = (REPO / "docs" / "table-format.md").read_text(encoding="utf-8")
CODES_DOC = (REPO / "docs" / "codes.md").read_text(encoding="utf-8")
# Fields every kind takes (and value entries' provenance), described once at the top of docs/table-format.md.
SHARED_FIELDS = set(COMMON) | {"release", "file"}
EDITS_NOTHING = (Role.NO_ACTION, Role.SCOPE)


def by_name(unit):
    return unit.name


@pytest.fixture(scope="module")
def composed(tmp_path_factory):
    """Each kind's example alone in the last release of a three-release table set, composed from the
    middle release (so the run names the files' release, as `--from` does)."""
    out = {}
    for unit in UNITS:
        directory = tmp_path_factory.mktemp(unit.name.replace("-", "_")) / "t"
        directory.mkdir()
        (directory / "releases.yaml").write_text(yaml.safe_dump({"releases": ["r0", "r1", "r2"]}))
        (directory / "r1.yaml").write_text(yaml.safe_dump({"release": "r1", "entries": []}))
        (directory / "r2.yaml").write_text(yaml.safe_dump({"release": "r2", "entries": [unit.example]}))
        mappings = compose(load_release_index(directory), "r1", "r2")
        (entry,) = mappings.entries()
        out[unit.name] = mappings, entry
    return out


def test_the_registry_finds_every_kind_once_and_in_order():
    assert len(UNITS) == len({unit.name for unit in UNITS}) >= 27
    assert [unit.position for unit in UNITS] == sorted(unit.position for unit in UNITS)
    assert all(unit.entry.unit is unit and unit.entry.KIND == unit.name for unit in UNITS)


def test_only_the_kind_modules_declare_entry_classes():
    """Adding a kind touches no list elsewhere: no class outside migrator/mapping/kinds/ declares a `KIND`."""
    found = []
    for path in (REPO / "migrator").rglob("*.py"):
        if "kinds" in path.relative_to(REPO / "migrator").parts:
            continue
        found += [f"{path.relative_to(REPO)}:{n.lineno}" for n in ast.walk(ast.parse(path.read_text()))
                  if isinstance(n, ast.ClassDef) and any(
                      isinstance(s, ast.Assign) and any(getattr(t, "id", None) == "KIND" for t in s.targets)
                      for s in n.body)]
    assert found == [], found


@pytest.mark.parametrize("unit", UNITS, ids=by_name)
def test_fields(unit, composed):
    assert issubclass(unit.entry, Entry)
    assert unit.fields and all(isinstance(required, bool) and callable(check)
                               for required, check in unit.fields.values())
    assert unit.fields["pr"][0], "every entry cites its PR"
    example = {k for k in unit.example if k != "kind"}
    assert example <= set(unit.fields) and {k for k, (req, _) in unit.fields.items() if req} <= example
    _, entry = composed[unit.name]
    assert type(entry) is unit.entry


@pytest.mark.parametrize("unit", UNITS, ids=by_name)
def test_rules_and_composition(unit, composed):
    assert isinstance(unit.family, Family) and unit.family.name == unit.entry.FAMILY
    assert isinstance(unit.role, Role)
    assert all(callable(rule) for rule in unit.rules)
    _, entry = composed[unit.name]
    assert unit.problem(entry) is None


@pytest.mark.parametrize("unit", UNITS, ids=by_name)
def test_prefilter_tokens(unit, composed):
    mappings, entry = composed[unit.name]
    tokens = set(unit.tokens(entry, mappings))
    assert all(isinstance(t, str) and t for t in tokens)
    if unit.role in EDITS_NOTHING:
        assert not tokens, "a kind that edits nothing lets no file through"
    else:
        assert tokens, "the prefilter must let the files this kind changes through"
        assert tokens <= mappings.old_tokens()


@pytest.mark.parametrize("unit", UNITS, ids=by_name)
def test_codes_with_severities(unit):
    assert all(isinstance(code, Code) and code.severity in SEVERITIES and code.code in RULES
               and RULES[code.code].severity == code.severity for code in unit.codes)
    if unit.role in EDITS_NOTHING:
        assert not unit.codes and unit.silent, "a kind that reports nothing says why"
    else:
        # Any edit can end as a manual step (a notebook line spanning several source lines, an overlap).
        assert any(code.severity == "manual" and not code.explicit for code in unit.codes)


@pytest.mark.parametrize("unit", UNITS, ids=by_name)
def test_codes_are_documented(unit):
    for code in unit.codes:
        row = re.search(rf"^\| {code.code} \|.*$", CODES_DOC, re.M)
        assert row and f"`{unit.name}`" in row.group(0), f"{code.code} in docs/codes.md names {unit.name}"
    if unit.silent:
        report_nothing = CODES_DOC[CODES_DOC.index("report nothing of their own"):][:400]
        assert f"`{unit.name}`" in report_nothing


@pytest.mark.parametrize("unit", UNITS, ids=by_name)
def test_show_row(unit, composed):
    mappings, entry = composed[unit.name]
    own = unit.row(entry, mappings)
    assert isinstance(own, Row) and entry in own.entries
    assert {"family", "old", "new", "action", "prs", "releases"} <= set(own.fields)
    shown = shown_rows(mappings)
    assert any(entry in row.entries for row in shown), "mappings show lists every entry"


@pytest.mark.parametrize("unit", UNITS, ids=by_name)
def test_release_notes_section(unit, composed):
    mappings, entry = composed[unit.name]
    assert isinstance(unit.notes, Section) and unit.notes.title and unit.notes.summary
    guide = release_notes.build_guide(mappings)
    rows = guide.rows[unit.notes.name]
    assert any(entry.pr in row["prs"] for row in rows), f"{unit.notes.title} lists the {unit.name} entry"
    text = release_notes.render(guide, "md")
    assert f"## {unit.notes.title}\n" in text or f"### {unit.notes.title}\n" in text


@pytest.mark.parametrize("unit", UNITS, ids=by_name)
def test_docs_table_format_section(unit):
    heading = f"\n### `{unit.name}`\n"
    assert heading in TABLE_FORMAT, f"docs/table-format.md has a section for {unit.name}"
    section = TABLE_FORMAT[TABLE_FORMAT.index(heading) + len(heading):].split("\n#", 1)[0]
    fields_line = next(line for line in section.splitlines() if line.startswith("Fields: "))
    required_part, _, optional_part = fields_line.partition("; optional ")
    documented = set(re.findall(r"`([a-z-]+)`", fields_line))
    own = set(unit.fields) - SHARED_FIELDS
    assert own <= documented <= set(unit.fields), f"{unit.name}: documented {documented}, declared {own}"
    required = {name for name, (req, _) in unit.fields.items() if req} - SHARED_FIELDS
    assert required <= set(re.findall(r"`([a-z-]+)`", required_part))


def test_no_finding_uses_the_catch_all_code():
    assert "VM199" not in RULES and "VM199" not in CODES_DOC
    assert all(code.code != "VM199" for code in FINDING_CODES.values())


def _literal_findings():
    """(file:line, kind, severity) of every `Finding(offset, "kind", ...)` in the package with a literal kind
    and no code of its own, and every `Edit(..., "kind", ...)` (an edit may end as a manual finding)."""
    for path in (REPO / "migrator").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call):
                continue
            name = getattr(node.func, "id", getattr(node.func, "attr", None))
            at = f"{path.relative_to(REPO)}:{node.lineno}"
            keywords = {k.arg: k.value for k in node.keywords}
            if name == "Finding" and len(node.args) > 1 and isinstance(node.args[1], ast.Constant):
                if "code" in keywords or len(node.args) > 6:
                    continue
                severity = keywords.get("severity", node.args[5] if len(node.args) > 5 else None)
                severities = ["manual"] if severity is None else \
                    [severity.value] if isinstance(severity, ast.Constant) else \
                    [c.value for c in ast.walk(severity) if isinstance(c, ast.Constant) and c.value in SEVERITIES]
                for value in severities:
                    yield at, node.args[1].value, value
            elif name == "Edit" and len(node.args) > 3 and isinstance(node.args[3], ast.Constant):
                yield at, node.args[3].value, "manual"


def test_every_finding_a_rewriter_makes_has_its_kinds_code():
    found = list(_literal_findings())
    assert len(found) > 50  # the scan sees the rewriters' findings
    missing = []
    for at, kind, severity in found:
        try:
            assert finding_code(kind, severity) in RULES
        except LookupError:
            missing.append(f"{at}: {kind} {severity}")
    assert missing == [], missing


def test_every_edit_of_an_entry_kind_can_become_a_manual_finding():
    for unit in UNITS:
        if unit.role not in EDITS_NOTHING:
            reported_as = {code.finding or unit.name for code in unit.codes if code.severity == "manual"}
            assert all((kind, "manual") in FINDING_CODES for kind in reported_as) and reported_as, unit.name
