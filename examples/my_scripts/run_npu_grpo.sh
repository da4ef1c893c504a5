#!/bin/bash
# Qwen3-30B-A3B GRPO on Ascend NPU (copied from verl examples)
set -xeuo pipefail

export HCCL_CONNECT_TIMEOUT=1500
export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
export VLLM_ATTENTION_BACKEND=XFORMERS

bucket_mb=${BUCKET_MB:-512}

ROLLOUT_ARGS=(
    actor_rollout_ref.rollout.name=vllm
    "actor_rollout_ref.rollout.update_weights_bucket_megabytes=${bucket_mb}"
    actor_rollout_ref.rollout.tensor_model_parallel_size=4
)

case "${DEVICE:-npu}" in
    npu)
        EXTRA="actor_rollout_ref.rollout.update_weights_bucket_megabytes=1024"
        ;;
    *)
        EXTRA="trainer.device=cuda"
        ;;
esac

if [ "${BASELINE:-0}" = "1" ]; then
    bash examples/grpo_trainer/run_qwen3_30b_a3b_mindspeed.sh trainer.total_epochs=1
    exit 0
fi

python3 -m verl.trainer.main_ppo \
    algorithm.adv_estimator=grpo \
    "${ROLLOUT_ARGS[@]}" \
    actor_rollout_ref.rollout.update_weights_bucket_megabytes=2048 \
    actor_rollout_ref.rollout.engine_kwargs.vllm.enable_expert_parallel=True \
    ${EXTRA} \
    trainer.nnodes=1 $@
