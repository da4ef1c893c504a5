"""Overrides a one-line test launch needs to pass verl's own start-up checks at v0.9.0 (lint's VM020):
verl stops a launch that sets no micro batch size for the actor, the rollout's log-prob pass and the
critic. Tests about other checks add them so that only what they test is found."""

MICRO_BATCHES = ("actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=2 "
                 "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=2 critic.ppo_micro_batch_size_per_gpu=2")
