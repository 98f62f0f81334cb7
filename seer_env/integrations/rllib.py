"""Ray RLlib: register every seer_env env with ``ray.tune.registry.register_env``.

```python
from ray.rllib.algorithms.ppo import PPOConfig
from seer_env.integrations import rllib as seer_rllib

seer_rllib.register()  # "pcs_v0", "aircraft_v0", ...
config = (
    PPOConfig()
    .environment("pcs_v0", env_config={"width": 8, "height": 8, "max_cycles": 100})
    .env_runners(num_env_runners=2, num_cpus_per_env_runner=2)
    .multi_agent(policies={"shared"}, policy_mapping_fn=lambda aid, *a, **k: "shared")
)
algo = config.build_algo()
algo.train()
```

Every env is wrapped in :class:`SeerRLlibEnv`, a ``ParallelPettingZooEnv``
that fixes the wrapper's quirks (below). ``register()`` must run in the
driver before the algorithm is built; Ray ships the registered creator to the
env runners, which import ``seer_env`` themselves (it is installed in the same
environment).

**Thread pool per env runner.** Each env runner process hosts its env(s), and
each env its own runtime thread pool. Unless ``env_config`` sets
``num_threads``, the pool gets as many threads as CPUs Ray reserved for the
env runner (``num_cpus_per_env_runner``, read in the runner through
``ray.get_runtime_context().get_assigned_resources()["CPU"]``), never more
than the CPUs the process may run on (``os.sched_getaffinity``); with more
than one thread the executor defaults to ``"parallel"``, else ``"serial"``.
In the driver (outside Ray workers) the env gets one thread: RLlib builds one
there only to read spaces. With ``num_envs_per_env_runner > 1`` the envs of a
runner do not share a pool: set ``num_threads`` yourself
(``num_cpus_per_env_runner // num_envs_per_env_runner``).

**Seeds.** RLlib seeds only the first reset of each env runner (from
``config.debugging(seed=...)``); later resets are unseeded and our envs then
continue deterministically from the previous episode's seed. A ``seed`` in
``env_config`` would therefore make every runner replay the same random
streams, so the creator derives each env's seed from ``(seed, worker_index,
n)``, ``n`` counting the envs built so far in that process.

**Scaling past one machine** is RLlib's job: more env runners on a Ray
cluster, each hosting a seer_env env with its own thread pool
(``docs/integrations.md``).
"""

from __future__ import annotations

import itertools
import math
import os
import threading
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
from pettingzoo import ParallelEnv
from ray.rllib.env.wrappers.pettingzoo_env import ParallelPettingZooEnv
from ray.tune.registry import register_env

import seer_env
from seer_env.validation import validate_seed

__all__ = ["SeerRLlibEnv", "env_creator", "env_runner_threads", "register"]

_creation_lock = threading.Lock()
_creations: dict[tuple, itertools.count] = {}


class SeerRLlibEnv(ParallelPettingZooEnv):
    """``ParallelPettingZooEnv`` over a seer_env ParallelEnv, its quirks fixed.

    What differs from the stock wrapper (Ray 2.x), and why:

    - ``agents`` and ``possible_agents`` keep the env's order (the stock
      wrapper rebuilds them through a ``set``) and ``agents`` follows the env
      after every reset and step (the stock one never updates it, so agents
      that die would stay listed).
    - ``observation_spaces`` / ``action_spaces`` are the env's own dicts (in
      ``possible_agents`` order, one shared space object), which RLlib's
      ``get_observation_space(agent_id)`` reads first.
    - ``"__all__"`` ends the episode exactly when the env has no live agent
      left: ``terminateds["__all__"]`` when every agent of the last step
      terminated, ``truncateds["__all__"]`` otherwise. The stock wrapper sets
      neither when the last agents end by a mix of termination and
      truncation, and RLlib would step an env that has no agents left.
    - ``render()`` returns the env's ``render()`` in its own ``render_mode``
      (the stock wrapper passes its mode as an argument, which seer_env envs
      accept and ignore).

    The constructor still resets the env once without a seed (the stock
    wrapper needs observations to find the agents); RLlib's first reset
    reseeds it.
    """

    def __init__(self, env: ParallelEnv) -> None:
        super().__init__(env)
        self.agents = list(env.agents)
        self.possible_agents = list(env.possible_agents)
        self.observation_spaces = dict(env.observation_spaces)
        self.action_spaces = dict(env.action_spaces)
        self.render_mode = getattr(env, "render_mode", None)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Reset the env; returns ``(obs, infos)`` dicts over every agent."""
        obs, infos = self.par_env.reset(seed=seed, options=options)
        self.agents = list(self.par_env.agents)
        return obs, infos or {}

    def step(self, action_dict: dict):
        """Step the env; the returned done dicts carry ``"__all__"``."""
        obs, rewards, terminateds, truncateds, infos = self.par_env.step(action_dict)
        self.agents = list(self.par_env.agents)
        over = not self.agents
        all_terminated = over and all(terminateds.values())
        terminateds["__all__"] = all_terminated
        truncateds["__all__"] = over and not all_terminated
        return obs, rewards, terminateds, truncateds, infos

    def render(self):
        """The env's ``render()`` (in the env's own ``render_mode``)."""
        return self.par_env.render()


def env_runner_threads() -> int:
    """Runtime threads for an env built in this process (see the module docstring).

    Inside a Ray worker: the CPUs Ray reserved for it (``num_cpus_per_env_runner``),
    at least 1 and at most ``len(os.sched_getaffinity(0))``. Elsewhere: 1.
    """
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    try:
        import ray

        if not ray.is_initialized():
            return 1
        context = ray.get_runtime_context()
        if context.worker.mode != ray.WORKER_MODE:
            return 1
        cpus = context.get_assigned_resources().get("CPU", 1.0)
    except Exception:  # noqa: BLE001 - any failure to ask Ray means "not in a runner"
        return 1
    return max(1, min(int(math.floor(cpus)), usable or 1))


def _derived_seed(seed: int, worker_index: int, n: int) -> int:
    state = np.random.SeedSequence([seed, worker_index, n]).generate_state(1, np.uint64)
    return int(state[0])


class _EnvCreator:
    """Picklable env creator (by reference to this module: Ray ships it to runners)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"env_creator({self.name!r})"

    def __call__(self, config: dict | None = None) -> SeerRLlibEnv:
        cfg: dict[str, Any] = dict(config or {})
        if "num_threads" not in cfg:
            threads = env_runner_threads()
            cfg["num_threads"] = threads
            cfg.setdefault("executor", "parallel" if threads > 1 else "serial")
        if cfg.get("seed") is not None:
            worker = int(getattr(config, "worker_index", 0))
            seed = validate_seed(cfg["seed"])
            cfg["seed"] = _derived_seed(seed, worker, _creation_number(self.name, worker, cfg))
        return SeerRLlibEnv(seer_env.make(self.name, **cfg))


def _creation_number(name: str, worker: int, cfg: dict) -> int:
    key = (name, worker, repr(sorted(cfg.items())))
    with _creation_lock:
        return next(_creations.setdefault(key, itertools.count()))


def env_creator(name: str) -> Callable[[dict], SeerRLlibEnv]:
    """The RLlib env creator for env ``name``: ``env_config -> SeerRLlibEnv``.

    ``env_config`` holds the env's keyword arguments (``seer_env.make(name, **cfg)``).
    ``num_threads`` and ``executor`` default per :func:`env_runner_threads`; a
    ``seed`` is turned into a distinct seed per env runner and env.
    """
    if name not in seer_env.env_names():
        raise ValueError(f"name must be one of {seer_env.env_names()}, got {name!r}")
    return _EnvCreator(name)


def register(names: Iterable[str] | None = None, *, prefix: str = "") -> list[str]:
    """Register envs with ``ray.tune.registry.register_env``.

    Args:
        names: env names (default: every ``seer_env.env_names()``).
        prefix: prepended to each registered name (e.g. ``"seer/"``).

    Returns:
        The registered names, for ``AlgorithmConfig.environment(name)``.
    """
    names = seer_env.env_names() if names is None else list(names)
    registered = []
    for name in names:
        register_env(prefix + name, env_creator(name))
        registered.append(prefix + name)
    return registered
