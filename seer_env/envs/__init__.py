"""Built-in environments, one versioned module each (PettingZoo style).

``from seer_env.envs import pcs_v0; env = pcs_v0.parallel_env()``.
"""
