"""Each code's documentation: its entry under "Every code" in docs/codes.md, the one place it is written
(the wheel ships the file as `migrator/_docs/codes.md`); `verl-migrate rule CODE` prints it."""

from __future__ import annotations

from pathlib import Path

from migrator.codes import RETIRED, all_codes


class UnknownCode(LookupError):
    pass


def codes_doc() -> Path | None:
    """docs/codes.md: inside the wheel, or the repository's."""
    here = Path(__file__).resolve().parent
    for candidate in (here / "_docs" / "codes.md", here.parent / "docs" / "codes.md"):
        if candidate.is_file():
            return candidate
    return None


def entries(text: str | None = None) -> dict[str, str]:
    """code -> its entry's text (the lines under `### CODE`, stripped)."""
    if text is None:
        path = codes_doc()
        text = path.read_text(encoding="utf-8") if path is not None else ""
    out: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        if line.startswith("#"):  # `### VM101` opens an entry; any other heading ends it
            words = line.split()
            current = words[1] if words[0] == "###" and len(words) == 2 and words[1].startswith("VM") else None
            if current is not None:
                out[current] = []
        elif current is not None:
            out[current].append(line)
    return {code: "\n".join(lines).strip() for code, lines in out.items()}


def rule_text(code: str) -> str:
    """`CODE (severity): title`, then its entry; UnknownCode for a code no command reports."""
    code = code.strip().upper()
    rules = all_codes()
    if code not in rules and code not in RETIRED:
        import difflib

        close = difflib.get_close_matches(code, [*rules, *RETIRED], n=1)
        raise UnknownCode(f"unknown code {code!r}" + (f"; did you mean {close[0]!r}?" if close else "")
                          + " (`verl-migrate rule --all` lists them)")
    head = f"{code}: retired, now {RETIRED[code]}" if code in RETIRED else \
        f"{code} ({rules[code].severity}): {rules[code].title}"
    body = entries().get(code)
    return head + ("\n\n" + body if body else "\n\n(no entry in docs/codes.md: please report it)")


def rules_table() -> list[str]:
    """One line per code: `CODE  severity  title`."""
    rows = [(code, rule.severity, rule.title) for code, rule in all_codes().items()]
    rows += [(old, "retired", f"now {new}") for old, new in RETIRED.items()]
    return [f"{code}  {severity:<8} {title}" for code, severity, title in sorted(rows)]
