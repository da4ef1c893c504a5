"""Where the shipped mapping tables are, and the error a broken table raises: what every reader of
`mappings/` needs before any table is parsed (verl's layout is read from there too), kept apart from
the loader and its entry kinds so that such readers do not import them."""

from __future__ import annotations

from pathlib import Path


class TableError(Exception):
    """A broken mapping table; str() is the message a person reads (`file:line: entry: problem`)."""

    def __init__(self, file: str, line: int | None, message: str, entry: str | None = None):
        self.file, self.line, self.entry, self.message = file, line, entry, message
        where = f"{file}:{line}" if line else file
        what = f" {entry}:" if entry else ""
        super().__init__(f"{where}:{what} {message}")


class TableErrors(TableError):
    """Several problems in one table, reported together; str() is one line per problem."""

    def __init__(self, problems: list[TableError]):
        first = problems[0]
        super().__init__(first.file, first.line, first.message, first.entry)
        self.problems = problems
        self.args = ("\n".join(str(p) for p in problems),)

    def __str__(self) -> str:
        return self.args[0]


def raise_all(problems: list[TableError]) -> None:
    if len(problems) == 1:
        raise problems[0]
    if problems:
        raise TableErrors(problems)


def builtin_mappings_dir() -> Path:
    """The tables shipped with the package: inside the wheel, or the repository's `mappings/`."""
    here = Path(__file__).resolve().parent  # migrator/
    for candidate in (here / "_builtin_mappings", here.parent / "mappings"):
        if (candidate / "verl" / "releases.yaml").is_file():
            return candidate
    raise TableError(str(here / "_builtin_mappings"), None, "built-in mapping tables are missing from the installation")
