"""Ray RLlib: register every seer_env env with ``ray.tune.registry.register_env``.

```python
from ray.rllib.algorithms.ppo import PPOConfig
from seer_env.integrations import rllib as seer_rllib

seer_rllib.register()  # "pcs_v0", "aircraft_v0", ...
config = (
    PPOConfig()
    .environment("pcs_v0", env_config={"width": 8, "height": 8, "max_cycles": 100})
    .env_runners(num_env_runners=2, num_cpus_per_env_runner=1)
    .training(train_batch_size_per_learner=4096, minibatch_size=1024)  # in agent steps
    .multi_agent(
        policies={"shared"},
        policy_mapping_fn=lambda aid, *a, **k: "shared",
        count_steps_by="agent_steps",  # the default counts env steps: 64 rows each here
    )
)
seer_rllib.check_resources(config)  # ValueError now, rather than a silent wait for CPUs
algo = config.build_algo()
algo.train()
```

Every env is wrapped in :class:`SeerRLlibEnv`, a ``ParallelPettingZooEnv``
that fixes the wrapper's quirks (below). ``register()`` must run in the
driver before the algorithm is built; Ray ships the registered creator to the
env runners, which import ``seer_env`` themselves (it is installed in the same
environment).

**Thread budget per env runner.** Each env runner process hosts its env(s),
and each env its own runtime thread pool. Unless ``env_config`` sets
``num_threads``, an env built in an env runner gets ``num_threads="auto"``:
STPA chooses executor and pool size within the CPUs Ray reserved for that
runner (``num_cpus_per_env_runner``, read in the runner through
``ray.get_runtime_context().get_assigned_resources()``), never the node's
core count: Ray does not pin a runner to its CPUs, so without this every
runner of a node would size its pool for the whole node
(``seer_env.stpa.hardware.usable_threads`` applies the grant). One reserved
CPU means one thread, with no preflight. With ``num_env_runners=0`` the
driver samples and its env gets ``"auto"`` over the driver's CPUs; with
remote runners, an env RLlib builds in the driver (only to read spaces) gets
one thread. With ``num_envs_per_env_runner > 1``, each env of a runner sees
the runner's whole budget (RLlib steps them one after another).
:func:`describe_env_runners` shows what every runner chose.

**Seeds.** RLlib seeds only the first reset of each env runner (from
``config.debugging(seed=...)``); later resets are unseeded and our envs then
continue deterministically from the previous episode's seed. A ``seed`` in
``env_config`` would therefore make every runner replay the same random
streams, so the creator derives each env's seed from ``(seed, worker_index,
n)``, ``n`` counting the envs built so far in that process.

**Scaling past one machine** is RLlib's job: more env runners on a Ray
cluster, each hosting a seer_env env with its own thread pool
(``docs/scaling.md``).
"""

from __future__ import annotations

import itertools
import os
import threading
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv
from ray.rllib.env.multi_agent_env import ENV_STATE
from ray.rllib.env.wrappers.pettingzoo_env import ParallelPettingZooEnv
from ray.tune.registry import register_env

import seer_env
from seer_env.stpa import hardware
from seer_env.validation import validate_seed

__all__ = [
    "SeerRLlibEnv",
    "check_resources",
    "describe_env_runners",
    "env_creator",
    "env_runner_threads",
    "register",
    "requested_cpus",
]

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
    - The env's global state, for a centralised critic: ``state()`` and
      ``state_space`` always; with ``global_state=True`` (``env_config``
      key ``"global_state"``) every agent's observation is also a ``Dict``
      ``{"obs": observation, "state": state}``, the key being RLlib's
      ``ENV_STATE``, where RLlib's multi-agent examples put the state (the
      two-step game of its QMIX example), so that a critic module reads it
      from the batch beside the observation.

    The constructor still resets the env once without a seed (the stock
    wrapper needs observations to find the agents); RLlib's first reset
    reseeds it. ``env_steps`` counts the steps taken since construction
    (:func:`describe_env_runners` reports it per runner).
    """

    def __init__(self, env: ParallelEnv, *, global_state: bool = False) -> None:
        if not isinstance(global_state, bool):
            raise ValueError(f"global_state must be a bool, got {global_state!r}")
        super().__init__(env)
        self.env_steps = 0
        self.agents = list(env.agents)
        self.possible_agents = list(env.possible_agents)
        #: The env's global state space (``state()``); None for an env without one.
        self.state_space = getattr(env, "state_space", None)
        self.global_state = global_state
        self.observation_spaces = dict(env.observation_spaces)
        if global_state:
            if self.state_space is None:
                raise ValueError(f"global_state=True, but {env!r} has no state_space")
            self.observation_spaces = {
                agent: spaces.Dict({"obs": space, ENV_STATE: env.state_space})
                for agent, space in self.observation_spaces.items()
            }
            self.observation_space = spaces.Dict(self.observation_spaces)
        self.action_spaces = dict(env.action_spaces)
        self.render_mode = getattr(env, "render_mode", None)

    def state(self) -> np.ndarray:
        """The env's global state (``env.state()``, in ``state_space``)."""
        return self.par_env.state()

    def _observations(self, obs: dict) -> dict:
        """``obs``, each with the state beside it when ``global_state`` is on."""
        if not self.global_state:
            return obs
        state = self.par_env.state()
        return {agent: {"obs": o, ENV_STATE: state} for agent, o in obs.items()}

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Reset the env; returns ``(obs, infos)`` dicts over every agent."""
        obs, infos = self.par_env.reset(seed=seed, options=options)
        self.agents = list(self.par_env.agents)
        return self._observations(obs), infos or {}

    def step(self, action_dict: dict):
        """Step the env; the returned done dicts carry ``"__all__"``."""
        obs, rewards, terminateds, truncateds, infos = self.par_env.step(action_dict)
        self.env_steps += 1
        self.agents = list(self.par_env.agents)
        over = not self.agents
        all_terminated = over and all(terminateds.values())
        terminateds["__all__"] = all_terminated
        truncateds["__all__"] = over and not all_terminated
        return self._observations(obs), rewards, terminateds, truncateds, infos

    def render(self):
        """The env's ``render()`` (in the env's own ``render_mode``)."""
        return self.par_env.render()

    def snapshot(self):
        """The env's ``snapshot()`` (``seer_env.snapshot.Snapshot``; docs/branching.md)."""
        return self.par_env.snapshot()

    def restore(self, snapshot):
        """The env's ``restore(snapshot)``; returns ``(obs, infos)`` for the live agents there."""
        obs, infos = self.par_env.restore(snapshot)
        self.agents = list(self.par_env.agents)
        return self._observations(obs), infos


def env_runner_threads() -> int:
    """The most runtime threads an env built in this process may use.

    Inside a Ray worker (an env runner): the CPUs Ray reserved for it
    (``num_cpus_per_env_runner``, rounded down, at least 1), capped by the
    CPUs the process may run on (affinity, cgroup quota). Elsewhere: 1.
    """
    if hardware.ray_assigned_cpus() is None:
        return 1
    return hardware.usable_threads()


def _default_threads(config: dict | None) -> int | str:
    """``num_threads`` for an env whose ``env_config`` names none (see the module docstring)."""
    if hardware.ray_assigned_cpus() is not None:
        return "auto"  # STPA, within this runner's CPU grant
    sampling_in_driver = (
        getattr(config, "worker_index", None) == 0 and getattr(config, "num_workers", None) == 0
    )
    return "auto" if sampling_in_driver else 1


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
        global_state = cfg.pop("global_state", False)
        if "num_threads" not in cfg:
            cfg["num_threads"] = _default_threads(config)
        if cfg.get("seed") is not None:
            worker = int(getattr(config, "worker_index", 0))
            seed = validate_seed(cfg["seed"])
            cfg["seed"] = _derived_seed(seed, worker, _creation_number(self.name, worker, cfg))
        return SeerRLlibEnv(seer_env.make(self.name, **cfg), global_state=global_state)


def _creation_number(name: str, worker: int, cfg: dict) -> int:
    key = (name, worker, repr(sorted(cfg.items())))
    with _creation_lock:
        return next(_creations.setdefault(key, itertools.count()))


def env_creator(name: str) -> Callable[[dict], SeerRLlibEnv]:
    """The RLlib env creator for env ``name``: ``env_config -> SeerRLlibEnv``.

    ``env_config`` holds the env's keyword arguments (``seer_env.make(name, **cfg)``)
    and, optionally, ``"global_state": True`` (``SeerRLlibEnv``'s: the state
    in every observation, for a centralised critic).
    ``num_threads`` defaults to ``"auto"`` in env runners (STPA within the
    runner's CPU grant) and to 1 in a driver that does not sample; a ``seed``
    is turned into a distinct seed per env runner and env.
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


def requested_cpus(config: Any) -> float:
    """CPUs an ``AlgorithmConfig`` asks Ray to reserve for its actors.

    Env runners (``num_env_runners x num_cpus_per_env_runner``) plus remote
    learners (``num_learners x num_cpus_per_learner``, ``"auto"`` being 1 CPU
    without GPUs). With ``num_learners=0`` the learner runs in the driver,
    which holds no Ray reservation.
    """
    cpus = config.num_env_runners * float(config.num_cpus_per_env_runner)
    if config.num_learners > 0:
        per_learner = config.num_cpus_per_learner
        if per_learner == "auto":
            per_learner = 0 if config.num_gpus_per_learner else 1
        cpus += config.num_learners * float(per_learner)
    return cpus


def check_resources(config: Any) -> float:
    """Raise ValueError when ``config`` asks for more CPUs than the Ray cluster has.

    Ray queues an actor whose CPUs no node can grant and RLlib waits for its
    env runners without a timeout, so ``config.build_algo()`` with, say, two
    runners of 2 CPUs each on a 2-CPU machine hangs without a message. Call
    this after ``ray.init()`` and before ``build_algo()`` to fail at once
    instead. On an autoscaling cluster, whose nodes join on demand, the
    current total is not the limit: do not call it there.

    Returns:
        The CPUs requested (``requested_cpus``), when they fit.

    Raises:
        RuntimeError: Ray is not initialized.
        ValueError: the request exceeds ``ray.cluster_resources()["CPU"]``.
    """
    import ray

    if not ray.is_initialized():
        raise RuntimeError("check_resources() called before ray.init()")
    requested = requested_cpus(config)
    available = float(ray.cluster_resources().get("CPU", 0.0))
    if requested > available:
        raise ValueError(
            f"the config asks Ray for {requested:g} CPUs (num_env_runners="
            f"{config.num_env_runners} x num_cpus_per_env_runner="
            f"{config.num_cpus_per_env_runner}, num_learners={config.num_learners}) but the "
            f"cluster has {available:g}: Ray would queue the env runners and build_algo() "
            "would wait forever. Lower num_env_runners or num_cpus_per_env_runner "
            "(docs/scaling.md has a configuration for 2 CPUs)"
        )
    return requested


def _describe_this_runner(runner: Any) -> dict:
    """What one env runner (run inside it) holds: node, CPU grant, each env's pool."""
    import ray

    envs = []
    for env in getattr(runner.env, "envs", None) or []:
        wrapped = env.unwrapped
        par_env = getattr(wrapped, "par_env", None)
        runtime = getattr(par_env, "runtime", None)
        if runtime is None:
            continue  # not a seer_env env
        stpa = runtime.stpa or {}
        envs.append(
            {
                "num_threads": runtime.num_threads,
                "executor": runtime.executor,
                "stpa_source": stpa.get("source"),
                "stpa_reason": stpa.get("reason"),
                "env_steps": getattr(wrapped, "env_steps", None),
            }
        )
    return {
        "worker_index": runner.worker_index,
        "node_id": ray.get_runtime_context().get_node_id(),
        "pid": os.getpid(),
        "ray_assigned_cpus": hardware.ray_assigned_cpus(),
        "usable_threads": hardware.usable_threads(),
        "envs": envs,
    }


def describe_env_runners(algo: Any, timeout_s: float | None = 60.0) -> list[dict]:
    """Per remote env runner of ``algo``: where it runs and how its envs' pools were sized.

    Each entry has ``worker_index``, ``node_id`` (the Ray node), ``pid``,
    ``ray_assigned_cpus`` (its CPU grant), ``usable_threads`` (the budget
    STPA chose within) and ``envs``: per seer_env env, ``num_threads``,
    ``executor``, ``stpa_source`` / ``stpa_reason`` (STPA's report, None for
    an explicit ``num_threads``) and ``env_steps`` (steps since the env was
    built). With ``num_env_runners=0`` the one entry is the driver's own env
    runner (``worker_index`` 0), which samples then. Unhealthy runners are
    skipped.

    Args:
        algo: a built RLlib ``Algorithm``.
        timeout_s: seconds to wait for the runners' answers.
    """
    group = algo.env_runner_group
    answers = group.foreach_env_runner(
        _describe_this_runner,
        local_env_runner=group.num_remote_env_runners() == 0,
        timeout_seconds=timeout_s,
    )
    return sorted(answers, key=lambda d: d["worker_index"])
