"""Compose with hydra-core the configs lint starts from at every shipped release, and ship the results
(maintainer tool; re-run after scripts/extract_verl_configs.py or a Hydra/OmegaConf upgrade).

    python scripts/precompose_verl_configs.py --repo /path/to/verl/.git [--release v0.9.0 ...]

For each release under mappings/verl/facts/configs/releases/: every entry point's config with no group
selection, and every group selection verl's own example scripts of that release make (found by running
`lint --to <release>` over `examples/` at the commit the release's index names). Each is composed by
migrator/verdict/compose.py's own function, i.e. by Hydra, and stored under compose's disk key (tree content,
config, selections, Hydra's and OmegaConf's versions) in `composed/<release>.pickle.xz`, with the versions
(`versions`) and what wrote it from which verl commit (`generated_via`, scripts/facts_header.py): a lint with an
empty cache reads these instead of composing (~0.1-0.5 s each); a changed tree or another Hydra or
OmegaConf version never matches a key, so those compose as before. tests/tables/test_shipped_compositions.py composes
samples again with Hydra and compares.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import lzma
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from facts_header import provenance  # noqa: E402

# A fixed cache directory: the composed configs name it (hydra.runtime.config_sources), so the bytes
# stay the same from one generation to the next.
CACHE = Path(tempfile.gettempdir()) / "verl-migrate-precompose"


def example_selections(repo: str, release: str, commit: str) -> set[tuple[str, str, tuple[str, ...]]]:
    """(config_dir, config_name, groups) of every composition `lint --to release` makes over verl's examples."""
    from migrator.verdict import compose

    seen: set[tuple[str, str, tuple[str, ...]]] = set()
    real = compose._composed

    def recording(configs, config_dir, config_name, groups, from_disk):
        if configs.release == release:
            seen.add((config_dir, config_name, tuple(groups)))
        return real(configs, config_dir, config_name, groups, from_disk)

    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(["git", "--git-dir", repo, "archive", commit, "examples"], capture_output=True)
        if archive.returncode != 0:
            return seen
        subprocess.run(["tar", "-x", "-C", tmp], input=archive.stdout, check=True)
        compose._composed = recording
        try:
            from migrator.cli import cli

            with contextlib.redirect_stdout(io.StringIO()):  # the findings are not what we are after
                cli.main(["lint", "-j", "1", "--to", release, str(Path(tmp) / "examples")], prog_name="verl-migrate",
                         standalone_mode=False)
        except SystemExit:
            pass
        except Exception as exc:  # noqa: BLE001 - an old release lint cannot read: its defaults still ship
            print(f"  lint --to {release} failed: {exc}", file=sys.stderr)
        finally:
            compose._composed = real
    return seen


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", help="verl's git directory (for the example scripts' selections)")
    parser.add_argument("--release", action="append", help="only these releases (default: every shipped one)")
    args = parser.parse_args()
    shutil.rmtree(CACHE, ignore_errors=True)
    os.environ["XDG_CACHE_HOME"] = str(CACHE)
    os.chdir(tempfile.gettempdir())  # hydra.runtime.cwd: the same on every generation
    import yaml

    from migrator.verdict import compose
    from migrator.verdict.store import configs_dir, release_configs

    out_dir = configs_dir() / "composed"
    out_dir.mkdir(exist_ok=True)
    releases = args.release or sorted(p.stem for p in (configs_dir() / "releases").glob("*.yaml"))
    for release in releases:
        configs = release_configs(release)
        wanted = {(e.config_path, e.config_name, ()) for e in configs.entry_points.values()}
        index = yaml.safe_load((configs_dir() / "releases" / f"{release}.yaml").read_text(encoding="utf-8"))
        if args.repo:
            wanted |= example_selections(args.repo, release, index.get("commit") or release)
        table = {}
        for config_dir, config_name, groups in sorted(wanted):
            key = compose._disk_key(configs, config_dir, config_name, groups)
            table[key] = compose._composed.__wrapped__(configs, config_dir, config_name, groups, False)
        from importlib.metadata import version

        table["versions"] = (version("hydra-core"), version("omegaconf"))  # what the keys were made with
        table["generated_via"] = provenance(__file__, release, index["commit"])
        path = out_dir / f"{release}.pickle.xz"
        path.write_bytes(lzma.compress(pickle.dumps(table, protocol=4), preset=9 | lzma.PRESET_EXTREME))
        failed = sum(1 for key, value in table.items() if key not in ("versions", "generated_via") and value[1])
        print(f"{release}: {len(table) - 2} compositions ({failed} Hydra refuses), {path.stat().st_size // 1024} KB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
