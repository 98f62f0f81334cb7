"""Built-in environments, PettingZoo style.

One env class per workload (``pcs.PcsEnv``, ``aircraft.AircraftEnv``) and one
short module per version over it (``pcs_v0``, ``pcs_v1``, ``aircraft_v0``,
``aircraft_v1``: ``seer_env.envs.version``):
``from seer_env.envs import pcs_v0; env = pcs_v0.parallel_env()``.
"""
