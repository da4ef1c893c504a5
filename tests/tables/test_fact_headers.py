"""Every fact file under mappings/verl/facts/ says where it came from: the script that wrote it (which exists,
is the one mappings/verl/README.md names for it, and is one scripts/refresh_facts.py runs) and the verl
release it read with that release's commit."""

from __future__ import annotations

import importlib.util
import lzma
import pickle
import re
from functools import lru_cache

import pytest
import yaml

from tests.helpers import REPO

VERL = REPO / "mappings" / "verl"
FACTS = VERL / "facts"
SCRIPTS = REPO / "scripts"


def _script_module(name: str):
    spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


HEADERS = _script_module("facts_header")
REFRESH = _script_module("refresh_facts")
FACT_FILES = sorted(p for p in FACTS.rglob("*") if p.is_file())
PLACEHOLDER = re.compile(r"<(\w+)>")


def provenance_of(path) -> str:
    """The header's text: the first line of a text file, the `generated_via` field of a pickled one."""
    if path.name.endswith(".pickle.xz"):
        value = pickle.loads(lzma.decompress(path.read_bytes())).get("generated_via")
        return f"{HEADERS.MARK}{value}\n" if isinstance(value, str) else ""
    with path.open("rb") as fh:
        return fh.readline().decode("utf-8", "replace")


@lru_cache(maxsize=1)
def readme_writers() -> list[tuple[re.Pattern, str]]:
    """(file pattern under mappings/verl/, writer) for each row of the README's facts table."""
    rows = []
    for line in (VERL / "README.md").read_text(encoding="utf-8").splitlines():
        cells = [c.strip().strip("`") for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0].startswith("facts/") and cells[2].startswith("scripts/"):
            literal = PLACEHOLDER.split(cells[0])[::2]  # the text between `<release>`, `<config>`, ...
            rows.append((re.compile("[^/]+".join(map(re.escape, literal)) + r"\Z"), cells[2]))
    return rows


@lru_cache(maxsize=1)
def release_commits() -> dict[str, str]:
    """release -> its commit (9 digits), from the shipped config indexes (each names its full commit)."""
    out = {}
    for release in HEADERS.releases():
        index = yaml.safe_load((FACTS / "configs" / "releases" / f"{release}.yaml").read_text(encoding="utf-8"))
        out[release] = index["commit"][:9]
    return out


def test_there_are_fact_files_and_the_readme_names_a_writer_for_each_kind():
    assert len(FACT_FILES) > 400
    assert len(readme_writers()) >= 11


@pytest.mark.parametrize("path", FACT_FILES, ids=lambda p: str(p.relative_to(FACTS)))
def test_a_fact_file_names_its_writer_and_the_verl_commit_it_read(path):
    header = HEADERS.HEADER.fullmatch(provenance_of(path))
    assert header, f"{path.relative_to(REPO)} does not open with `{HEADERS.MARK}scripts/... from verl ...`"
    script = header["script"]
    assert (REPO / script).is_file(), script
    assert script in {f"scripts/{writer}" for writer, _ in REFRESH.WRITERS.values()}, \
        f"{script} is not run by scripts/refresh_facts.py"
    relative = path.relative_to(VERL).as_posix()
    named = [writer for pattern, writer in readme_writers() if pattern.match(relative)]
    assert named == [script], f"mappings/verl/README.md names {named} for {relative}"
    what, commits = header["what"], release_commits()
    release = what.rpartition("..")[2]  # a file read from every release names the newest
    assert what == release or what == HEADERS.all_releases(), what
    assert header["commit"] == commits[release], f"{relative}: {what} is {commits[release]}, not {header['commit']}"


def test_a_file_named_for_one_release_is_that_release_s():
    for path in FACT_FILES:
        header = HEADERS.HEADER.fullmatch(provenance_of(path))
        release = next((r for r in release_commits() if path.name.startswith(f"{r}.")), None)
        if release is not None and "blobs" not in path.parts:
            assert header["what"] == release, path


def test_a_blob_is_verl_s_bytes_after_its_header():
    import hashlib

    from migrator.verdict.store import verl_bytes

    for path in sorted((FACTS / "configs" / "blobs").glob("*.yaml")):
        data = path.read_bytes()
        assert verl_bytes(data) != data  # the header went
        assert hashlib.sha256(verl_bytes(data)).hexdigest().startswith(path.stem), path
