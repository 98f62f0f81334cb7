"""Adapters between seer_env envs and training libraries.

Each submodule imports its library only when imported itself, so
``import seer_env`` never needs the optional extras:

- ``seer_env.integrations.rllib``: ``register()`` every env with Ray RLlib
  (``pip install "seer_env[rllib]"``).
- ``seer_env.integrations.torchrl``: ``make_env(name, **config)``, a TorchRL
  ``PettingZooWrapper`` (``pip install "seer_env[torchrl]"``).
- ``seer_env.integrations.gymnasium``: ``JointEnv``, one env instance as a
  single-agent ``gymnasium.Env`` with every agent stacked along the first axis,
  for ``gymnasium.vector.AsyncVectorEnv`` and other Gymnasium tooling.

- ``seer_env.integrations.supersuit``: ``black_death(env)`` for envs whose
  agents terminate early (SuperSuit's ``black_death_v3`` never ends their
  episodes); otherwise SuperSuit's ``pettingzoo_env_to_vec_env_v1`` and
  ``concat_vec_envs_v1`` take the ParallelEnv as it is.

See ``docs/integrations.md``.
"""

__all__: list[str] = []
