"""Which commands run a verl entry point, the only place a Hydra override is an override.

A removed key is deleted only from the arguments of such a command (or from an array expanded into
one, or an array of nothing but `a.b=c` overrides): `grep -q KEY=auto run.log`, `cp a KEY=x` or a
user's own `my_launcher --override KEY=v` keep their arguments, and the key is reported instead.
Decided from the command's words alone.
"""

from __future__ import annotations

import re

from migrator.layout import verl_layout
from migrator.rewrite.shell.syntax import is_override_word, script_position

_PYTHON = re.compile(rb"python(?:[0-9][0-9.]*)?")
# Commands that run the rest of their words as a command line (`nohup python3 -m verl...`,
# `ray job submit ... -- python3 -m verl...`): a verl interpreter word may follow them.
# Launchers whose script is `-m module` or the first `.py` operand.
_SCRIPT_LAUNCHERS = frozenset({b"torchrun", b"deepspeed", b"accelerate"})
_LAUNCHERS = frozenset({b"nohup", b"time", b"exec", b"env", b"srun", b"mpirun", b"numactl", b"taskset", b"stdbuf",
                        b"nice", b"timeout", b"ray", b"uv", b"conda", b"bash", b"sh"}) | _SCRIPT_LAUNCHERS
_TORCH_LAUNCH_MODULES = frozenset({b"torch.distributed.run", b"torch.distributed.launch"})
# Options of python that take a value in the next word.
_PYTHON_VALUE_OPTIONS = frozenset({b"-X", b"-W", b"-Q"})
_EXPANDED_NAME = re.compile(rb"\$\{?#?!?([A-Za-z_][A-Za-z0-9_]*)")


def _unquoted(word: bytes) -> bytes:
    return word.strip(b"\"'")


def _basename(word: bytes) -> bytes:
    return _unquoted(word).rsplit(b"/", 1)[-1]


def is_verl_module(name: bytes) -> bool:
    layout = verl_layout()
    return name in layout.package_bytes or name.startswith(layout.package_prefixes_bytes)


def _components(path: bytes) -> list[bytes]:
    return _unquoted(path).split(b"/")


def is_verl_python_script(word: bytes) -> bool:
    """`verl/trainer/main_ppo.py`, `/src/verl/verl/trainer/x.py`, `recipe/dapo/main_dapo.py`."""
    parts = _components(word)
    packages = verl_layout().package_bytes
    return parts[-1].endswith(b".py") and any(p in packages for p in parts[:-1])


def is_verl_shell_script(word: bytes) -> bool:
    """verl's launch scripts, which hand their arguments to the trainer (`examples/.../run_x.sh "$@"`)."""
    parts = _components(word)
    roots = verl_layout().root_bytes
    return parts[-1].endswith(b".sh") and any(p in roots for p in parts[:-1])


def verl_entry_index(words: list[bytes]) -> int | None:
    """The index of the word naming the verl entry point a command runs (the overrides follow it),
    or None when the command runs something else."""
    if not words or not may_start_launch(words[0]):
        return None
    if _unquoted(words[0]).startswith(b"$"):  # `$PYTHON -m verl...`, `${PY:-python3} verl/.../x.py`
        return _python_entry(words, 1)
    script = script_position(words)
    if script and is_verl_shell_script(words[script]):
        return script
    for i, word in enumerate(words):
        name = _basename(word)
        if _PYTHON.fullmatch(name):
            return _python_entry(words, i + 1)
        if name in _SCRIPT_LAUNCHERS:
            return _launcher_entry(words, i + 1)
    return None


def may_start_launch(word: bytes) -> bool:
    """Can a command that runs verl start with this word: an interpreter, a launcher, or an expansion?"""
    return _unquoted(word).startswith(b"$") or _basename(word) in _LAUNCHERS or bool(_PYTHON.fullmatch(_basename(word)))


def _python_entry(words: list[bytes], i: int) -> int | None:
    while i < len(words) and words[i].startswith(b"-") and words[i] not in (b"-m", b"-c"):
        i += 2 if words[i] in _PYTHON_VALUE_OPTIONS else 1
    if i + 1 < len(words) and words[i] == b"-m":
        module = _unquoted(words[i + 1])
        if is_verl_module(module):
            return i + 1
        return _launcher_entry(words, i + 2) if module in _TORCH_LAUNCH_MODULES else None
    if i < len(words) and is_verl_python_script(words[i]):
        return i
    return None


def _launcher_entry(words: list[bytes], i: int) -> int | None:
    """A launcher's script (torchrun, torch.distributed.run, deepspeed, accelerate launch): `-m module`
    or the first `.py` operand."""
    while i < len(words):
        if words[i] == b"-m" and i + 1 < len(words):
            return i + 1 if is_verl_module(_unquoted(words[i + 1])) else None
        if _unquoted(words[i]).endswith(b".py"):
            return i if is_verl_python_script(words[i]) else None
        i += 1
    return None


def expanded_names(word: bytes) -> set[bytes]:
    """Variables and arrays a word expands (`"${ARGS[@]}"`, `$EXTRA`)."""
    return set(_EXPANDED_NAME.findall(word))


def is_override_list(elements: list[bytes]) -> bool:
    """An array in verl's style: every element an override (`a.b=c`, `+a.b=c`, `~a.b`)."""
    return bool(elements) and all(is_override_word(e) for e in elements)
