"""The vector env: many instances of one seer_env env as one Gymnasium VectorEnv.

``seer_env.vector.make("pcs_v0", num_instances=M, **config)`` steps all M instances
in one C++ call: with ``executor="parallel"`` they share one thread pool and
one executive list, so small instances fill the threads together.
``make(NumbaPcs, num_instances=M, width=8, ...)`` does the same for a compiled
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

One call at a time: a call made while another runs (in another thread)
raises ``RuntimeError: ... in progress``, ``close()`` included. A call that
fails (an error, Ctrl-C at any point, ``request_interrupt()``) leaves the
env consistent: the instances that completed its step or reset keep it (read
back from the runtime), the others autoreset on the next step, and nothing is
left in flight. ``close()`` with a ``step_async()`` in flight interrupts that
step and drops its results: every instance autoresets on the next step
(docs/reliability.md, *Ctrl-C during a step*).

A vector env cannot render (``render_mode`` other than None is refused).

The class in parts, one concept a file: this one checks and starts each call;
``bookkeeping`` keeps each instance's books and settles a call stopped midway;
``snapshots`` saves and restores instances; ``prototype`` builds the instance
the batch copies; ``fork_registry`` frees the envs a forked child inherits mid-call.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from seer_env import _core
from seer_env.action_checker import ActionChecker
from seer_env.action_masks import check_masked_actions
from seer_env.env import SeerParallelEnv
from seer_env.model_source import new_vector_simulation
from seer_env.models.numba import NumbaModel
from seer_env.seeding import episode_seed
from seer_env.stpa.decision import start_as_decided
from seer_env.validation import validate_reset_options, validate_seed
from seer_env.vector.bookkeeping import (
    RESET,
    SKIP,
    STEP,
    InstanceBookkeeping,
    ResetPlan,
    StepPlan,
)
from seer_env.vector.closed_when_collected import ClosedWhenCollected
from seer_env.vector.fork_registry import LIVE
from seer_env.vector.instance_count import resolve_num_instances
from seer_env.vector.instance_seeds import instance_seeds
from seer_env.vector.one_call import OneCall
from seer_env.vector.prototype import batch_options, prototype
from seer_env.vector.reset_mask import instance_mask
from seer_env.vector.snapshots import InstanceSnapshots


class SeerVectorEnv(ClosedWhenCollected, InstanceSnapshots, InstanceBookkeeping, VectorEnv):
    """``num_instances`` copies of a seer_env env as one Gymnasium VectorEnv."""

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}

    def __init__(
        self,
        name: str | type[NumbaModel],
        num_instances: int | None = None,
        *,
        num_envs: int | None = None,
        _memory_instances: int | None = None,
        _prototype_env: SeerParallelEnv | None = None,
        **config: Any,
    ) -> None:
        # _memory_instances: how many instances the memory check counts (default
        # num_instances): SeerAsyncVectorEnv's first batch counts every batch's.
        # _prototype_env: an env to copy instead of building one from `name`
        # (from_snapshot; `config` then holds only executor and num_threads).
        # num_envs= is the deprecated name of num_instances (seer_env.vector.instance_count).
        self.num_instances = resolve_num_instances(num_instances, num_envs)
        if config.get("render_mode") is not None:
            raise ValueError(
                f"render_mode must be None for a vector env (it steps its instances in one C++ "
                f"batch and keeps no per-instance env to draw), got {config['render_mode']!r}: "
                "to watch instance i, render seer_env.make(name, render_mode=..., seed=seed + i)"
            )
        seed = validate_seed(config.pop("seed", None))
        if _prototype_env is None:
            proto = prototype(name, config)  # validates config, declares spaces
        else:
            proto = _prototype_env
        if proto._stpa_request is not None:  # num_threads="auto": STPA picks once, for the batch
            proto._choose_executor(num_envs=self.num_instances)
        #: STPA's report when num_threads="auto" (what it measured and why it chose), else None.
        self.stpa_report: dict | None = proto._stpa_report
        self.env_name = name
        self.agents_per_instance = len(proto.possible_agents)
        agent = proto.possible_agents[0]
        # The Box: the arrays stay plain; masks come through action_masks.
        self.single_observation_space = proto._obs_box
        self._masked = proto._masked
        self.single_action_space = proto.action_space(agent)
        #: One instance's global state space (``state()`` returns one row per instance).
        self.single_state_space = proto.state_space
        self._neighbour_rule = proto.neighbour_rule()
        self.num_envs = self.num_instances * self.agents_per_instance
        self.max_cycles = proto.max_cycles
        self._config = config
        self._base_seed = seed
        self._info_keys = list(proto.sim.spec["info_keys"])
        self._actions = ActionChecker(proto.sim.spec["action"])
        self._discrete = self._actions.discrete
        # Kept to rebuild the batch when unpickled (STPA's choice included).
        self._sim_args = (proto._model, dict(proto._model_config), dict(proto._options))
        if _prototype_env is not None:
            self._sim_args[2].update(batch_options(config))
        self._identity = proto._identity()  # what a snapshot of an instance must match
        self._agent_names = list(proto.possible_agents)
        self._agent_rows = dict(proto._agent_index)
        self._configuration = proto._configuration()
        self._check_steps = proto._check_steps  # checked steps of each instance after reset 1
        # The batch first: it checks that num_envs instances fit in memory before
        # anything big exists (the batched spaces hold two arrays of every row).
        self.sim = self._new_simulation(_memory_instances)
        start_as_decided(self.sim, self.stpa_report)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._call = OneCall()
        m, a = self.num_instances, self.agents_per_instance
        self._episode_seeds: list[int | None] = [None] * m
        self._cycles = np.zeros(m, dtype=np.int64)
        self._autoreset = np.zeros(m, dtype=bool)
        self._alive = np.ones(m * a, dtype=np.uint8)  # rows still acting
        self._reset_seeds: dict[int, int] = {}  # see Book
        self._started = False
        self._pending: StepPlan | None = None  # the step_async() in flight
        self._pending_pid = 0  # the process that started it (a forked child has no such step)
        # The step or reset handed to the runtime whose bookkeeping is not done:
        # set before the runtime sees it, cleared once the bookkeeping is
        # complete. A call stopped in between (Ctrl-C) is settled from the
        # runtime by _settle_interrupted, there or at the next call.
        self._unsettled: StepPlan | ResetPlan | None = None
        #: Added to instance indices in error messages (set by SeerAsyncVectorEnv).
        self.instance_offset = 0
        LIVE.add(self)

    def _new_simulation(self, memory_instances: int | None = None) -> _core.VectorSimulation:
        model, config, options = self._sim_args
        return new_vector_simulation(
            model, config, self.num_instances, memory_copies=memory_instances, **options
        )

    # -- helpers --------------------------------------------------------------------------------
    def _next_seed(self, i: int) -> int:
        if int(i) in self._reset_seeds:  # an interrupted reset() chose it
            return self._reset_seeds[int(i)]
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

    @property
    def action_masks(self) -> np.ndarray | None:
        """Bool ``[num_envs, n]`` (one row per agent row) for a model that declares ``action_mask``.

        A copy of each row's mask at the last boundary; ``step()`` refuses an
        action a live row's mask forbids (ValueError naming the instance and
        the agent; nothing steps). None for a model without one.
        """
        if not self._masked:
            return None
        self._require_no_step_in_flight("action_masks")
        return self.sim.action_masks.copy()

    def _row_name(self, row: int) -> str:
        """A row's name in messages: ``"agent_3 of instance 1"``."""
        i, j = divmod(row, self.agents_per_instance)
        return f"{self._agent_names[j]} of instance {i + self.instance_offset}"

    def _zeros_action(self) -> np.ndarray:
        if self._discrete:
            return np.zeros(self.num_envs, dtype=np.int64)
        return np.zeros((self.num_envs, *self.single_action_space.shape), dtype=np.float32)

    # -- API ------------------------------------------------------------------------------------
    def reset(self, *, seed: int | list[int] | None = None, options: dict | None = None):
        """Reset all instances (or those in ``options["reset_mask"]``).

        Interrupted (Ctrl-C), the instances it did not finish reset on the
        next step, with the seed chosen here (docs/reliability.md).
        """
        return self._call.run("reset()", self._reset_call, seed, options)

    def _reset_call(self, seed: Any, options: Any):
        return self._reset(self._check_reset(seed, options))

    def render(self):
        """Not implemented: a vector env keeps no per-instance env to draw.

        Raises:
            NotImplementedError: always, with what to do instead.
        """
        raise NotImplementedError(
            "SeerVectorEnv steps its instances in one C++ batch and keeps no per-instance env "
            "to render: to watch instance i, build seer_env.make(name, render_mode='rgb_array', "
            "...) seeded like it (seed + i) and render that env"
        )

    def state(self) -> np.ndarray:
        """Every instance's global state: fresh ``float32[num_instances, state_dim]``.

        Row ``i`` is what a single env's ``state()`` returns for instance ``i``
        after the same steps (``single_state_space``).
        """
        return self._call.run("state()", self._states)

    def _states(self) -> np.ndarray:
        self._settle_interrupted()
        self._require_no_step_in_flight("state")
        if not self._started:
            raise RuntimeError("state() called before reset()")
        return self.sim.states()

    def neighbours(self) -> np.ndarray:
        """Every instance's neighbour table: ``int64[num_instances, agents, max_degree]``.

        Instance ``i``'s table is what a single env's ``neighbours()`` returns
        (``seer_env.neighbours``); ``-1`` pads unused slots. A static structure
        (pcs) is one read-only table broadcast over the instances (no copy).

        Raises:
            NotImplementedError: the env declares no neighbour structure.
        """
        rule, m = self._neighbour_rule, self.num_instances
        if rule is None:
            raise NotImplementedError(f"{self.env_name!r} declares no neighbour structure")
        if rule.static is not None:
            return np.broadcast_to(rule.static, (m, *rule.static.shape))
        return self._call.run("neighbours()", self._neighbour_tables, rule)

    def _neighbour_tables(self, rule: Any) -> np.ndarray:
        self._settle_interrupted()
        self._require_no_step_in_flight("neighbours")
        if not self._started:
            raise RuntimeError("neighbours() called before reset()")
        tables = [rule.from_states(self.sim.entity_states(i)) for i in range(self.num_instances)]
        return np.stack(tables)

    def step(self, actions: np.ndarray):
        """Step every instance once (NEXT_STEP autoreset; see the module docstring)."""
        return (*self.step_rows(actions), self._infos())

    def step_rows(self, actions: np.ndarray):
        """``step()`` without the infos dict: ``(obs, rewards, terminations, truncations)``.

        Fresh arrays (the next step does not overwrite them); infos stay in
        ``self.sim.infos`` until the next step. For adapters (TorchRL) that
        read the info table themselves.
        """
        return self._call.run("step()", self._step_rows, actions)

    def _step_rows(self, actions: Any):
        step = self._check_step(actions)
        self.closed = False  # in use again: close() (or garbage collection) has work
        return self._run_step(self.sim.step, step, *step.args)

    def step_async(self, actions: np.ndarray) -> None:
        """Start ``step(actions)`` on a background thread and return at once.

        The actions are checked (ValueError) and copied before this returns;
        the C++ step runs without the GIL while the caller computes something
        else. ``step_wait()`` returns what ``step(actions)`` would have.
        Anything else on this env before ``step_wait()`` raises RuntimeError,
        except ``close()``, which interrupts the step and drops its results.
        Interrupted (Ctrl-C), it leaves nothing in flight (a step it started is
        stopped and settled), or, when Ctrl-C comes as it returns, the whole step.
        """
        self._call.run("step_async()", self._step_async, actions)

    def _step_async(self, actions: Any) -> None:
        self._launch(self._check_step(actions))

    def step_wait(self):
        """Wait for the ``step_async()`` in flight; ``(obs, rewards, terms, truncs, infos)``.

        A failure inside the background step is raised here, its message
        naming the instance (``exc.instance``); that instance resets on the
        next step. In a child forked while the step was in flight, RuntimeError
        (the step runs in the parent only) and every instance resets on the next step.
        """
        return self._call.run("step_wait()", self._wait)

    def close(self, **kwargs: Any) -> None:
        """Join this env's threads; a ``step_async()`` in flight is interrupted (see close_extras).

        Every call does the work: the env stays usable after ``close()``, and a
        later close has threads to join again.
        """
        self.close_extras(**kwargs)
        self.closed = True

    def close_extras(self, **kwargs: Any) -> None:
        """Join the background thread and the worker threads.

        A ``step_async()`` in flight is interrupted and its results dropped
        (every instance autoresets on the next step); RuntimeError while
        another call runs in another thread. A later step starts fresh threads.
        """
        if self.__dict__.get("sim") is None:  # the constructor failed
            return
        self._call.run("close()", self._close)

    # -- the steps of a call (the caller holds self._call) ----------------------------------------
    def _close(self) -> None:
        self._settle_interrupted()
        if self._pending is not None:  # dropped below: every instance autoresets
            self._unsettled, self._pending = self._pending, None
        self.sim.close()  # interrupts a background step in flight rather than wait for it
        if self._unsettled is not None:
            self._drop_pending()
        self.sim.release_threads()
        self.closed = True

    def _require_no_step_in_flight(self, what: str) -> None:
        if self._pending is not None:
            raise RuntimeError(f"{what}() called with a step_async() in flight; call step_wait()")

    def _check_reset(self, seed: Any, options: Any) -> ResetPlan:
        """What ``reset()`` checks, changing nothing: which instances reset, with which seeds."""
        self._settle_interrupted()
        self._require_no_step_in_flight("reset")
        m = self.num_instances
        options = validate_reset_options(options, self._configuration)
        mask = np.ones(m, dtype=bool)
        if options and "reset_mask" in options:
            mask = instance_mask(options["reset_mask"], m, self.agents_per_instance)
        seeds = instance_seeds(seed, m)
        chosen = np.zeros(m, dtype=np.uint64)
        for i in range(m):
            if mask[i]:
                chosen[i] = seeds[i] if seeds[i] is not None else self._next_seed(i)
        # At step 0 already: ours says so (reset, not stepped since), or the
        # runtime does (an instance waiting for its autoreset).
        fresh = mask & ~self._autoreset & (self._cycles == 0)
        fresh |= self._at_step_zero(mask & self._autoreset)
        return ResetPlan(
            mask, chosen, fresh, self._book(self._autoreset.copy(), self._alive.copy())
        )

    def _reset(self, plan: ResetPlan):
        mask, seeds = plan.mask, plan.seeds
        modes = np.where(mask, RESET, SKIP).astype(np.uint8)
        self.closed = False
        self._unsettled = plan
        try:
            if not self._started:  # the first episodes: check their first steps
                self.sim.check_next_steps(self._check_steps)
            self.sim.step(self._zeros_action(), None, modes, seeds)
            self._settle_resets(mask, seeds)
            self._unsettled = None
        except BaseException as exc:  # Ctrl-C too: the instances reset so far stay reset
            self._settle_interrupted(exc)
            raise
        return self.sim.observations.copy(), self._infos()

    def _check_step(self, actions: Any, *, checked: bool = False) -> StepPlan:
        """Check ``actions`` and decide what each instance does (step or autoreset).

        Changes nothing. ``checked``: ``actions`` already passed ``_actions.check_array``
        (the async env checks all its batches' rows at once).
        """
        self._settle_interrupted()
        self._require_no_step_in_flight("step")
        if not self._started:
            raise RuntimeError("step() called before reset()")
        self.sim.prewake()  # parked workers wake while we check the actions
        if not checked:
            actions = self._actions.check_array(actions, self.num_envs, live=self._live_rows())
        if self._masked:  # an action a mask forbids: refused before any instance steps
            check_masked_actions(self.sim.action_masks, actions, self._live_rows(), self._row_name)
        resetting = self._autoreset.copy()
        seeds = np.zeros(self.num_instances, dtype=np.uint64)
        for i in np.flatnonzero(resetting):
            seeds[i] = self._next_seed(i)
        modes = np.where(resetting, RESET, STEP).astype(np.uint8)
        alive = self._alive.copy()
        fresh = self._at_step_zero(resetting)
        return StepPlan(
            (actions, alive, modes, seeds), resetting, fresh, self._book(resetting, alive)
        )

    def _launch(self, step: StepPlan) -> None:
        """Start a checked step in the background; interrupted, it leaves nothing in flight."""
        self.closed = False
        self._unsettled = step
        try:
            self.sim.step_async(*step.args)
            self._pending_pid = os.getpid()
            self._pending = step
            self._unsettled = None
        except BaseException:
            self._settle_interrupted()  # a step already started is stopped and settled
            raise

    def _wait(self, *, interrupt: bool = False):
        """Wait for the step in flight (``interrupt``: stop it first); step_wait's result."""
        self._settle_interrupted()
        if self._pending is None:
            raise RuntimeError("step_wait() called without a step_async() in flight")
        if self._pending_pid != os.getpid():  # a forked child: the parent's thread ran the step
            self.sim.close()  # forgets the parent's background thread
            self._drop_pending()
            raise RuntimeError(
                "step_wait() called in a process forked while a step_async() was in flight: "
                "that step ran in the parent only; every instance resets on the next step"
            )
        step = self._pending
        self._unsettled = step  # this call settles it from here on, however it ends
        self._pending = None
        try:
            if interrupt:  # holds until the next step starts, even if this one has not begun yet
                self.sim.request_interrupt()
            outputs = self._run_step(self.sim.step_wait, step)
        except BaseException as exc:  # before _run_step's own settling began: settled here
            self._settle_interrupted(exc)
            raise
        return (*outputs, self._infos())

    def _stop_step(self) -> None:
        """Interrupt the ``step_async()`` in flight, if any, and settle it (none left in flight)."""
        if self._pending is not None:
            self._unsettled, self._pending = self._pending, None
        self._settle_interrupted()

    # -- pickling -------------------------------------------------------------------------------
    def __getstate__(self) -> dict:
        """Everything but the batch, plus a save of each running instance.

        An instance never reset, or waiting for its autoreset after a failure,
        has nothing to save: it is rebuilt fresh, and autoresets as it would
        have. The contract checks still due (``check_steps``) travel too.
        """
        return self._call.run("pickling", self._state_to_pickle)

    def _state_to_pickle(self) -> dict:
        self._settle_interrupted()
        if self.sim.busy:  # mid-step there is no consistent boundary to save
            raise RuntimeError(
                "pickling called while another call on this vector env is in progress (in "
                "another thread, or a step_async() in flight); wait for it to return"
            )
        state = self.__dict__.copy()
        del state["_call"]
        sim = state.pop("sim")
        state["_saved_instances"] = [
            sim.save(i) if seed is not None and not sim.needs_reset(i) else None
            for i, seed in enumerate(self._episode_seeds)
        ]
        state["_checked_steps_left"] = [sim.checked_steps_left(i) for i in range(sim.num_envs)]
        return state

    def __setstate__(self, state: dict) -> None:
        saved = state.pop("_saved_instances")
        # The runtime arms the checks of every instance alike: each instance of
        # the copy checks at least the steps it had left (checking changes no output).
        checked_steps_left = max(state.pop("_checked_steps_left", [0]), default=0)
        state.setdefault("_reset_seeds", {})
        state.setdefault("_unsettled", None)
        self.__dict__.update(state)
        self._call = OneCall()
        self.sim = self._new_simulation()
        self.sim.check_next_steps(checked_steps_left)
        LIVE.add(self)
        for i, blob in enumerate(saved):
            if blob is not None:
                self.sim.load(i, blob)
