"""What the envs and the pure-Python references share about each workload.

Neutral ground: the references (``seer_env.reference``) check the envs, so they
import from here and never from ``seer_env.envs``.
"""
