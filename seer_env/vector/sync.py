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
"""

from __future__ import annotations

import contextlib
import os
import weakref
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from seer_env import _core, neighbours, stpa
from seer_env.action_checker import ActionChecker
from seer_env.env import SeerParallelEnv
from seer_env.model_source import is_numba_model, new_vector_simulation
from seer_env.models.numba import NumbaModel
from seer_env.options import option_names
from seer_env.registry import env_names
from seer_env.registry import make as make_env
from seer_env.seeding import episode_seed
from seer_env.snapshot import Snapshot, episode_fields, require_same_env
from seer_env.validation import validate_reset_options, validate_seed
from seer_env.vector.instance_count import resolve_num_instances
from seer_env.vector.one_call import OneCall
from seer_env.vector.reset_mask import instance_mask

_STEP, _RESET, _SKIP = 0, 1, 2


class _Book(NamedTuple):
    """The env's bookkeeping before a call: what a call stopped midway starts over from."""

    episode_seeds: list[int | None]
    cycles: np.ndarray  # int64 per instance: steps since its reset
    autoreset: np.ndarray  # bool per instance: resets on the next step
    alive: np.ndarray  # uint8 per row: still acting
    reset_seeds: dict[int, int]  # the seed of a reset that an interrupted reset() left to do
    started: bool


class _Step(NamedTuple):
    """A step between its checks and its outputs (``step_async`` keeps it in flight)."""

    args: tuple  # (actions, alive, modes, seeds) for the C++ call
    resetting: np.ndarray  # instances that autoreset instead of stepping
    # Resetting instances the runtime holds at step 0 already: whether this
    # step reset them cannot be read back, so an interrupted step resets them again.
    fresh: np.ndarray
    before: _Book


class _Reset(NamedTuple):
    """A checked ``reset()``: which instances reset, and with which seeds."""

    mask: np.ndarray  # bool per instance
    seeds: np.ndarray  # uint64 per instance (0 where not reset)
    fresh: np.ndarray  # masked instances at step 0 already (as in _Step)
    before: _Book


# Every live vector env, for the fork handler below.
_LIVE: weakref.WeakSet[SeerVectorEnv] = weakref.WeakSet()


def _after_fork_in_child() -> None:
    """A call that ran on another thread at the fork never returns in the child: forget it."""
    for env in list(_LIVE):
        if env._call.locked():
            env._call = OneCall()
            env._drop_pending()  # the runtime's instances were mid-call: all need a reset
            with contextlib.suppress(Exception):
                env.sim.close()  # forgets a background step of the parent's (step_wait's)


os.register_at_fork(after_in_child=_after_fork_in_child)


def name_instance(exc: BaseException, instance: int) -> None:
    """Prefix ``exc``'s message with the failed instance and set ``exc.instance``."""
    exc.instance = instance
    if exc.args and isinstance(exc.args[0], str):
        exc.args = (f"instance {instance}: {exc.args[0]}", *exc.args[1:])
    else:
        exc.args = (f"instance {instance}", *exc.args)


def _prototype(name: str | type[NumbaModel], config: dict) -> SeerParallelEnv:
    """One instance: the env ``name`` (``seer_env.env_names()``), or a model's generic env.

    A model is a registered C++ model (``seer_env.model_names()``: a built-in's
    or a plugin's, as ``SeerParallelEnv`` takes it) or a compiled NumbaModel;
    its keywords are the runtime options (``seer_env.options``) and its parameters.
    """
    if isinstance(name, str) and name not in env_names() and name in _core.model_names():
        pass  # a registered model without an env module: its generic env, below
    elif not is_numba_model(name):
        if isinstance(name, str) and name not in env_names():
            raise ValueError(
                f"name must be an env ({env_names()}) or a registered model "
                f"({_core.model_names()}), or a NumbaModel subclass, got {name!r}"
            )
        return make_env(name, **config)
    options = {k: config.pop(k) for k in option_names() if k in config}
    proto = SeerParallelEnv(name, config, **options)
    config.update(options)  # kept whole, as for a named env
    return proto


def _batch_options(options: dict) -> dict:
    """``executor`` and ``num_threads`` for a batch of copies (``from_snapshot``), checked."""
    unknown = sorted(set(options) - {"executor", "num_threads"})
    if unknown:
        raise TypeError(f"unexpected keyword arguments {unknown}: executor and num_threads only")
    chosen = {k: v for k, v in options.items() if v is not None}
    executor = chosen.get("executor")
    if executor is not None and executor not in _core.executor_names():
        raise ValueError(f"executor must be one of {_core.executor_names()}, got {executor!r}")
    if "num_threads" in chosen:
        threads = stpa.parse_num_threads(chosen["num_threads"])
        if threads == stpa.AUTO:
            raise ValueError('num_threads="auto" is not for copies: the env\'s choice is kept')
        chosen["num_threads"] = threads
        chosen.setdefault("executor", stpa.default_executor(threads))
    return chosen


class SeerVectorEnv(VectorEnv):
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
            proto = _prototype(name, config)  # validates config, declares spaces
        else:
            proto = _prototype_env
        if proto._stpa_request is not None:  # num_threads="auto": STPA picks once, for the batch
            proto._choose_executor(num_envs=self.num_instances)
        #: STPA's report when num_threads="auto" (what it measured and why it chose), else None.
        self.stpa_report: dict | None = proto._stpa_report
        self.env_name = name
        self.agents_per_instance = len(proto.possible_agents)
        agent = proto.possible_agents[0]
        self.single_observation_space = proto.observation_space(agent)
        self.single_action_space = proto.action_space(agent)
        #: One instance's global state space (``state()`` returns one row per instance).
        self.single_state_space = proto.state_space
        self._neighbour_rule = neighbours.rule_for(proto)
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
            self._sim_args[2].update(_batch_options(config))
        self._identity = proto._identity()  # what a snapshot of an instance must match
        self._agent_names = list(proto.possible_agents)
        self._agent_rows = dict(proto._agent_index)
        self._configuration = proto._configuration()
        self._check_steps = proto._check_steps  # checked steps of each instance after reset 1
        # The batch first: it checks that num_envs instances fit in memory before
        # anything big exists (the batched spaces hold two arrays of every row).
        self.sim = self._new_simulation(_memory_instances)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._call = OneCall()
        m, a = self.num_instances, self.agents_per_instance
        self._episode_seeds: list[int | None] = [None] * m
        self._cycles = np.zeros(m, dtype=np.int64)
        self._autoreset = np.zeros(m, dtype=bool)
        self._alive = np.ones(m * a, dtype=np.uint8)  # rows still acting
        self._reset_seeds: dict[int, int] = {}  # see _Book
        self._started = False
        self._pending: _Step | None = None  # the step_async() in flight
        self._pending_pid = 0  # the process that started it (a forked child has no such step)
        # The step or reset handed to the runtime whose bookkeeping is not done:
        # set before the runtime sees it, cleared once the bookkeeping is
        # complete. A call stopped in between (Ctrl-C) is settled from the
        # runtime by _settle_interrupted, there or at the next call.
        self._unsettled: _Step | _Reset | None = None
        #: Added to instance indices in error messages (set by SeerAsyncVectorEnv).
        self.instance_offset = 0
        _LIVE.add(self)

    def _new_simulation(self, memory_instances: int | None = None) -> _core.VectorSimulation:
        model, config, options = self._sim_args
        return new_vector_simulation(
            model, config, self.num_instances, memory_copies=memory_instances, **options
        )

    # -- helpers --------------------------------------------------------------------------------
    def _rows(self, instance_mask: np.ndarray) -> np.ndarray:
        return np.repeat(instance_mask, self.agents_per_instance)

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

    def __del__(self) -> None:
        if not getattr(self, "closed", True):
            try:
                self.close()
            except RuntimeError:  # another thread is inside a call (interpreter exit)
                pass

    # -- snapshots ------------------------------------------------------------------------------
    @classmethod
    def from_snapshot(
        cls, env: SeerParallelEnv, snapshot: Snapshot, branches: int, **options: Any
    ) -> SeerVectorEnv:
        """``branches`` instances of ``env``'s workload, each restored from ``snapshot``.

        ``SeerParallelEnv.fork`` builds one from the env's own snapshot. Each
        instance continues exactly as ``env`` would from ``snapshot`` given
        the same actions; all step together in one call. ``options``:
        ``executor`` and ``num_threads`` for the batch (default: ``env``'s).
        """
        vec = cls(
            getattr(env, "metadata", {}).get("name", "seer_env"),
            branches,
            _prototype_env=env,
            **options,
        )
        try:
            for i in range(vec.num_instances):
                vec.restore(i, snapshot)
        except BaseException:
            vec.close()
            raise
        return vec

    def snapshot(self, instance: int) -> Snapshot:
        """Instance ``instance``'s complete state (as ``SeerParallelEnv.snapshot``).

        It restores into this instance or another, another vector env's
        instance or a ``SeerParallelEnv`` of the same workload and
        configuration, on any executor.
        """
        return self._call.run("snapshot()", self._snapshot, instance)

    def restore(self, instance: int, snapshot: Snapshot | bytes) -> None:
        """Put instance ``instance`` into ``snapshot``'s state (see ``snapshot``).

        An instance whose snapshot has no live agent autoresets on the next
        step; instances never reset (a fresh vector env) autoreset then too.

        Raises:
            ValueError: another workload or configuration (naming what differs),
                corrupt bytes, or an instance out of range; nothing changes.
        """
        self._call.run("restore()", self._restore_instance, instance, snapshot)

    def _instance_index(self, instance: Any) -> int:
        if isinstance(instance, bool) or not hasattr(instance, "__index__"):
            raise ValueError(f"instance must be an integer, got {instance!r}")
        i = int(instance.__index__())
        if not 0 <= i < self.num_instances:
            raise ValueError(f"instance must be in [0, {self.num_instances}), got {i}")
        return i

    def _snapshot(self, instance: Any) -> Snapshot:
        self._settle_interrupted()
        self._require_no_step_in_flight("snapshot")
        i = self._instance_index(instance)
        if self._episode_seeds[i] is None:
            raise RuntimeError(f"snapshot({i}) called before instance {i} was reset")
        if self.sim.needs_reset(i):
            raise RuntimeError(
                f"snapshot({i}) called after instance {i} failed; it resets on the next step"
            )
        a = self.agents_per_instance
        alive = self._alive[i * a : (i + 1) * a].view(bool) & ~self._autoreset[i]
        episode = {
            "agents": [n for n, live in zip(self._agent_names, alive.tolist()) if live],
            "cycles": int(self._cycles[i]),
            "episode_seed": self._episode_seeds[i],
            "checked_steps_left": int(self.sim.checked_steps_left(i)),
        }
        return Snapshot(dict(self._identity), episode, self.sim.save(i))

    def _restore_instance(self, instance: Any, snapshot: Any) -> None:
        self._settle_interrupted()
        self._require_no_step_in_flight("restore")
        i = self._instance_index(instance)
        snap = require_same_env(snapshot, self._identity)
        agents, live, cycles, seed, checked = episode_fields(
            snap.episode, self._agent_rows, self.max_cycles
        )
        self.sim.load(i, snap.runtime)  # refused before it changes anything
        if checked > self.sim.checked_steps_left(i):
            # The runtime arms every instance alike: the others check a few
            # steps more than they had to (checking changes no output).
            self.sim.check_next_steps(checked)
        a = self.agents_per_instance
        self._alive[i * a : (i + 1) * a] = live
        self._episode_seeds[i] = seed
        self._cycles[i] = cycles
        self._autoreset[i] = not live.any()
        self._reset_seeds.pop(i, None)
        if not self._started:  # the others were never reset: they autoreset on the next step
            self._autoreset |= np.array([s is None for s in self._episode_seeds])
            self._started = True

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

    def _book(self, autoreset: np.ndarray, alive: np.ndarray) -> _Book:
        """The bookkeeping now (``autoreset`` and ``alive``: copies of ours, made by the caller)."""
        return _Book(
            list(self._episode_seeds),
            self._cycles.copy(),
            autoreset,
            alive,
            dict(self._reset_seeds),
            self._started,
        )

    def _restore(self, book: _Book) -> None:
        self._episode_seeds = list(book.episode_seeds)
        self._cycles = book.cycles.copy()
        self._autoreset = book.autoreset.copy()
        self._alive = book.alive.copy()
        self._reset_seeds = dict(book.reset_seeds)
        self._started = book.started

    def _at_step_zero(self, instances: np.ndarray) -> np.ndarray:
        """Which of ``instances`` (bool mask) the runtime holds at step 0, not needing a reset."""
        fresh = np.zeros(self.num_instances, dtype=bool)
        for i in np.flatnonzero(instances):
            fresh[i] = self.sim.steps(i) == 0 and not self.sim.needs_reset(i)
        return fresh

    def _check_reset(self, seed: Any, options: Any) -> _Reset:
        """What ``reset()`` checks, changing nothing: which instances reset, with which seeds."""
        self._settle_interrupted()
        self._require_no_step_in_flight("reset")
        m = self.num_instances
        options = validate_reset_options(options, self._configuration)
        mask = np.ones(m, dtype=bool)
        if options and "reset_mask" in options:
            mask = instance_mask(options["reset_mask"], m, self.agents_per_instance)
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
        # At step 0 already: ours says so (reset, not stepped since), or the
        # runtime does (an instance waiting for its autoreset).
        fresh = mask & ~self._autoreset & (self._cycles == 0)
        fresh |= self._at_step_zero(mask & self._autoreset)
        return _Reset(mask, chosen, fresh, self._book(self._autoreset.copy(), self._alive.copy()))

    def _reset(self, plan: _Reset):
        mask, seeds = plan.mask, plan.seeds
        modes = np.where(mask, _RESET, _SKIP).astype(np.uint8)
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

    def _settle_resets(self, done: np.ndarray, seeds: np.ndarray) -> None:
        for i in np.flatnonzero(done):
            self._episode_seeds[i] = int(seeds[i])
            self._reset_seeds.pop(int(i), None)
        self._cycles[done] = 0
        self._autoreset[done] = False
        self._alive[self._rows(done)] = 1
        self._started = True

    def _live_rows(self) -> np.ndarray:
        """Rows whose actions the next step reads: live agents of instances that step."""
        return self._alive.view(bool) & ~self._rows(self._autoreset)

    def _check_step(self, actions: Any, *, checked: bool = False) -> _Step:
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
        resetting = self._autoreset.copy()
        seeds = np.zeros(self.num_instances, dtype=np.uint64)
        for i in np.flatnonzero(resetting):
            seeds[i] = self._next_seed(i)
        modes = np.where(resetting, _RESET, _STEP).astype(np.uint8)
        alive = self._alive.copy()
        fresh = self._at_step_zero(resetting)
        return _Step((actions, alive, modes, seeds), resetting, fresh, self._book(resetting, alive))

    def _launch(self, step: _Step) -> None:
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

    def _drop_pending(self) -> None:
        """Forget the step in flight (interrupted, or run by another process): all autoreset.

        Whether or not an instance completed it, its next step resets it with
        the seed the dropped step would have recorded: the same state either way.
        """
        step = self._unsettled if self._unsettled is not None else self._pending
        if step is not None:
            self._restore(step.before)
        self._autoreset[:] = True
        self._pending = None
        self._unsettled = None

    def _run_step(self, call: Callable[..., None], step: _Step, *args: Any):
        """Run a C++ step call; ``(obs, rewards, terms, truncs)``.

        On a failure (KeyboardInterrupt too, before or after the call returns)
        the instances that completed the step keep its bookkeeping, the failed
        ones autoreset next, and the first failed instance is named.
        """
        self._unsettled = step
        try:
            call(*args)
            outputs = self._finish_step(step)
            self._unsettled = None
        except BaseException as exc:
            self._settle_interrupted(exc)
            raise
        return outputs

    def _instance_progress(self) -> tuple[np.ndarray, np.ndarray]:
        """Each instance's ``(needs_reset, steps)`` in the runtime (failure path only)."""
        m = self.num_instances
        needs = np.fromiter((self.sim.needs_reset(i) for i in range(m)), dtype=bool, count=m)
        steps = np.fromiter((self.sim.steps(i) for i in range(m)), dtype=np.int64, count=m)
        return needs, steps

    def _settle_interrupted(self, exc: BaseException | None = None) -> None:
        """Settle the call in ``_unsettled`` (stopped midway) from the runtime; a no-op if none.

        A background step still in flight is interrupted first. Then, from the
        bookkeeping before the call: a stepping instance that completed the
        step (one step more, no reset needed) keeps it, one the runtime never
        reached is unchanged; a resetting instance the runtime demonstrably
        reset (at step 0 now, not before) keeps its reset. Every other
        instance autoresets on the next step with the seed this call chose (one
        that failed: with its next seed, as after any failure). ``exc`` is
        named after the first failed instance (``exc.instance``).
        """
        plan = self._unsettled
        if plan is None:
            return
        if self.sim.in_flight:
            self.sim.request_interrupt()
            with contextlib.suppress(BaseException):  # its failures are read back below
                self.sim.step_wait()
        self._restore(plan.before)
        needs, steps = self._instance_progress()
        if isinstance(plan, _Reset):
            done = plan.mask & ~needs & (steps == 0) & ~plan.fresh
            self._settle_resets(done, plan.seeds)
            redo = plan.mask & ~done
            for i in np.flatnonzero(redo & ~needs):
                self._reset_seeds[int(i)] = int(plan.seeds[i])
            if not plan.before.started:  # its checks may not be armed; no step ran since
                self.sim.check_next_steps(self._check_steps)
        else:
            resetting, cycles = plan.resetting, plan.before.cycles
            done = ~needs & np.where(resetting, (steps == 0) & ~plan.fresh, steps == cycles + 1)
            untouched = ~needs & ~resetting & (steps == cycles)
            self._settle_step(plan, done)
            redo = ~done & ~untouched
        self._autoreset |= redo
        self._pending = None
        self._unsettled = None
        if exc is not None:
            self._name_failure(exc, redo & needs)

    def _name_failure(self, exc: BaseException, failed: np.ndarray) -> None:
        """Name the first failed instance in ``exc`` (``exc.instance``), if any failed."""
        reported = [i for i in self.sim.failed_instances if failed[i]]
        first = reported or np.flatnonzero(failed).tolist()
        if first:
            name_instance(exc, self.instance_offset + int(first[0]))

    def _settle_step(self, step: _Step, done: np.ndarray | None = None):
        """A step's bookkeeping for the instances in ``done`` (None: all).

        Applied once, to the bookkeeping before the step. Returns the batch's
        ``(terms, truncs, dead, reset_rows)``: flags with black death and
        autoreset applied, rows that were dead before the step and rows that
        reset in it.
        """
        resetting, seeds, was_alive = step.resetting, step.args[3], step.args[1]
        ok = np.ones(self.num_instances, dtype=bool) if done is None else done
        for i in np.flatnonzero(resetting & ok):
            self._episode_seeds[i] = int(seeds[i])
            self._reset_seeds.pop(int(i), None)
        self._cycles[~resetting & ok] += 1
        self._cycles[resetting & ok] = 0

        terms = self.sim.terminations.astype(bool)
        truncs = self.sim.truncations.astype(bool)
        truncs |= self._rows(self._cycles >= self.max_cycles)
        # Black death: rows dead before this step report nothing.
        reset_rows = self._rows(resetting)
        dead = ~was_alive.astype(bool) & ~reset_rows
        terms[dead | reset_rows] = False
        truncs[dead | reset_rows] = False

        alive = self._alive.copy()
        alive[reset_rows] = 1
        alive[terms | truncs] = 0
        ok_rows = self._rows(ok)
        self._alive[ok_rows] = alive[ok_rows]
        done_instances = ~alive.reshape(self.num_instances, -1).any(axis=1)
        autoreset = done_instances & ~resetting | self._autoreset & ~resetting
        self._autoreset[ok] = autoreset[ok]
        return terms, truncs, dead, reset_rows

    def _finish_step(self, step: _Step):
        """The step's outputs as fresh arrays, with black death and autoreset applied."""
        obs = self.sim.observations.copy()
        rewards = self.sim.rewards.copy()
        terms, truncs, dead, reset_rows = self._settle_step(step)
        obs[dead] = 0
        rewards[dead | reset_rows] = 0.0
        return obs, rewards, terms, truncs

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
        _LIVE.add(self)
        for i, blob in enumerate(saved):
            if blob is not None:
                self.sim.load(i, blob)
