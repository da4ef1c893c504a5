"""`verl-migrate release-notes`: a migration guide for one verl release, from the composed tables.

The guide is built from the `MappingSet` (so renames across several releases appear composed, with
every PR of the chain), rendered as Markdown, reStructuredText or JSON in a fixed order. With a
verl repository it adds each PR's title and merge date, read from one pass over `git log`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from migrator.mapping.compose import MappingSet
from migrator.pulls import pr_label, pr_url, repo_of
from migrator.release_notes_api import dotted, keyword_rows, python_name_rows, signature_rows

EMPTY = "—"


@dataclass(frozen=True)
class PullRequest:
    number: int
    title: str
    date: str


@dataclass
class Guide:
    """What the guide says, independent of the output format."""

    from_release: str
    to_release: str
    moved_scripts: list[dict] = field(default_factory=list)
    removed_scripts: list[dict] = field(default_factory=list)
    renamed_keys: list[dict] = field(default_factory=list)
    removed_keys: list[dict] = field(default_factory=list)
    other_changes: list[dict] = field(default_factory=list)
    entry_points: list[dict] = field(default_factory=list)
    python_names: list[dict] = field(default_factory=list)  # symbols moved, renamed or removed
    keyword_renames: list[dict] = field(default_factory=list)
    signature_changes: list[dict] = field(default_factory=list)
    pull_requests: dict[int, PullRequest | None] = field(default_factory=dict)

    def counts(self) -> dict[str, int]:
        return {"moved_scripts": len(self.moved_scripts), "removed_scripts": len(self.removed_scripts),
                "renamed_keys": len(self.renamed_keys), "removed_keys": len(self.removed_keys),
                "other_changes": len(self.other_changes), "python_names": len(self.python_names),
                "keyword_renames": len(self.keyword_renames), "signature_changes": len(self.signature_changes)}


def run_command(path: str, env: tuple[tuple[str, str], ...], args: tuple[str, ...]) -> str:
    """How to run a moved script now: env presets, then the script, then extra overrides."""
    return " ".join([*(f"{k}={v}" for k, v in env), "bash", path, *args])


def build_guide(mappings: MappingSet) -> Guide:
    guide = Guide(mappings.from_release, mappings.to_release)
    subtrees = {e.old[:-2] for e in mappings.entries() if e.FAMILY == "key" and e.old.endswith(".*")}
    for old in sorted(mappings.old_keys()):
        is_subtree = old in subtrees
        change = mappings.key(old + ".__subtree__" if is_subtree else old)
        if change is None:
            continue
        shown = old + ".*" if is_subtree else old
        prs = list(change.prs)
        if change.action == "rename":
            new = change.new.removesuffix(".__subtree__") + ".*" if is_subtree else change.new
            guide.renamed_keys.append({"old": shown, "new": new, "prs": prs,
                                       "releases": [e.origin.release for e in change.entries]})
        else:
            guidance = change.hint or ""
            note = change.entries[-1].note
            if note and note not in guidance:
                guidance = f"{guidance} ({note})" if guidance else note
            guide.removed_keys.append({"old": shown, "action": change.action, "guidance": guidance, "prs": prs})
    for old in sorted(mappings.old_paths()):
        change = mappings.path(old)
        if change is None:
            continue
        prs = list(change.prs)
        if change.new is not None:
            guide.moved_scripts.append({"old": old, "new": change.new, "env": dict(change.env),
                                        "args": list(change.args),
                                        "run": run_command(change.new, change.env, change.args), "prs": prs})
        else:
            guide.removed_scripts.append({"old": old, "hint": change.hint or "", "prs": prs})
    for old in sorted(mappings.old_modules()):
        change = mappings.module(old)
        if change is not None:
            guide.other_changes.append({"kind": "module", "old": old, "new": change.new or "", "value": None,
                                        "when": [], "hint": change.hint or "",
                                        "prs": list(dict.fromkeys(e.pr for e in change.entries))})
    guide.entry_points.extend(entry_point_rows(mappings))
    guide.python_names.extend(python_name_rows(mappings))
    guide.keyword_renames.extend(keyword_rows(mappings))
    guide.signature_changes.extend(signature_rows(mappings))
    for family, rules in (("env", mappings.env_rules), ("shell variable", mappings.var_rules)):
        for rule in rules:
            hint = getattr(rule.entry, "hint", None)
            guide.other_changes.append({"kind": family, "old": rule.old, "new": rule.new or "",
                                        "value": rule.value, "when": list(rule.when.patterns) if rule.when else [],
                                        "hint": hint or "", "prs": [rule.entry.pr]})
    prs = set()
    for section in (guide.moved_scripts, guide.removed_scripts, guide.renamed_keys, guide.removed_keys,
                    guide.other_changes, guide.entry_points, guide.python_names, guide.keyword_renames,
                    guide.signature_changes):
        for row in section:
            prs.update(row["prs"])
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
    c = guide.counts()

    def n(count: int, what: str) -> str:
        return f"{count} {what}" + ("" if count == 1 else "s")

    return (f"{n(c['moved_scripts'], 'moved script')}, {n(c['removed_scripts'], 'removed script')}, "
            f"{n(c['renamed_keys'], 'renamed config key')}, "
            f"{n(c['removed_keys'], 'removed or ineffective config key')}, "
            f"{n(c['other_changes'], 'environment, module or shell variable change')}"
            f"{', ' + n(len(guide.entry_points), 'moved or removed entry point') if guide.entry_points else ''}"
            f"{', ' + n(c['python_names'], 'moved, renamed or removed Python name') if c['python_names'] else ''}"
            f"{', ' + n(c['keyword_renames'], 'renamed keyword argument') if c['keyword_renames'] else ''}"
            f"{', ' + n(c['signature_changes'], 'signature change') if c['signature_changes'] else ''}; "
            f"{n(len(guide.pull_requests), 'pull request')}.")


def _action_label(action: str) -> str:
    return "removed (the override is deleted)" if action == "remove" else "ineffective (warn only, no edit)"


def _condition(w: "_Writer", row: dict) -> str:
    parts = []
    if row.get("value") is not None:
        parts.append("value " + w.code(row["value"]))
    if row.get("when"):
        parts.append("files matching " + ", ".join(w.code(p) for p in row["when"]))
    return "; ".join(parts) or "all files"


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


def entry_point_rows(mappings: MappingSet) -> list[dict]:
    """Each entry point that moved or went away, with its key remap, appended args and pinned defaults."""
    rows = []
    for entry in mappings.entries():
        if entry.KIND not in ("entry-point-move", "entry-point-removal"):
            continue
        change = mappings.entry_point(entry.old)
        if change is None or change.entries[0] is not entry:
            continue  # a later link of a chain: shown with its first entry
        keys = []
        for link in change.entries:
            for item in getattr(link, "keys", ()):
                if item.action == "rename" and (item.new != item.old or item.add):
                    keys.append({"old": item.old, "new": ("+" if item.add else "") + item.new, "guidance": ""})
                elif item.action in ("remove", "warn"):
                    keys.append({"old": item.old, "new": "", "guidance": item.hint or ""})
        rows.append({"old": entry.old, "new": change.new or "", "hint": change.hint or "",
                     "config": f"{entry.old_config} -> {change.entries[-1].new_config}" if change.new else "",
                     "args": list(change.args), "pins": [f"{p.key}={p.old}" for p in change.pins if p.pin],
                     "keys": keys, "prs": list(change.prs)})
    return rows


def _links(writer: _Writer, prs: list[int]) -> str:
    return ", ".join(writer.link(pr) for pr in prs)


def render_text(guide: Guide, writer: _Writer) -> str:
    w = writer
    parts = [w.heading(_title(guide), 1), _summary(guide) + "\n"]
    if guide.moved_scripts:
        parts.append(w.heading("Moved scripts", 2))
        parts.append("Run the new script as shown; environment presets select the variant the old script ran.\n")
        parts.append(w.table(["Old script", "New script", "Run it now", "PR"],
                             [[w.code(r["old"]), w.code(r["new"]), w.code(r["run"]), _links(w, r["prs"])]
                              for r in guide.moved_scripts]))
    if guide.removed_scripts:
        parts.append(w.heading("Removed scripts", 2))
        parts.append(w.table(["Old script", "What to use instead", "PR"],
                             [[w.code(r["old"]), w.text(r["hint"]), _links(w, r["prs"])]
                              for r in guide.removed_scripts]))
    if guide.entry_points:
        parts.append(w.heading("Moved and removed entry points", 2))
        parts.append("verl-migrate rewrites the module a command runs, remaps that command's overrides to the "
                     "new config, and appends the arguments and the old defaults shown (a default is pinned "
                     "only where the script does not set the key).\n")
        parts.append(w.table(["Old entry point", "New entry point", "Config", "Appended", "PR"],
                             [[w.code(r["old"]), w.code(r["new"]) if r["new"] else f"(removed) {w.text(r['hint'])}",
                               r["config"], " ".join(w.code(a) for a in r["args"] + r["pins"]), _links(w, r["prs"])]
                              for r in guide.entry_points]))
        for r in guide.entry_points:
            if r["keys"]:
                parts.append(w.heading(f"Keys of {r['old']}", 3))
                parts.append(w.table(["Old key", "New key", "Guidance"],
                                     [[w.code(k["old"]), w.code(k["new"]) if k["new"] else "(removed)",
                                       w.text(k["guidance"])] for k in r["keys"]]))
    if guide.renamed_keys:
        parts.append(w.heading("Renamed config keys", 2))
        parts.append("Renames across several releases are shown composed, with every PR of the chain.\n")
        parts.append(w.table(["Old key", "New key", "PR"],
                             [[w.code(r["old"]), w.code(r["new"]), _links(w, r["prs"])]
                              for r in guide.renamed_keys]))
    if guide.removed_keys:
        parts.append(w.heading("Removed and ineffective config keys", 2))
        parts.append("Removed keys are deleted from scripts by verl-migrate; ineffective keys are only reported.\n")
        parts.append(w.table(["Key", "Status", "Guidance", "PR"],
                             [[w.code(r["old"]), _action_label(r["action"]), w.text(r["guidance"]),
                               _links(w, r["prs"])] for r in guide.removed_keys]))
    if guide.other_changes:
        parts.append(w.heading("Environment, module and shell variable changes", 2))
        parts.append(w.table(["Kind", "Old", "New", "Applies to", "Guidance", "PR"],
                             [[r["kind"], w.code(r["old"]), w.code(r["new"]) if r["new"] else "(removed)",
                               _condition(w, r), w.text(r.get("hint", "")), _links(w, r["prs"])]
                              for r in guide.other_changes]))
    parts.extend(_python_api_sections(guide, w))
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


def _python_api_sections(guide: Guide, w: _Writer) -> list[str]:
    if not (guide.python_names or guide.keyword_renames or guide.signature_changes):
        return []
    parts = [w.heading("Python API", 2),
             f"For your own Python code that imports verl: verl-migrate rewrites the imports, {w.code('module.Name')} "
             "uses and keyword arguments it can prove, and reports the rest with the guidance shown.\n"]
    if guide.python_names:
        parts.append(w.heading("Moved, renamed and removed names", 3))
        parts.append(w.table(["Old name", "New name", "Guidance", "PR"],
                             [[w.code(dotted(r["old"])), w.code(dotted(r["new"])) if r["new"] else "(removed)",
                               w.text(r["hint"]), _links(w, r["prs"])] for r in guide.python_names]))
    if guide.keyword_renames:
        parts.append(w.heading("Renamed keyword arguments", 3))
        parts.append("Renamed at calls that provably reach the function (and in "
                     f"{w.code('super().__init__(...)')} of a subclass).\n")
        parts.append(w.table(["Function", "Old keyword", "New keyword", "PR"],
                             [[w.code(dotted(r["function"])), w.code(r["old"]), w.code(r["new"]), _links(w, r["prs"])]
                              for r in guide.keyword_renames]))
    if guide.signature_changes:
        parts.append(w.heading("Signature changes to make by hand", 3))
        parts.append(w.table(["Function", "Parameter", "What to do", "PR"],
                             [[w.code(dotted(r["function"])), w.code(r["param"]), w.text(r["hint"]),
                               _links(w, r["prs"])] for r in guide.signature_changes]))
    return parts


def render_json(guide: Guide) -> str:
    data = {
        "from": guide.from_release, "to": guide.to_release, "counts": guide.counts(),
        "moved_scripts": guide.moved_scripts, "removed_scripts": guide.removed_scripts,
        "renamed_keys": guide.renamed_keys, "removed_keys": guide.removed_keys,
        "other_changes": guide.other_changes, "entry_points": guide.entry_points,
        "python_names": guide.python_names, "keyword_renames": guide.keyword_renames,
        "signature_changes": guide.signature_changes,
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
