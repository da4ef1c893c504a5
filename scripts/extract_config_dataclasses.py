"""Extract the keyword arguments of each config dataclass verl's configs name in a `_target_`, per release.

verl turns a config node into its dataclass with `omega_conf_to_dataclass` (verl/utils/config.py): Hydra
instantiates every node that has a `_target_`, inner nodes first, passing the node's keys as keyword
arguments, so a key the class does not declare stops the run ("PolicyLossConfig.__init__() got an
unexpected keyword argument 'tau_pos'"). This script reads verl's source at each release (no import: `ast`
over `git show`) and writes, for every `_target_` in the PPO trainer's config tree that names a dataclass,
its `__init__` parameters: the annotated fields of the class and of its dataclass bases, less `ClassVar`s
and `field(init=False)`. A target the script cannot resolve to a dataclass (a plain class, a function, a
name outside verl) is listed under `not_dataclasses`: its keys are not judged.

Writes mappings/verl/facts/config-dataclasses/<release>.yaml, read by migrator/startup/ (the table's
`converts` checks, docs/lint.md "VM020").

    python scripts/extract_config_dataclasses.py --repo /path/to/verl-clone [--out DIR] [--release v0.9.0]
"""

from __future__ import annotations

import argparse
import ast
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

from facts_header import header  # noqa: E402

OUT = ROOT / "mappings" / "verl" / "facts" / "config-dataclasses"
RELEASES = ["v0.6.0", "v0.6.1", "v0.7.0", "v0.7.1", "v0.8.0", "v0.9.0"]  # verl converts at start-up from v0.6.0 (#2621)
CONFIG_DIR = "verl/trainer/config"
_TARGET = re.compile(r"^\s*_target_:\s*['\"]?([\w.]+)['\"]?\s*(?:#.*)?$", re.M)


class Source:
    """verl's Python modules at one release, read from the clone."""

    def __init__(self, repo: Path, rev: str):
        self.repo, self.rev = repo, rev
        listing = self.git("ls-tree", "-r", "--name-only", rev, "--", "verl")
        self.paths = set(listing.splitlines())
        self.parsed: dict[str, ast.Module | None] = {}

    def git(self, *args: str) -> str:
        return subprocess.run(["git", "--git-dir", str(self.repo), *args], check=True, capture_output=True,
                              text=True).stdout

    def commit(self) -> str:
        return self.git("rev-parse", f"{self.rev}^{{commit}}").strip()

    def targets(self) -> list[str]:
        out = set()
        for path in sorted(self.paths):
            if path.startswith(CONFIG_DIR + "/") and path.endswith(".yaml"):
                out.update(_TARGET.findall(self.git("show", f"{self.rev}:{path}")))
        return sorted(out)

    def module(self, name: str) -> ast.Module | None:
        if name not in self.parsed:
            base = name.replace(".", "/")
            path = next((p for p in (f"{base}.py", f"{base}/__init__.py") if p in self.paths), None)
            self.parsed[name] = ast.parse(self.git("show", f"{self.rev}:{path}")) if path else None
        return self.parsed[name]

    def is_package(self, name: str) -> bool:
        return f"{name.replace('.', '/')}/__init__.py" in self.paths

    def find(self, module: str, name: str, depth: int = 0) -> tuple[str, ast.ClassDef] | None:
        """(the module that defines it, its class) for `module.name`, following imports and re-exports."""
        tree = self.module(module)
        if tree is None or depth > 20:
            return None
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and node.name == name:
                return module, node
        for node in reversed(tree.body):  # the last binding wins
            if isinstance(node, ast.ImportFrom):
                source = self.absolute(module, node)
                for alias in node.names:
                    if alias.name == "*" or (alias.asname or alias.name) == name:
                        found = self.find(source, alias.name if alias.name != "*" else name, depth + 1)
                        if found is not None:
                            return found
        return None

    def absolute(self, module: str, node: ast.ImportFrom) -> str:
        if not node.level:
            return node.module or ""
        parts = module.split(".")
        package = parts if self.is_package(module) else parts[:-1]
        package = package[:len(package) - node.level + 1]
        return ".".join(package + ([node.module] if node.module else []))


def _decorated_dataclass(node: ast.ClassDef) -> bool:
    for decorator in node.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        if (isinstance(target, ast.Name) and target.id == "dataclass") or \
                (isinstance(target, ast.Attribute) and target.attr == "dataclass"):
            return True
    return False


def _not_init(value: ast.expr | None) -> bool:
    """`field(init=False)`."""
    return isinstance(value, ast.Call) and getattr(value.func, "id", getattr(value.func, "attr", "")) == "field" \
        and any(k.arg == "init" and isinstance(k.value, ast.Constant) and k.value.value is False
                for k in value.keywords)


def _class_var(annotation: ast.expr) -> bool:
    node = annotation.value if isinstance(annotation, ast.Subscript) else annotation
    return (isinstance(node, ast.Name) and node.id == "ClassVar") or \
        (isinstance(node, ast.Attribute) and node.attr == "ClassVar")


def fields_of(source: Source, module: str, node: ast.ClassDef, depth: int = 0) -> list[str] | None:
    """The class's __init__ parameters in dataclass order (bases' first), or None: not a dataclass."""
    if not _decorated_dataclass(node) or depth > 20:
        return None
    out: list[str] = []
    for base in node.bases:
        name = base.id if isinstance(base, ast.Name) else base.attr if isinstance(base, ast.Attribute) else None
        found = source.find(module, name) if name else None
        if found is not None:
            inherited = fields_of(source, *found, depth + 1)
            out += [f for f in inherited or [] if f not in out]
    for item in node.body:
        if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name) and not _class_var(item.annotation):
            name = item.target.id
            if _not_init(item.value):
                out = [f for f in out if f != name]
            elif name not in out:
                out.append(name)
    return out


def extract(repo: Path, release: str) -> tuple[dict, str]:
    source = Source(repo, release)
    classes, others = {}, []
    for target in source.targets():
        module, _, name = target.rpartition(".")
        found = source.find(module, name) if target.startswith("verl.") else None
        fields = fields_of(source, *found) if found else None
        if fields is None:
            others.append(target)
            continue
        classes[target] = {"defined_in": f"{found[0].replace('.', '/')}.py:{found[1].lineno}", "class": name,
                           "fields": fields}
    return {"release": release, "dataclasses": classes, "not_dataclasses": others}, source.commit()


def main(argv=None) -> int:
    import yaml

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, required=True, help="verl's git directory (bare or .git)")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--release", action="append", help="only these releases (repeatable)")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    for release in args.release or RELEASES:
        facts, commit = extract(args.repo, release)
        text = header("extract_config_dataclasses.py", release, commit) + (
            "# Per `_target_` of the PPO trainer's configs: the dataclass Hydra builds for such a node and the keyword\n"
            "# arguments its __init__ takes (a key of the node not among them stops verl with a TypeError).\n")
        text += yaml.safe_dump(facts, sort_keys=False, width=120)
        (args.out / f"{release}.yaml").write_text(text, encoding="utf-8")
        print(f"{release}: {len(facts['dataclasses'])} dataclasses, {len(facts['not_dataclasses'])} other targets")
    return 0


if __name__ == "__main__":
    sys.exit(main())
