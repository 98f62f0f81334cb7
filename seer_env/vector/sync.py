"""The vector env: many instances of one seer_env env as one Gymnasium VectorEnv.

``seer_env.vector.make("pcs_v0", num_envs=M, **config)`` steps all M instances
in one C++ call: with ``executor="parallel"`` they share one thread pool and
one executive list, so small instances fill the threads together.
``make(NumbaPcs, num_envs=M, width=8, ...)`` does the same for a compiled
``seer_env.NumbaModel`` subclass.

Layout (SuperSuit's): agents are flattened into the batch. Row
``i * num_agents + j`` is agent ``j`` of instance ``i``; ``num_envs`` of the
vector env is ``M * num_agents``; ``single_observation_space`` and
``single_action_space`` are one agent's spaces.

Autoreset is NEXT_STEP (``metadata["autoreset_mode"]``): when every agent of
an instance is done, the next ``step()`` resets that instance instead of
stepping it (its actions are ignored) and returns its first observations with
reward 0 and no termination or truncation.

Agents that terminate before their instance ends (Aircraft) are handled like
SuperSuit's ``black_death``: from the step after their termination, their
rows carry zero observations, reward 0 and neither flag, and their actions
are ignored, until the instance resets.

Actions are checked as ``ParallelEnv.step`` checks them
(``seer_env.action_checker``): Discrete values must be in the space; Box
values are clipped to it (Gymnasium's ``ClipAction``) and NaN raises
ValueError.

Contract checks run on the first ``check_steps`` steps of every instance
after the first ``reset()`` (the env's ``check_steps`` argument, default
``seer_env.options.DEFAULT_CHECK_STEPS``; 0: off; ``check=True``: every step). A
checked instance steps alone, one handler at a time, before the batch;
outputs do not change.

``reset(seed=s)`` seeds instance i with ``s + i``; ``reset()`` continues each
instance's seed sequence exactly like ``ParallelEnv.reset()`` without a seed;
``options={"reset_mask": mask}`` (one value per row or per instance) resets
only the masked instances.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from seer_env import _core
from seer_env.action_checker import ActionChecker
from seer_env.env import SeerParallelEnv
from seer_env.model_source import is_numba_model, new_vector_simulation
from seer_env.models.numba import NumbaModel
from seer_env.options import option_names
from seer_env.registry import make as make_env
from seer_env.seeding import episode_seed
from seer_env.validation import validate_int, validate_seed

_STEP, _RESET, _SKIP = 0, 1, 2


class _Step(NamedTuple):
    """A step between its checks and its outputs (``step_async`` keeps it in flight)."""

    args: tuple  # (actions, alive, modes, seeds) for the C++ call
    resetting: np.ndarray  # instances that autoreset instead of stepping


def name_instance(exc: BaseException, instance: int) -> None:
    """Prefix ``exc``'s message with the failed instance and set ``exc.instance``."""
    exc.instance = instance
    if exc.args and isinstance(exc.args[0], str):
        exc.args = (f"instance {instance}: {exc.args[0]}", *exc.args[1:])
    else:
        exc.args = (f"instance {instance}", *exc.args)


def _prototype(name: str | type[NumbaModel], config: dict) -> SeerParallelEnv:
    """One instance: the env ``name`` (``seer_env.env_names()``) or a NumbaModel's env.

    A NumbaModel's keywords are the runtime options (``seer_env.options``) and its parameters.
    """
    if not is_numba_model(name):
        return make_env(name, **config)
    options = {k: config.pop(k) for k in option_names() if k in config}
    proto = SeerParallelEnv(name, config, **options)
    config.update(options)  # kept whole, as for a named env
    return proto


class SeerVectorEnv(VectorEnv):
    """``num_instances`` copies of a seer_env env as one Gymnasium VectorEnv."""

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}

    def __init__(self, name: str | type[NumbaModel], num_envs: int, **config: Any) -> None:
        self.num_instances = validate_int("num_envs", num_envs, 1, 65536)
        seed = validate_seed(config.pop("seed", None))
        proto = _prototype(name, config)  # validates config, declares spaces
        if proto._stpa_request is not None:  # num_threads="auto": STPA picks once, for the batch
            proto._choose_executor(num_envs=self.num_instances)
        #: STPA's report when num_threads="auto" (what it measured and why it chose), else None.
        self.stpa_report: dict | None = proto._stpa_report
        self.env_name = name
        self.agents_per_instance = len(proto.possible_agents)
        agent = proto.possible_agents[0]
        self.single_observation_space = proto.observation_space(agent)
        self.single_action_space = proto.action_space(agent)
        self.num_envs = self.num_instances * self.agents_per_instance
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.max_cycles = proto.max_cycles
        self._config = config
        self._base_seed = seed
        self._info_keys = list(proto.sim.spec["info_keys"])
        self._actions = ActionChecker(proto.sim.spec["action"])
        self._discrete = self._actions.discrete
        # Kept to rebuild the batch when unpickled (STPA's choice included).
        self._sim_args = (proto._model, dict(proto._model_config), dict(proto._options))
        self._check_steps = proto._check_steps  # checked steps of each instance after reset 1
        self.sim = self._new_simulation()
        m, a = self.num_instances, self.agents_per_instance
        self._episode_seeds: list[int | None] = [None] * m
        self._cycles = np.zeros(m, dtype=np.int64)
        self._autoreset = np.zeros(m, dtype=bool)
        self._alive = np.ones(m * a, dtype=np.uint8)  # rows still acting
        self._started = False
        self._pending: _Step | None = None  # the step_async() in flight
        #: Added to instance indices in error messages (set by SeerAsyncVectorEnv).
        self.instance_offset = 0

    def _new_simulation(self) -> _core.VectorSimulation:
        model, config, options = self._sim_args
        return new_vector_simulation(model, config, self.num_instances, **options)

    # -- helpers --------------------------------------------------------------------------------
    def _rows(self, instance_mask: np.ndarray) -> np.ndarray:
        return np.repeat(instance_mask, self.agents_per_instance)

    def _instance_mask(self, mask: Any) -> np.ndarray:
        mask = np.asarray(mask, dtype=bool)
        m, a = self.num_instances, self.agents_per_instance
        if mask.shape == (m,):
            return mask
        if mask.shape == (m * a,):
            per = mask.reshape(m, a)
            if not np.all(per.all(axis=1) == per.any(axis=1)):
                raise ValueError(
                    "options['reset_mask'] must select whole instances (all rows alike)"
                )
            return per[:, 0].copy()
        raise ValueError(
            f"options['reset_mask'] must have shape ({m},) or ({m * a},), got {mask.shape}"
        )

    def _next_seed(self, i: int) -> int:
        configured = None if self._base_seed is None else (self._base_seed + int(i)) % 2**64
        return episode_seed(None, self._episode_seeds[i], configured)

    def _infos(self) -> dict[str, np.ndarray]:
        table = self.sim.infos
        infos: dict[str, np.ndarray] = {}
        ones = np.ones(self.num_envs, dtype=bool)
        for k, key in enumerate(self._info_keys):
            infos[key] = table[:, k].copy()
            infos["_" + key] = ones.copy()
        return infos

    def _zeros_action(self) -> np.ndarray:
        if self._discrete:
            return np.zeros(self.num_envs, dtype=np.int64)
        return np.zeros((self.num_envs, *self.single_action_space.shape), dtype=np.float32)

    # -- API ------------------------------------------------------------------------------------
    def reset(self, *, seed: int | list[int] | None = None, options: dict | None = None):
        """Reset all instances (or those in ``options["reset_mask"]``)."""
        self._require_no_step_in_flight("reset")
        m = self.num_instances
        if options is not None and not isinstance(options, dict):
            raise ValueError(f"options must be None or a dict, got {options!r}")
        mask = np.ones(m, dtype=bool)
        if options and "reset_mask" in options:
            mask = self._instance_mask(options["reset_mask"])
        if seed is None:
            seeds = [None] * m
        elif isinstance(seed, (list, tuple, np.ndarray)):
            if len(seed) != m:
                raise ValueError(f"seed must be an int or a list of {m} seeds, got {len(seed)}")
            seeds = [validate_seed(s) for s in seed]
        else:
            base = validate_seed(seed)
            seeds = [(base + i) % 2**64 for i in range(m)]
        chosen = np.zeros(m, dtype=np.uint64)
        for i in range(m):
            if mask[i]:
                chosen[i] = seeds[i] if seeds[i] is not None else self._next_seed(i)
        modes = np.where(mask, _RESET, _SKIP).astype(np.uint8)
        if not self._started:  # the first episodes: check their first steps
            self.sim.check_next_steps(self._check_steps)
        self.sim.step(self._zeros_action(), None, modes, chosen)
        for i in np.flatnonzero(mask):
            self._episode_seeds[i] = int(chosen[i])
        self._cycles[mask] = 0
        self._autoreset[mask] = False
        self._alive[self._rows(mask)] = 1
        self._started = True
        return self.sim.observations.copy(), self._infos()

    def step(self, actions: np.ndarray):
        """Step every instance once (NEXT_STEP autoreset; see the module docstring)."""
        return (*self.step_rows(actions), self._infos())

    def step_rows(self, actions: np.ndarray):
        """``step()`` without the infos dict: ``(obs, rewards, terminations, truncations)``.

        Fresh arrays (the next step does not overwrite them); infos stay in
        ``self.sim.infos`` until the next step. For adapters (TorchRL) that
        read the info table themselves.
        """
        step = self._begin_step(actions)
        self._run(self.sim.step, *step.args)
        return self._finish_step(step)

    def step_async(self, actions: np.ndarray) -> None:
        """Start ``step(actions)`` on a background thread and return at once.

        The actions are checked (ValueError) and copied before this returns;
        the C++ step runs without the GIL while the caller computes something
        else. ``step_wait()`` returns what ``step(actions)`` would have.
        Anything else on this env before ``step_wait()`` raises RuntimeError.
        """
        step = self._begin_step(actions)
        self.sim.step_async(*step.args)
        self._pending = step

    def step_wait(self):
        """Wait for the ``step_async()`` in flight; ``(obs, rewards, terms, truncs, infos)``.

        A failure inside the background step is raised here, its message
        naming the instance (``exc.instance``); that instance resets on the
        next step.
        """
        if self._pending is None:
            raise RuntimeError("step_wait() called without a step_async() in flight")
        step, self._pending = self._pending, None
        self._run(self.sim.step_wait)
        return (*self._finish_step(step), self._infos())

    def _require_no_step_in_flight(self, what: str) -> None:
        if self._pending is not None:
            raise RuntimeError(f"{what}() called with a step_async() in flight; call step_wait()")

    def _run(self, call, *args) -> None:
        """Run a C++ step call; failed instances autoreset next, the first is named."""
        try:
            call(*args)
        except BaseException as exc:  # KeyboardInterrupt too: interrupted instances need a reset
            failed = list(self.sim.failed_instances)
            for i in failed:  # they need a reset: autoreset them next
                self._autoreset[i] = True
            if failed:
                name_instance(exc, self.instance_offset + failed[0])
            raise

    def _begin_step(self, actions: np.ndarray) -> _Step:
        """Check ``actions`` and decide what each instance does (step or autoreset)."""
        self._require_no_step_in_flight("step")
        if not self._started:
            raise RuntimeError("step() called before reset()")
        self.sim.prewake()  # parked workers wake while we check the actions
        # Rows of agents no longer acting (done, or their instance resets) are not checked.
        actions = self._actions.check_array(actions, self.num_envs, live=self._alive.view(bool))
        resetting = self._autoreset.copy()
        seeds = np.zeros(self.num_instances, dtype=np.uint64)
        for i in np.flatnonzero(resetting):
            seeds[i] = self._next_seed(i)
        modes = np.where(resetting, _RESET, _STEP).astype(np.uint8)
        return _Step((actions, self._alive.copy(), modes, seeds), resetting)

    def _finish_step(self, step: _Step):
        """The step's outputs as fresh arrays, with black death and autoreset applied."""
        resetting, seeds, was_alive = step.resetting, step.args[3], step.args[1]
        for i in np.flatnonzero(resetting):
            self._episode_seeds[i] = int(seeds[i])
        self._cycles[~resetting] += 1
        self._cycles[resetting] = 0

        obs = self.sim.observations.copy()
        rewards = self.sim.rewards.copy()
        terms = self.sim.terminations.astype(bool)
        truncs = self.sim.truncations.astype(bool)
        truncs |= self._rows(self._cycles >= self.max_cycles)
        # Black death: rows dead before this step report nothing.
        dead = ~was_alive.astype(bool) & ~self._rows(resetting)
        obs[dead] = 0
        rewards[dead] = 0.0
        terms[dead] = False
        truncs[dead] = False
        reset_rows = self._rows(resetting)
        rewards[reset_rows] = 0.0
        terms[reset_rows] = False
        truncs[reset_rows] = False

        self._alive[reset_rows] = 1
        self._alive[terms | truncs] = 0
        done_instances = ~self._alive.reshape(self.num_instances, -1).any(axis=1)
        self._autoreset = done_instances & ~resetting | self._autoreset & ~resetting
        return obs, rewards, terms, truncs

    # -- pickling -------------------------------------------------------------------------------
    def __getstate__(self) -> dict:
        """Everything but the batch, plus a save of each running instance.

        An instance never reset, or waiting for its autoreset after a failure,
        has nothing to save: it is rebuilt fresh, and autoresets as it would have.
        """
        if self.sim.busy:  # mid-step there is no consistent boundary to save
            raise RuntimeError(
                "pickling called while another call on this vector env is in progress (in "
                "another thread); wait for it to return"
            )
        state = self.__dict__.copy()
        sim = state.pop("sim")
        state["_saved_instances"] = [
            sim.save(i) if seed is not None and not sim.needs_reset(i) else None
            for i, seed in enumerate(self._episode_seeds)
        ]
        return state

    def __setstate__(self, state: dict) -> None:
        saved = state.pop("_saved_instances")
        self.__dict__.update(state)
        self.sim = self._new_simulation()
        for i, blob in enumerate(saved):
            if blob is not None:
                self.sim.load(i, blob)

    def close_extras(self, **kwargs: Any) -> None:
        """Join the background thread and the worker threads.

        A ``step_async()`` in flight finishes first; the pool is one for the
        batch, and a later step starts fresh threads.
        """
        sim = self.__dict__.get("sim")  # absent when the constructor failed
        if sim is not None:
            sim.close()
            sim.release_threads()
        self._pending = None
