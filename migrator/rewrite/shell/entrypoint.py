"""Which Python entry point a shell command runs, in every launch form verl users write:

    python -m X / python3 -m X / torchrun [opts] -m X / python -m torch.distributed.run [opts] -m X
    python path/to/verl/trainer/x.py / ray job submit ... -- python3 -m X / deepspeed, accelerate launch

Only the words are read (bytes as written, quotes stripped); the caller maps the module to its config.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from migrator.codes import FORK_ENTRY_POINT_CODE
from migrator.edits import Finding
from migrator.layout import verl_layout

# Programs that run a Python module or file given later on the line.
# (`${CONDA_BIN}python`: a directory in a variable, written before the name.)
PYTHON_RE = re.compile(rb"(?:.*[/}])?(?:python[0-9.]*|torchrun|deepspeed|accelerate)\Z")
# `-m` modules that are launchers themselves: the entry point is the next `-m` or `.py`.
LAUNCHER_MODULES = frozenset({b"torch.distributed.run", b"torch.distributed.launch", b"accelerate.commands.launch"})
MODULE_WORD_RE = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*\Z")
CONFIG_NAME_FLAG = b"--config-name"
CONFIG_PATH_FLAG = b"--config-path"


@dataclass(frozen=True)
class Launch:
    """The entry point of one command: the word that names it and the module it means."""

    index: int  # the word naming the entry point (the module after -m, or the .py path)
    module: str
    form: str  # "module" (-m X) or "path" (x.py)
    prefix_len: int = 0  # for "path": bytes of the word before the module's path (`$HOME/verl/`)


def unquote(word: bytes) -> bytes:
    if len(word) >= 2 and word[:1] in (b"'", b'"') and word[-1:] == word[:1]:
        return word[1:-1]
    return word


def module_of_path(path: bytes) -> tuple[str, int] | None:
    """`.../verl/trainer/main_ppo.py` -> ("verl.trainer.main_ppo", offset of `verl/` in the path)."""
    if not path.endswith(b".py"):
        return None
    parts = path[:-3].split(b"/")
    # The module starts at the rightmost of verl's roots in the path (`$HOME/verl/verl/trainer/x.py`).
    package_roots = verl_layout().root_bytes
    roots = [i for i, part in enumerate(parts) if part in package_roots and i < len(parts) - 1]
    if not roots:
        return None
    start = roots[-1]
    # `verl/recipe/x/y.py` or `verl/examples/...`: the checkout dir is `verl`, the package the later root.
    module_parts = parts[start:]
    if not all(MODULE_WORD_RE.fullmatch(p) for p in module_parts):
        return None
    offset = len(b"/".join(parts[:start])) + (1 if start else 0)
    return b".".join(module_parts).decode("ascii"), offset


def find_launch(words: list[bytes]) -> Launch | None:
    """The entry point a command's words run, or None (not a Python launch, or the module is computed)."""
    launcher_seen = False
    i = 0
    while i < len(words):
        word = unquote(words[i])
        if PYTHON_RE.match(word):
            launcher_seen = True
        elif launcher_seen and word == b"-m" and i + 1 < len(words):
            module = unquote(words[i + 1])
            if module in LAUNCHER_MODULES:
                i += 2
                continue
            if MODULE_WORD_RE.fullmatch(module) and b"." in module:
                return Launch(i + 1, module.decode("ascii"), "module")
            return None
        elif launcher_seen and word.endswith(b".py") and not word.startswith(b"-"):
            found = module_of_path(word.split(b"=", 1)[-1] if word.startswith(b"--") else word)
            if found is not None:
                return Launch(i, found[0], "path", found[1])
            return None
        i += 1
    return None


# Hydra's short spellings of the two flags (`-cn ppo_megatron_trainer` went unseen: neither moved nor reported).
SHORT_FLAGS = {CONFIG_NAME_FLAG: b"-cn", CONFIG_PATH_FLAG: b"-cp"}


def config_option(words: list[bytes], flag: bytes, start: int = 0) -> tuple[int, int, bytes] | None:
    """`--config-name=X` / `--config-name X` (or Hydra's short `-cn X`, `-cn=X`) after word `start`:
    (first word index, value word index, value); the two indices are equal for the `=` form. The value
    is unquoted."""
    spellings = (flag, SHORT_FLAGS[flag]) if flag in SHORT_FLAGS else (flag,)
    for i in range(start, len(words)):
        word = words[i]
        if word in spellings and i + 1 < len(words):
            return i, i + 1, unquote(words[i + 1])
        for spelling in spellings:
            if word.startswith(spelling + b"="):
                return i, i, unquote(word[len(spelling) + 1:])
    return None


def fork_launch(text: bytes, maps) -> tuple[int, str] | None:
    """(offset in `text` of the entry word, module) when the first launch in `text` runs a module verl does not
    ship at the files' release (`MappingSet.runs_verl_config`): a fork's entry point, whose keys verl's table
    must not touch. For text outside a parsed script (a YAML string); scripts ask `launches.Launches`."""
    words = text.split()
    launch = find_launch(words)
    if launch is None or maps.runs_verl_config(launch.module):
        return None
    at = -1
    for word in words[:launch.index + 1]:
        at = text.find(word, at + 1)
    return at, launch.module


def fork_note(offset: int, module: str, keys) -> Finding:
    """The one note (VM157) for a fork's command whose keys verl's table would have changed."""
    return Finding(offset, "entry-point-fork", f"no verl release ships {module}: its keys are its own config's, "
                   f"left as they are ({', '.join(dict.fromkeys(keys))})",
                   "a fork's entry point composes its own (vendored) config: migrate it and these keys together, "
                   "by hand", severity="info", code=FORK_ENTRY_POINT_CODE)
