"""`verl-migrate release-notes`: a migration guide for one verl release, from the composed tables.

The guide is built from the `MappingSet` (so renames across several releases appear composed, with
every PR of the chain), one section per release-notes `Section` the entry kinds declare
(migrator/mapping/kinds/), rendered as Markdown, reStructuredText or JSON in a fixed order. With a
verl repository it adds each PR's title and merge date, read from one pass over `git log`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from migrator.mapping.compose import MappingSet
from migrator.mapping.kinds import sections
from migrator.pulls import pr_label, pr_url, repo_of

EMPTY = "—"


@dataclass(frozen=True)
class PullRequest:
    number: int
    title: str
    date: str


@dataclass
class Guide:
    """What the guide says, independent of the output format: each section's rows, by section name."""

    from_release: str
    to_release: str
    rows: dict[str, list[dict]] = field(default_factory=dict)
    pull_requests: dict[int, PullRequest | None] = field(default_factory=dict)

    def counts(self) -> dict[str, int]:
        return {section.name: len(self.rows.get(section.name, ()))
                for section in sorted(sections(), key=lambda section: section.summary_position)}


def build_guide(mappings: MappingSet) -> Guide:
    guide = Guide(mappings.from_release, mappings.to_release, {s.name: s.rows(mappings) for s in sections()})
    prs = {pr for rows in guide.rows.values() for row in rows for pr in row["prs"]}
    guide.pull_requests = {pr: None for pr in sorted(prs)}
    return guide


def pull_request_index(repo, rev: str, wanted: set[int]) -> dict[int, PullRequest]:
    """PR number -> title and merge date, from the `(#N)` ending commit subjects reachable from `rev`."""
    from migrator import history

    found: dict[int, PullRequest] = {}
    for _, subject, date in history.subjects(repo, rev):  # newest first
        match = history.PR_RE.search(subject)
        if match is None:
            continue
        number = int(match.group(1))
        if number in wanted and number not in found:
            found[number] = PullRequest(number, subject[: match.start()].rstrip(), date)
    return found


# -- rendering -------------------------------------------------------------------------------------

UPGRADE_COMMANDS = ("pip install verl-migrate", "verl-migrate --to {to} ./my_scripts")


def _title(guide: Guide) -> str:
    return f"Migrating from verl {guide.from_release} to {guide.to_release}"


def _summary(guide: Guide) -> str:
    def n(count: int, what: str) -> str:
        return f"{count} {what}" + ("" if count == 1 else "s")

    counts = guide.counts()
    named = [n(counts[s.name], s.summary) for s in sorted(sections(), key=lambda s: s.summary_position)
             if s.always or counts[s.name]]
    return f"{', '.join(named)}; {n(len(guide.pull_requests), 'pull request')}."


class _Writer:
    """One output syntax: how to write a heading, a paragraph, a table, code, links."""

    def heading(self, text: str, level: int) -> str: ...
    def table(self, header: list[str], rows: list[list[str]]) -> str: ...
    def code(self, text: str) -> str: ...
    def text(self, text: str) -> str: ...
    def link(self, pr: int) -> str: ...
    def code_block(self, lines: list[str]) -> str: ...


class _Markdown(_Writer):
    def heading(self, text, level):
        return "#" * level + " " + text + "\n"

    def table(self, header, rows):
        def cell(value: str) -> str:  # GFM: `\|` escapes a pipe even inside a code span
            return (value or EMPTY).replace("|", "\\|")
        out = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
        out += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
        return "\n".join(out) + "\n"

    def code(self, text):
        return f"`{text}`"

    def text(self, text):
        return text.replace("*", "\\*").replace("_", "\\_") if text else ""

    def link(self, pr):
        return f"[{pr_label(pr)}]({pr_url(pr)})"

    def code_block(self, lines):
        return "```bash\n" + "\n".join(lines) + "\n```\n"


_RST_SPECIAL = "\\`*_|[]<>"


class _Rst(_Writer):
    LEVELS = "=-~"

    def heading(self, text, level):
        return f"{text}\n{self.LEVELS[level - 1] * len(text)}\n"

    def table(self, header, rows):
        out = [".. list-table::", "   :header-rows: 1", ""]
        for row in [header, *rows]:
            for i, value in enumerate(row):
                out.append(("   * - " if i == 0 else "     - ") + (value or EMPTY))
        return "\n".join(out) + "\n"

    def code(self, text):
        return f"``{text}``"

    def text(self, text):
        return "".join("\\" + ch if ch in _RST_SPECIAL else ch for ch in text) if text else ""

    def link(self, pr):
        return f"`{pr_label(pr)} <{pr_url(pr)}>`__"

    def code_block(self, lines):
        return ".. code-block:: bash\n\n" + "\n".join("   " + line for line in lines) + "\n"


def render_text(guide: Guide, writer: _Writer) -> str:
    w = writer
    parts = [w.heading(_title(guide), 1), _summary(guide) + "\n"]
    parent = None
    for section in sections():
        rows = guide.rows.get(section.name)
        if not rows:
            continue
        if section.parent is not None and section.parent != parent:
            parts.append(w.heading(section.parent, 2))
            parts.append(section.parent_intro(w))
        parent = section.parent
        parts.append(w.heading(section.title, 3 if section.parent else 2))
        parts.extend(section.render(w, rows))
    if any(guide.pull_requests.values()):
        parts.append(w.heading("Pull requests", 2))
        parts.append(w.table(["PR", "Title", "Merged"],
                             [[w.link(n), w.text(p.title) if p else EMPTY, p.date if p else EMPTY]
                              for n, p in guide.pull_requests.items()]))
    parts.append(w.heading("Upgrade automatically", 2))
    parts.append("verl-migrate applies every change above to your own launch scripts, configs and docs:\n")
    parts.append(w.code_block([c.format(to=guide.to_release) for c in UPGRADE_COMMANDS]))
    parts.append(f"Add {w.code('--check')} to only report what would change and {w.code('--diff')} to review "
                 f"the edits first. {w.code('--from ' + guide.from_release)} applies only the changes in this "
                 f"guide (by default verl-migrate applies every change since the oldest release).\n")
    return "\n".join(parts)


def render_json(guide: Guide) -> str:
    data = {
        "from": guide.from_release, "to": guide.to_release, "counts": guide.counts(),
        **{section.name: guide.rows.get(section.name, []) for section in sections()},
        "pull_requests": [{"number": n, "url": pr_url(n), "repository": repo_of(n), "title": p.title if p else None,
                           "merged": p.date if p else None} for n, p in guide.pull_requests.items()],
        "upgrade": [c.format(to=guide.to_release) for c in UPGRADE_COMMANDS],
    }
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def render(guide: Guide, fmt: str) -> str:
    if fmt == "json":
        return render_json(guide)
    return render_text(guide, _Rst() if fmt == "rst" else _Markdown())


# -- release order ---------------------------------------------------------------------------------

def previous_release(releases: tuple[str, ...], to_release: str) -> str | None:
    if to_release in releases and releases.index(to_release) > 0:
        return releases[releases.index(to_release) - 1]
    return None
