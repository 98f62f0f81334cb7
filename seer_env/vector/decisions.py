"""The vector env of a model whose agents act when their events ask (event-driven decisions).

``seer_env.vector.make("pcs_admission_v0", num_instances=M, **config)`` (or a
registered decision model by name, or a ``NumbaModel`` subclass that declares
``decisions``) returns a :class:`SeerDecisionVectorEnv`: ``M`` instances of a
``seer_env.SeerDecisionEnv`` (docs/decisions.md) as one Gymnasium-style
``VectorEnv`` with fixed shapes.

Layout: one row per instance, one column per possible agent
(``n = agents_per_instance``):

- ``step(actions)`` takes ``actions`` of shape ``[M, n]`` (Discrete) or
  ``[M, n, dim]`` (Box) and uses only the rows where ``needs_action`` is True:
  the actions in the other rows are ignored (any value; they are not even
  range-checked). A wrong shape or dtype is a ValueError naming ``actions``;
  an action outside the space in a row that is asked is a ValueError naming
  the instance and the agent. Nothing steps when an action is refused.
- ``step`` returns ``(obs, rewards, terminations, truncations, infos)``:
  ``obs`` float32 ``[M, n, obs_dim]``, ``rewards`` float64 ``[M, n]`` (what
  accrued for the agent since its previous return, as
  ``SeerDecisionEnv.step_arrays``: 0 in the rows not returned),
  ``terminations``/``truncations`` bool ``[M, n]``; ``infos["needs_action"]``
  bool ``[M, n]``: the agents that must act now (the rows whose observations
  are fresh), ``infos["decision_time"]`` float64 ``[M, n]``: when each of
  them asked (NaN where not asked). The same arrays are the properties
  ``needs_action`` and ``decision_times``. For a model that declares
  ``action_mask``, ``action_masks`` is bool ``[M, n, k]`` (the asking
  agents' masks; ``step`` refuses an action one forbids).
- Each instance advances to its own next requests (or its episode's end):
  instance ``i`` returns exactly what a ``SeerDecisionEnv`` seeded like it
  (``seed + i``) returns from ``step_arrays`` with the same actions.
- An instance's episode ends after ``max_cycles`` steps: its row holds every
  agent (the boundary observation, the rewards still owed), ``truncations``
  all True and ``needs_action`` all False. Autoreset is NEXT_STEP
  (``metadata["autoreset_mode"]``): the next ``step()`` resets that instance
  instead of stepping it and returns its first requests with reward 0 and no
  flags.

``num_envs`` is ``num_instances`` (the arrays' batch dimension; each row holds
an instance's agents), unlike ``SeerVectorEnv``, whose rows are agents.
``single_observation_space`` / ``single_action_space`` are one instance's
(``[n, obs_dim]``, ``MultiDiscrete([k] * n)``), ``single_agent_observation_space``
/ ``single_agent_action_space`` one agent's.

``reset(seed=s)`` seeds instance ``i`` with ``s + i`` (a list: one seed per
instance); ``reset()`` continues each instance's seed sequence;
``options={"reset_mask": mask}`` (one value per instance) resets only the
masked instances.

How it runs: the instances are ``M`` ``SeerDecisionEnv`` objects (``envs``),
stepped one after another through their ``step_arrays`` fast path; each
instance's own executor runs its windows (``executor``/``num_threads`` apply to
each instance). A step's Python work is a fixed number of NumPy calls per
instance, none per agent. An error inside an instance's step (a contract
violation) leaves the instances stepped before it stepped and the vector env
refusing ``step()`` until ``reset()``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from seer_env import _core
from seer_env.action_checker import ActionChecker
from seer_env.action_masks import check_masked_actions
from seer_env.decision_env import SeerDecisionEnv
from seer_env.model_source import is_numba_model
from seer_env.models.numba import NumbaModel
from seer_env.options import option_names
from seer_env.registry import env_names
from seer_env.registry import make as make_env
from seer_env.validation import validate_seed
from seer_env.vector.instance_count import resolve_num_instances
from seer_env.vector.instance_seeds import instance_seeds
from seer_env.vector.reset_mask import instance_mask

__all__ = ["SeerDecisionVectorEnv", "declares_decisions"]


def declares_decisions(name: Any) -> bool:
    """Whether ``name`` (an env name, a registered model or a NumbaModel) has its agents ask."""
    if isinstance(name, str):
        if name in env_names():
            return name in env_names(decisions=True)
        return name in _core.model_names() and bool(_core.workload_spec(name).get("decisions"))
    return is_numba_model(name) and bool(getattr(name, "decisions", False))


def _instance(name: str | type[NumbaModel], config: dict, seed: int | None) -> SeerDecisionEnv:
    """One instance: the env ``name`` or the model's ``SeerDecisionEnv``, seeded ``seed``."""
    if isinstance(name, str) and name in env_names():
        return make_env(name, **config, seed=seed)
    options = {k: v for k, v in config.items() if k in option_names()}
    params = {k: v for k, v in config.items() if k not in options}
    return SeerDecisionEnv(name, params, **options, seed=seed)


class SeerDecisionVectorEnv(VectorEnv):
    """``num_instances`` instances of a decision env as one VectorEnv (module docstring)."""

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}

    def __init__(
        self,
        name: str | type[NumbaModel],
        num_instances: int | None = None,
        *,
        num_envs: int | None = None,
        **config: Any,
    ) -> None:
        m = self.num_instances = resolve_num_instances(num_instances, num_envs)
        if not declares_decisions(name):
            raise ValueError(
                f"{name!r} is not a model whose agents act when their events ask (decisions): "
                "its vector env is seer_env.vector.SeerVectorEnv"
            )
        if config.get("render_mode") is not None:
            raise ValueError(
                f"render_mode must be None for a vector env, got {config['render_mode']!r}: "
                "to watch instance i, render seer_env.make(name, render_mode=..., seed=seed + i)"
            )
        config.pop("render_mode", None)
        seeds = instance_seeds(validate_seed(config.pop("seed", None)), m)  # an int or None
        first = _instance(name, dict(config), seeds[0])
        if first._stpa_request is not None:  # num_threads="auto": STPA chooses once, for all
            first._choose_executor()
            config.update(executor=first._options["executor"])
            config.update(num_threads=first._options["num_threads"])
        #: The instances, ``SeerDecisionEnv`` each (instance ``i`` seeded ``seed + i``).
        self.envs: list[SeerDecisionEnv] = [first] + [
            _instance(name, dict(config), seeds[i]) for i in range(1, m)
        ]
        self.env_name = name
        self.possible_agents = list(first.possible_agents)
        n = self.agents_per_instance = len(self.possible_agents)
        self.num_envs = m
        self.max_cycles = first.max_cycles
        agent = self.possible_agents[0]
        #: One agent's spaces (what a policy shared by the agents sees and acts in).
        # The Box: the arrays stay plain; masks come through action_masks.
        self.single_agent_observation_space = first._obs_box
        self._masked = first._masked
        self.single_agent_action_space = first.action_space(agent)
        self.single_state_space = first.state_space
        obs = self.single_agent_observation_space
        self.single_observation_space = spaces.Box(
            np.broadcast_to(obs.low, (n, *obs.shape)),
            np.broadcast_to(obs.high, (n, *obs.shape)),
            dtype=obs.dtype,
        )
        act = self.single_agent_action_space
        if isinstance(act, spaces.Discrete):
            self.single_action_space: spaces.Space = spaces.MultiDiscrete(np.full(n, act.n))
        else:
            self.single_action_space = spaces.Box(
                np.broadcast_to(act.low, (n, *act.shape)),
                np.broadcast_to(act.high, (n, *act.shape)),
                dtype=act.dtype,
            )
        self.observation_space = batch_space(self.single_observation_space, m)
        self.action_space = batch_space(self.single_action_space, m)
        self._actions = ActionChecker(first.sim.spec["action"])
        self._action_shape = (m, n, *self._actions.row_shape)
        # Each row's name in the messages: "cell_3 of instance 1".
        self._row_names = [f"{a} of instance {i}" for i in range(m) for a in self.possible_agents]
        self._needs = np.zeros((m, n), dtype=bool)
        self._times = np.full((m, n), np.nan)
        self._autoreset = np.zeros(m, dtype=bool)  # ended: reset at the next step
        self._ended_at_reset = np.zeros(m, dtype=bool)  # reset() ran to the episode's end
        self._started = False
        self._failed: str | None = None  # a step that raised midway: reset() first
        self.closed = False

    # -- reading ----------------------------------------------------------------------------
    @property
    def needs_action(self) -> np.ndarray:
        """The agents that must act at the next ``step()``: bool ``[M, n]`` (a copy)."""
        return self._needs.copy()

    @property
    def action_masks(self) -> np.ndarray | None:
        """Bool ``[M, n, k]`` for a model that declares ``action_mask`` (else None).

        Row ``[i, j]`` is ``envs[i].action_masks[j]``: where ``needs_action``
        is True, the agent's mask when it asked; ``step()`` refuses an action
        such a row forbids (ValueError naming the instance and the agent;
        nothing steps).
        """
        if not self._masked:
            return None
        return np.stack([env.sim.action_masks() for env in self.envs])

    @property
    def decision_times(self) -> np.ndarray:
        """float64 ``[M, n]``: when each agent of ``needs_action`` asked; NaN elsewhere."""
        return self._times.copy()

    def state(self) -> np.ndarray:
        """Every instance's global state, ``float32[M, state_dim]``."""
        if not self._started:
            raise RuntimeError("state() called before reset()")
        return np.stack([env.state() for env in self.envs])

    def render(self):
        """Not implemented: render an instance's own env (``envs[i]``) instead."""
        raise NotImplementedError(
            "SeerDecisionVectorEnv keeps no rendering env: to watch instance i, build "
            "seer_env.make(name, render_mode='rgb_array', ...) seeded like it (seed + i)"
        )

    # -- episode ----------------------------------------------------------------------------
    def reset(self, *, seed: int | list[int] | None = None, options: dict | None = None):
        """Reset every instance (or those of ``options["reset_mask"]``); ``(obs, infos)``."""
        m = self.num_instances
        options = dict(options or {})
        mask = np.ones(m, dtype=bool)
        if "reset_mask" in options:
            mask = instance_mask(options.pop("reset_mask"), m, self.agents_per_instance)
        seeds = instance_seeds(seed, m)
        if not self._started and not mask.all():
            raise RuntimeError("reset() with a reset_mask called before a full reset()")
        self.closed = False
        obs = np.empty(
            (m, self.agents_per_instance, *self.single_agent_observation_space.shape),
            dtype=np.float32,
        )
        for i, env in enumerate(self.envs):
            if mask[i]:
                obs[i] = self._reset_instance(i, seeds[i], options or None)
            else:  # what its last return held (the runtime's observations since)
                obs[i] = env.sim.observations()
        self._started = True
        if mask.all():
            self._failed = None
        return obs, self._infos()

    def _reset_instance(self, i: int, seed: int | None, options: dict | None = None):
        """Reset instance ``i``; its first observations (its requests in the books)."""
        env = self.envs[i]
        env.reset(seed=seed, options=options)
        self._autoreset[i] = False
        # No request before max_cycles: the next step returns the end (truncated).
        self._ended_at_reset[i] = not env._asked.size
        needs, times = self._needs[i], self._times[i]
        needs[:] = False
        times[:] = np.nan
        needs[env._asked] = True
        times[env._asked] = env._times
        return env.sim.observations()

    def _infos(self) -> dict[str, np.ndarray]:
        ones = np.ones(self.num_instances, dtype=bool)
        return {
            "needs_action": self._needs.copy(),
            "decision_time": self._times.copy(),
            "_needs_action": ones,
            "_decision_time": ones.copy(),
        }

    def step(self, actions: np.ndarray):
        """Answer the asked rows of ``actions``; every instance to its next requests."""
        if not self._started:
            raise RuntimeError("step() called before reset()")
        if self._failed is not None:
            raise RuntimeError(
                f"step() called after a step that failed in {self._failed}; call reset() first"
            )
        m, n = self.num_instances, self.agents_per_instance
        given = np.asarray(actions)
        if given.shape != self._action_shape:
            raise ValueError(
                f"actions must have shape {self._action_shape} ([num_instances, n_agents"
                f"{', dim' if len(self._action_shape) > 2 else ''}]), got {given.shape}"
            )
        # Checked whole before any instance steps; rows not asked are passed through.
        rows = self._actions.check_array(
            given.reshape(m * n, *self._actions.row_shape),
            m * n,
            live=self._needs.reshape(-1),
            names=self._row_names,
        ).reshape(self._action_shape)
        if self._masked:  # rows answered now: asked, in instances that do not restart
            answered = self._needs & ~(self._autoreset | self._ended_at_reset)[:, None]
            check_masked_actions(
                self.action_masks.reshape(m * n, -1),
                rows.reshape(-1),
                answered.reshape(-1),
                self._row_names.__getitem__,
            )
        self.closed = False
        obs = np.empty((m, n, *self.single_agent_observation_space.shape), dtype=np.float32)
        rewards = np.zeros((m, n))
        terminations = np.zeros((m, n), dtype=bool)
        truncations = np.zeros((m, n), dtype=bool)
        needs, times = self._needs, self._times
        needs.fill(False)
        times.fill(np.nan)
        for i, env in enumerate(self.envs):
            try:
                if self._autoreset[i]:  # NEXT_STEP: the instance restarts, its actions ignored
                    obs[i] = self._reset_instance(i, None)
                elif self._ended_at_reset[i]:  # the end reset() ran into, returned now
                    self._ended_at_reset[i] = False
                    obs[i] = env.sim.observations()
                    truncations[i] = True
                    self._autoreset[i] = True
                else:
                    # SeerDecisionEnv.step_arrays, less its check of the actions (done above).
                    env._require_running()
                    o, r, _, tr = env._answer(rows[i][env._asked], dicts=False)
                    obs[i] = o
                    rewards[i] = r
                    asked = env._asked
                    if asked.size:
                        needs[i, asked] = True
                        times[i, asked] = env._times
                    else:  # the episode's end: every agent, truncated
                        truncations[i] = tr
                        self._autoreset[i] = True
            except BaseException:
                self._failed = f"instance {i}"
                raise
        return obs, rewards, terminations, truncations, self._infos()

    def close_extras(self, **kwargs: Any) -> None:
        """Join every instance's worker threads (the instances stay usable)."""
        for env in self.__dict__.get("envs", []):
            env.close()
