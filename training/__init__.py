"""Baselines for the learnable tasks, reproducible in one command.

``python -m training`` (or ``make baselines``) scores, on a small and
a medium size of each task: a random policy, the best fixed policy (constant
guards and a rush-hour rule for pcs_v1; hover and a PD goal seeker for
aircraft_v1) and PPO with one policy shared by all agents
(:mod:`training.ppo`, trained over :mod:`seer_env.vector`), over
several seeds. It prints a Markdown table (mean ± sd), writes learning curves
as PNG and the raw numbers as JSON. ``docs/tasks.md`` shows the results.
"""

from training.evaluate import TorchPolicy, episode_returns
from training.ppo import PPOConfig, train

__all__ = ["PPOConfig", "TorchPolicy", "episode_returns", "train"]
