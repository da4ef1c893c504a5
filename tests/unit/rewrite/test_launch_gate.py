"""Where verl's Hydra reads an override string outside shell syntax (migrator/rewrite/launch_gate.py)."""

from __future__ import annotations

import pytest

from migrator.rewrite.launch_gate import hydra_reads, launches_verl


@pytest.mark.parametrize("source", [
    'subprocess.run(["python3", "-m", "verl.trainer.main_ppo", *ARGS])',
    "os.system('python3 -m recipe.dapo.main_dapo a=1')",
    'cmd = "python3 verl/trainer/main_ppo.py a=1"',
    'subprocess.run(["python", "/opt/verl/trainer/main_ppo.py"] + overrides)',
    'subprocess.run([sys.executable, "-m", "verl.trainer.main_ppo"])',
])
def test_a_file_that_launches_verl(source):
    assert launches_verl(source.encode())


@pytest.mark.parametrize("source", [
    "from verl.trainer.main_ppo import create_rl_dataset",  # verl's own ray_trainer: an import, not a launch
    '"""See verl/trainer/main_ppo.py for the entry point."""',
    'subprocess.run(["python3", "my_tool.py", *ARGS])',
    "import verl",
])
def test_a_file_that_launches_nothing(source):
    assert not launches_verl(source.encode())


@pytest.mark.parametrize(("text", "read"), [
    (b"trainer.nnodes=1", True),
    (b"trainer.nnodes=1 data.train_batch_size=8 --flag", True),
    (b"python3 -m verl.trainer.main_ppo trainer.nnodes=1", True),
    (b"set trainer.nnodes=1 to use one node", False),
    (b"trainer.nnodes=1 is what we use", False),
])
def test_which_strings_of_a_launcher_hydra_reads(text, read):
    assert hydra_reads(text, True) is read
    assert hydra_reads(text, False) is False  # a file that launches nothing: none
