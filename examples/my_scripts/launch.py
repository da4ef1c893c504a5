"""Launch GRPO on 8 NPUs (our team's launcher, written for verl v0.6)."""
import subprocess
import sys
from verl.utils import npu_utils

ARGS = ["critic.model.fsdp_config.param_offload=True", "trainer.n_gpus_per_node=8"]

if __name__ == "__main__" and npu_utils.is_npu_available():
    sys.exit(subprocess.call([sys.executable, "-m", "verl.trainer.main_ppo", *ARGS]))
