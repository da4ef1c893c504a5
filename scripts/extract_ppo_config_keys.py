"""Write mappings/verl/facts/config-keys/<release>.<config>.keys: every key of the PPO trainer's configs per
verl release, with its YAML type (maintainer tool).

    python scripts/extract_ppo_config_keys.py --repo /path/to/verl/.git [--out mappings/verl/facts/config-keys]

The configs are the ones verl generates beside its trainer config directory (`_generated_<config>.yaml`
in `config_dir`, mappings/verl/layout.yaml: the composed config of each engine), and before v0.5.0,
when there are none, the flat configs there (`flat_configs`). Each is read as Hydra reads it (OmegaConf:
`1e-6` is a float) and flattened, interpolations left as written, to `dotted.key<TAB>type` lines
(the format of entry-config-keys/, scripts/extract_entry_config_keys.py). The lint's key checks, the
composition's liveness rules and `--from auto` read them.
"""

from __future__ import annotations

import io
import posixpath
import subprocess
import sys
from pathlib import Path

from omegaconf import OmegaConf

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from extract_entry_config_keys import flatten  # noqa: E402
from facts_header import FACTS, commit_of, header, releases, writer_arguments  # noqa: E402

from migrator.layout import verl_layout  # noqa: E402


def git(repo: str, *args: str) -> bytes:
    return subprocess.run(["git", "--git-dir", repo, *args], check=True, capture_output=True).stdout


def ppo_configs(repo: str, commit: str) -> dict[str, str]:
    """config name -> its path at `commit`: the generated configs, else the flat ones."""
    layout = verl_layout()
    names = git(repo, "ls-tree", "-z", "--name-only", commit, layout.config_dir + "/").decode().split("\0")
    generated = {posixpath.basename(p)[len(layout.generated_config_prefix):-len(".yaml")]: p
                 for p in names if layout.generated_config.match(p)}
    return generated or {posixpath.basename(p)[:-len(".yaml")]: p for p in layout.flat_config_paths if p in names}


def key_lines(data: bytes) -> str:
    tree = OmegaConf.to_container(OmegaConf.load(io.BytesIO(data)), resolve=False)
    keys: dict[str, str] = {}
    flatten(tree, "", keys)
    return "".join(f"{k}\t{t}\n" for k, t in sorted(keys.items()))


def main(argv=None) -> int:
    args = writer_arguments(__doc__, FACTS / "config-keys", argv)
    args.out.mkdir(parents=True, exist_ok=True)
    for release in releases():
        commit = commit_of(args.repo, release)
        configs = ppo_configs(args.repo, commit)
        for name, path in sorted(configs.items()):
            text = header(__file__, release, commit) + key_lines(git(args.repo, "show", f"{commit}:{path}"))
            (args.out / f"{release}.{name}.keys").write_text(text, encoding="utf-8")
        print(f"{release}: {', '.join(sorted(configs))}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
