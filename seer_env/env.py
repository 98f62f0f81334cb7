"""The generic PettingZoo ParallelEnv over any C++ model of the runtime.

A built-in env (``pcs_v0``, ``aircraft_v0``) is a thin subclass: it validates
its arguments, turns them into the model's config, and adds rendering. Spaces,
reset/step, the array fast path and pickling live here once; argument checks
in ``seer_env.validation``, episode seeds in ``seer_env.seeding`` and action
checks in ``seer_env.action_checker`` (shared with the vector env).
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv

from seer_env import _core, stpa
from seer_env.action_checker import ActionChecker
from seer_env.python_model import PythonModel
from seer_env.seeding import episode_seed
from seer_env.seeding import next_episode_seed as _next_episode_seed
from seer_env.validation import validate_int, validate_real, validate_seed

# The seeding and validation names are re-exported: they lived here before the
# split, and user code (custom envs, old tests) imports them from here.
__all__ = [
    "RuntimeInfo",
    "SeerParallelEnv",
    "_next_episode_seed",
    "episode_seed",
    "validate_int",
    "validate_real",
    "validate_seed",
]


@contextlib.contextmanager
def _gc_paused():
    """Disable the cyclic garbage collector inside the block (restored after)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _rows_to_dicts_function(keys: list[str]):
    """A function turning a list of rows into dicts with ``keys``.

    Generated as one list comprehension over a dict literal: 2.5x faster than
    ``dict(zip(keys, row))`` per row, which matters at thousands of agents.
    Keys come from the model spec and are embedded with ``repr``.
    """
    names = [f"v{i}" for i in range(len(keys))]
    if not keys:
        return lambda table: [{} for _ in table]
    literal = ", ".join(f"{k!r}: {n}" for k, n in zip(keys, names))
    source = f"lambda table: [{{{literal}}} for {', '.join(names)}, in table]"
    return eval(source, {})  # noqa: S307 - keys are the model's own names


@dataclasses.dataclass(frozen=True)
class RuntimeInfo:
    """What the runtime did in the last step (``env.runtime``)."""

    executor: str
    num_threads: int
    events: int
    cross_events: int
    rounds: int
    seconds: float
    events_total: int
    stpa: dict | None = None  # STPA's report when num_threads="auto" (after the first reset)


class SeerParallelEnv(ParallelEnv):
    """A PettingZoo ParallelEnv whose step runs on the seer_env runtime.

    Args:
        model: name of a registered C++ model (``seer_env.model_names()``), or a
            ``seer_env.PythonModel`` subclass (serial executor only).
        model_config: the model's numeric settings (a PythonModel subclass
            receives them as keyword arguments).
        seed: seed used by the first ``reset()`` that is not given one.
        max_cycles: steps until every agent is truncated.
        executor: a name from ``seer_env.executor_names()``, or None: chosen with
            ``num_threads`` (``"serial"`` for 1 thread, else ``"parallel"``; STPA's
            choice for ``"auto"``).
        num_threads: threads of the executor (the calling thread included), or
            ``"auto"``: STPA chooses executor and pool size at the first
            ``reset()`` from a short preflight on a throw-away copy (outputs never
            depend on it; see ``env.runtime.stpa`` and docs/stpa.md).
        check: run the expensive contract checks.
        event_budget: max events in one step (0: unlimited).
        render_mode: one of ``metadata["render_modes"]`` or None.
    """

    metadata: dict[str, Any] = {"name": "seer_env", "render_modes": [], "is_parallelizable": True}

    def __init__(
        self,
        model: str | type[PythonModel],
        model_config: dict[str, float] | None = None,
        *,
        seed: int | None = None,
        max_cycles: int = 1000,
        executor: str | None = None,
        num_threads: int | str = "auto",
        check: bool = False,
        event_budget: int = 50_000_000,
        render_mode: str | None = None,
    ) -> None:
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode must be None or one of {self.metadata['render_modes']}, "
                f"got {render_mode!r}"
            )
        if executor is not None and (
            not isinstance(executor, str) or executor not in _core.executor_names()
        ):
            raise ValueError(
                f"executor must be None or one of {_core.executor_names()}, got {executor!r}"
            )
        threads = stpa.parse_num_threads(num_threads)
        if threads == stpa.AUTO and not isinstance(model, str):
            threads = 1  # a PythonModel runs serially: nothing for STPA to choose
        if threads != stpa.AUTO and executor != "serial":
            stpa.warn_if_oversubscribed(threads)
        if not isinstance(check, bool):
            raise ValueError(f"check must be a bool, got {check!r}")
        self.max_cycles = validate_int("max_cycles", max_cycles, 1)
        # Until STPA has chosen (first reset), run serially: a Simulation starts
        # no threads before its first step, so this costs nothing.
        self._stpa_request = (executor, check) if threads == stpa.AUTO else None
        self._stpa_report: dict | None = None
        if threads == stpa.AUTO:
            threads = 1
        self._options = {
            "executor": executor or stpa.default_executor(threads),
            "num_threads": threads,
            "check": check,
            "event_budget": validate_int("event_budget", event_budget, 0),
        }
        self._model = model
        self._model_config = dict(model_config or {})
        self._seed = validate_seed(seed)
        self.render_mode = render_mode
        self.sim = self._new_simulation()
        self._init_spaces(self.sim.spec)
        self.agents: list[str] = []
        self._episode_seed: int | None = None
        self._cycles = 0

    def _new_simulation(self) -> _core.Simulation:
        if isinstance(self._model, str):
            return _core.Simulation(self._model, self._model_config, **self._options)
        if not (isinstance(self._model, type) and issubclass(self._model, PythonModel)):
            raise ValueError(
                f"model must be a registered model name or a PythonModel subclass, "
                f"got {self._model!r}"
            )
        return _core.Simulation(self._model.from_config(self._model_config), **self._options)

    # -- spaces ---------------------------------------------------------------------------------
    def _init_spaces(self, spec: dict) -> None:
        self.possible_agents = [f"{spec['agent_prefix']}_{i}" for i in range(spec["num_agents"])]
        self._agent_index = {a: i for i, a in enumerate(self.possible_agents)}
        # One space object shared by every agent: the same object on every call,
        # and identical spaces as SuperSuit requires.
        obs_space = spaces.Box(
            np.asarray(spec["obs_low"], dtype=np.float32),
            np.asarray(spec["obs_high"], dtype=np.float32),
            dtype=np.float32,
        )
        act = spec["action"]
        if act["discrete"]:
            act_space: spaces.Space = spaces.Discrete(act["n"])
        else:
            act_space = spaces.Box(act["low"], act["high"], (act["dim"],), dtype=np.float32)
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: act_space for a in self.possible_agents}
        self.state_space = spaces.Box(
            spec["state_low"], spec["state_high"], (spec["state_dim"],), dtype=np.float32
        )
        self._info_keys = list(spec["info_keys"])
        self._rows_to_dicts = _rows_to_dicts_function(self._info_keys)
        self._actions = ActionChecker(act)
        self._discrete = self._actions.discrete

    def observation_space(self, agent: str) -> spaces.Space:
        """The observation space of ``agent`` (one shared object)."""
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        """The action space of ``agent`` (one shared object)."""
        return self.action_spaces[agent]

    @property
    def num_agents(self) -> int:
        """Number of live agents."""
        return len(self.agents)

    @property
    def max_num_agents(self) -> int:
        """Number of possible agents."""
        return len(self.possible_agents)

    # -- episode --------------------------------------------------------------------------------
    def reset(
        self, seed: int | None = None, options: dict | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, dict]]:
        """Start an episode; returns ``(observations, infos)`` for every agent."""
        seed = validate_seed(seed)
        if options is not None and not isinstance(options, dict):
            raise ValueError(f"options must be None or a dict, got {options!r}")
        seed = episode_seed(seed, self._episode_seed, self._seed)
        if self._stpa_request is not None:
            self._choose_executor()
        self.sim.reset(seed)
        self._episode_seed = seed
        self._cycles = 0
        self.agents = list(self.possible_agents)
        obs = self.sim.observations()
        infos = self._info_dicts(self.sim.infos(), None)
        return dict(zip(self.agents, obs)), dict(zip(self.agents, infos))

    def _choose_executor(self, num_envs: int = 1) -> None:
        """Run STPA once (first reset) and switch the simulation to its choice.

        ``num_envs``: the vector env steps that many instances as one batch
        and has STPA time batches of that size.
        """
        executor, check = self._stpa_request
        decision = stpa.choose(
            self._model,
            self._model_config,
            executor=executor,
            check=check,
            event_budget=self._options["event_budget"],
            num_envs=num_envs,
        )
        self.sim.set_executor(decision.executor, decision.num_threads)
        self._options["executor"] = decision.executor
        self._options["num_threads"] = decision.num_threads
        self._stpa_report = decision.report
        self._stpa_request = None

    def _info_dicts(self, infos: np.ndarray, rows: np.ndarray | None) -> list[dict[str, int]]:
        """One info dict per row (all rows when ``rows`` is None)."""
        table = (infos if rows is None else infos[rows]).tolist()
        return self._rows_to_dicts(table)

    def _require_running(self) -> None:
        if self.sim.steps == 0 and not self.agents and self._episode_seed is None:
            raise RuntimeError("step() called before reset()")
        if self.sim.needs_reset:
            raise RuntimeError("step() called after a failed step; call reset() first")
        if not self.agents:
            raise RuntimeError("step() called with no live agents (episode over); call reset()")

    def step(self, actions: dict[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        """One step; returns ``(obs, rewards, terminations, truncations, infos)`` dicts."""
        self._require_running()
        self.sim.prewake()  # parked workers wake while we convert the actions
        arr, alive = self._actions.check_dict(actions, self.agents, self._agent_index)
        self.sim.step(arr, alive)
        self._cycles += 1
        live = self.agents
        obs = self.sim.observations()
        rewards = self.sim.rewards()
        terms = self.sim.terminations()
        truncs = self.sim.truncations()
        if self._cycles >= self.max_cycles:
            truncs[:] = True
        infos = self.sim.infos()
        if len(live) != len(self.possible_agents):  # some agents are gone: keep live rows
            rows = np.fromiter(map(self._agent_index.__getitem__, live), np.intp, len(live))
            obs, rewards, terms, truncs, infos = (
                x[rows] for x in (obs, rewards, terms, truncs, infos)
            )
        # Building thousands of small dicts triggers the cyclic GC over and
        # over (~2 ms per 4096-agent step, measured); none of them can form a
        # cycle, so pause it while we build.
        with _gc_paused():
            term_list, trunc_list = terms.tolist(), truncs.tolist()
            observations = dict(zip(live, obs))
            reward_d = dict(zip(live, rewards.tolist()))
            term_d = dict(zip(live, term_list))
            trunc_d = dict(zip(live, trunc_list))
            info_d = dict(zip(live, self._info_dicts(infos, None)))
            self.agents = [a for a, te, tr in zip(live, term_list, trunc_list) if not (te or tr)]
        return observations, reward_d, term_d, trunc_d, info_d

    def step_arrays(
        self, actions: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The array fast path: one row per possible agent, no per-agent dicts.

        Args:
            actions: int64 ``[num_agents]`` (Discrete) or float32 ``[num_agents, dim]`` (Box).
                Rows of agents that are no longer live are ignored.

        Returns:
            tuple: ``(obs[num_agents, obs_dim] float32, rewards[num_agents] float64,
            terminations[num_agents] bool, truncations[num_agents] bool)``.
        """
        self._require_running()
        self.sim.prewake()  # parked workers wake while we check the actions
        n = len(self.possible_agents)
        live_names = self.agents
        if len(live_names) == n:  # the common case: nobody is gone, no index work
            rows = alive = live = None
        else:
            rows = np.fromiter(
                map(self._agent_index.__getitem__, live_names), np.intp, len(live_names)
            )
            alive = np.zeros(n, dtype=np.uint8)
            alive[rows] = 1
            live = alive.view(bool)
        arr = self._actions.check_array(actions, n, live=live, names=self.possible_agents)
        self.sim.step(arr, alive)
        self._cycles += 1
        terms = self.sim.terminations()
        truncs = self.sim.truncations()
        if self._cycles >= self.max_cycles:
            truncs[:] = True
        done = terms | truncs
        if rows is not None:
            done = done[rows]
        if done.any():
            self.agents = [a for a, d in zip(live_names, done.tolist()) if not d]
        return self.sim.observations(), self.sim.rewards(), terms, truncs

    def state(self) -> np.ndarray:
        """The global state vector (``state_space``)."""
        if self._episode_seed is None:
            raise RuntimeError("state() called before reset()")
        return self.sim.state()

    @property
    def runtime(self) -> RuntimeInfo:
        """Executor, threads and what the runtime did in the last step."""
        last = self.sim.last_step
        return RuntimeInfo(
            executor=self.sim.executor,
            num_threads=self.sim.num_threads,
            events=last["events"],
            cross_events=last["cross_events"],
            rounds=last["rounds"],
            seconds=last["seconds"],
            events_total=self.sim.events_processed,
            stpa=self._stpa_report,
        )

    # -- rendering ------------------------------------------------------------------------------
    def render(self, *args):
        """Render per ``render_mode`` (``args`` accepted for RLlib's ``render(mode)``)."""
        if self.render_mode is None:
            return None
        if self._episode_seed is None:
            raise RuntimeError("render() called before reset()")
        return getattr(self, f"_render_{self.render_mode}")()

    def close(self) -> None:
        """Join this env's worker threads (each env owns its pool; docs/reliability.md).

        The env stays usable: a later step starts fresh workers.
        """
        sim = getattr(self, "sim", None)  # None: __init__ failed before building it
        if sim is not None:
            sim.release_threads()

    # -- pickling -------------------------------------------------------------------------------
    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        sim = state.pop("sim")
        del state["_rows_to_dicts"]  # generated code: rebuilt on load
        running = self._episode_seed is not None and not sim.needs_reset
        state["_saved_sim"] = sim.save() if running else None
        return state

    def __setstate__(self, state: dict) -> None:
        saved = state.pop("_saved_sim")
        self.__dict__.update(state)
        self._rows_to_dicts = _rows_to_dicts_function(self._info_keys)
        self.sim = self._new_simulation()
        if saved is not None:
            self.sim.load(saved)
