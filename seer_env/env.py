"""The generic PettingZoo ParallelEnv over any C++ model of the runtime.

A built-in workload's env (``seer_env.envs.pcs.PcsEnv``,
``seer_env.envs.aircraft.AircraftEnv``) is a thin subclass that adds its
attributes and rendering; its versions (``pcs_v0``, ...) are configurations of
it (``seer_env.envs.version``). Spaces, reset/step, the array fast path and
pickling live here once; the runtime options in ``seer_env.options``, argument checks
in ``seer_env.validation``, episode seeds in ``seer_env.seeding`` and action
checks in ``seer_env.action_checker`` (shared with the vector env).
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Iterator
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv

from seer_env import _core, stpa
from seer_env.action_checker import ActionChecker
from seer_env.action_masks import masked_observation_space, with_masks
from seer_env.model_source import new_simulation, runs_on_threads
from seer_env.models.numba import NumbaModel
from seer_env.models.python_model import PythonModel
from seer_env.neighbours import NeighbourRule
from seer_env.options import DEFAULT_CHECK_STEPS, option_names, resolve_options
from seer_env.seeding import episode_seed
from seer_env.shared_spaces import SharedSpaces
from seer_env.snapshot import Snapshot, episode_fields, require_same_env
from seer_env.stpa.decision import start_as_decided
from seer_env.validation import validate_int, validate_reset_options, validate_seed

__all__ = ["DEFAULT_CHECK_STEPS", "RuntimeInfo", "SeerParallelEnv"]


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
    # The threads the last step ran on (the parallel executor sheds threads while
    # rounds keep stalling on a busy machine, docs/runtime.md), and why.
    threads_used: int = 0
    thread_decision: str = ""
    # Work counters of the parallel executor's rounds (0 for a step that ran the
    # serial loop): entities found with events to handle, summed over rounds, and
    # entity queue lines read (each entity's once at the step's begin, then the
    # ready ones'). They count work, not time.
    ready: int = 0
    queue_reads: int = 0

    def __repr__(self) -> str:
        """One line; the fields (and ``stpa``, STPA's full report) hold the details."""
        chose = ""
        if self.stpa is not None:
            choice = self.stpa.get("choice", {})
            chose = (
                f", stpa chose {choice.get('executor')} x{choice.get('num_threads')}"
                f" ({self.stpa.get('source')}; .stpa has the report)"
            )
        ran = ""
        if self.threads_used and self.threads_used != self.num_threads:
            # The pool shed (or regrew) threads: say what ran, and why.
            ran = f" on {self.threads_used} of {self.num_threads} threads ({self.thread_decision})"
        return (
            f"RuntimeInfo({self.executor} x{self.num_threads}, last step: {self.events} events"
            f" ({self.cross_events} cross-entity), {self.rounds} rounds,"
            f" {self.seconds * 1e3:.3g} ms{ran}; {self.events_total} events since reset{chose})"
        )


class SeerParallelEnv(ParallelEnv):
    """A PettingZoo ParallelEnv whose step runs on the seer_env runtime.

    Args:
        model: name of a registered C++ model (``seer_env.model_names()``), or a
            ``seer_env.PythonModel`` subclass (serial executor only), or a
            ``seer_env.NumbaModel`` subclass (compiled: any executor, and
            ``num_threads="auto"`` as for a C++ model; ``compiled=False``: serial).
        model_config: the model's numeric settings (a PythonModel subclass
            receives them as keyword arguments).
        **options: the runtime options (``seer_env.options.RUNTIME_OPTIONS``:
            ``max_cycles``, ``seed``, ``executor``, ``num_threads``, ``check``,
            ``check_steps``, ``event_budget``, ``render_mode``), each with the default
            and meaning declared there; outputs never depend on ``executor`` or
            ``num_threads``.

    Raises:
        TypeError: an option that is not declared.
        ValueError: an option's value, naming it.
    """

    metadata: dict[str, Any] = {"name": "seer_env", "render_modes": [], "is_parallelizable": True}
    # What fork() builds its batch with: SeerVectorEnv.from_snapshot. The vector env
    # sits a layer above this module and imports it, so seer_env/__init__.py sets this
    # (this module never imports the vector package).
    _fork_batch: ClassVar[Callable[..., Any]]
    # Whether this class runs event-driven decisions (seer_env.decision_env).
    _event_driven: ClassVar[bool] = False

    def __init__(
        self,
        model: str | type[PythonModel] | type[NumbaModel],
        model_config: dict[str, float] | None = None,
        **options: Any,
    ) -> None:
        opts = resolve_options(options)
        executor, num_threads, check = opts["executor"], opts["num_threads"], opts["check"]
        render_mode = opts["render_mode"]
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
        if threads == stpa.AUTO and not runs_on_threads(model, model_config or {}):
            threads = 1  # Python handlers run serially: nothing for STPA to choose
        if threads != stpa.AUTO and executor != "serial":
            stpa.warn_if_oversubscribed(threads)
        if not isinstance(check, bool):
            raise ValueError(f"check must be a bool, got {check!r}")
        self.max_cycles = validate_int("max_cycles", opts["max_cycles"], 1)
        self._check_steps = validate_int("check_steps", opts["check_steps"], 0)
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
            "event_budget": validate_int("event_budget", opts["event_budget"], 0),
        }
        # How agents act (seer_env.decision_env): None, as the model declares.
        self._decisions = opts["decisions"]
        self._model = model
        self._model_config = dict(model_config or {})
        self._seed = validate_seed(opts["seed"])
        self.render_mode = render_mode
        self.sim = self._new_simulation()
        if self.sim.decisions != "lockstep" and not self._event_driven:
            raise ValueError(
                f"model {self.sim.spec['name']!r} has its agents act when their events ask "
                "(decisions): run it as seer_env.SeerDecisionEnv"
            )
        self._init_spaces(self.sim.spec)
        # The runtime's reset/load count this bookkeeping describes: a load made
        # behind the env's back (env.sim.load) shows as another count.
        self._generation = self.sim.generation
        self.agents = []
        self._episode_seed: int | None = None
        self._cycles = 0
        # The live agents by row (bool over possible_agents), the env's own record:
        # `agents` is the user's list, which may be reordered but must name them all.
        self._live = np.zeros(len(self.possible_agents), dtype=bool)
        self._all_live = False
        # (call, episode seed before it): set before a step or reset hands its
        # work to the runtime, cleared once its bookkeeping is done. An
        # exception (Ctrl-C) in between leaves it: step() refuses until reset().
        self._torn: tuple[str, int | None] | None = None

    def _new_simulation(self) -> _core.Simulation:
        return new_simulation(
            self._model, self._model_config, decisions=self._decisions, **self._options
        )

    # -- spaces ---------------------------------------------------------------------------------
    def _init_spaces(self, spec: dict) -> None:
        if spec["num_agents"] == 0:
            raise ValueError(
                f"model {spec['name']!r} has no agents: it runs as seer_env.Simulation, not as an "
                "env (a model becomes an env by declaring agents)"
            )
        self.possible_agents = [f"{spec['agent_prefix']}_{i}" for i in range(spec["num_agents"])]
        # One space object shared by every agent: the same object on every call,
        # and identical spaces as SuperSuit requires.
        obs_box = spaces.Box(
            np.asarray(spec["obs_low"], dtype=np.float32),
            np.asarray(spec["obs_high"], dtype=np.float32),
            dtype=np.float32,
        )
        act = spec["action"]
        # A model that declares action_mask: PettingZoo's masked observations on
        # the dict API (seer_env.action_masks); the array paths keep obs_box.
        self._masked = bool(spec.get("action_mask", False))
        self._obs_box = obs_box
        obs_space = masked_observation_space(obs_box, act["n"]) if self._masked else obs_box
        if act["discrete"]:
            act_space: spaces.Space = spaces.Discrete(act["n"])
        else:
            act_space = spaces.Box(act["low"], act["high"], (act["dim"],), dtype=np.float32)
        self._obs_space, self._act_space = obs_space, act_space
        self.state_space = spaces.Box(
            spec["state_low"], spec["state_high"], (spec["state_dim"],), dtype=np.float32
        )
        self._info_keys = list(spec["info_keys"])
        self._actions = ActionChecker(act)
        self._discrete = self._actions.discrete
        self._dicts = self._new_dict_bridge()
        self._share_agent_tables()
        # True while the bridge builds a step's dicts from the runtime's
        # buffers: releasing a value the caller left in an old dict may run
        # its __del__, which must not step or reset this env meanwhile.
        self._building_outputs = False

    def _share_agent_tables(self) -> None:
        """The per-agent tables, one entry per agent held once (PCS 256x256: 65,536 agents).

        ``_agent_index`` (name -> row) is the dict bridge's own dict, and
        ``observation_spaces`` / ``action_spaces`` map every agent to the one
        shared space without an entry each (``SharedSpaces``).
        """
        self._agent_index = self._dicts.index
        self.observation_spaces = SharedSpaces(self._agent_index, self._obs_space)
        self.action_spaces = SharedSpaces(self._agent_index, self._act_space)

    def _new_dict_bridge(self) -> _core.DictBridge:
        """The C++ side of the dict API: per-agent dicts built in one call each."""
        checker = self._actions
        return _core.DictBridge(
            self.possible_agents,
            self._info_keys,
            checker.discrete,
            checker.dim,
            checker.n,
            float(checker.low),
            float(checker.high),
        )

    def observation_space(self, agent: str) -> spaces.Space:
        """The observation space of ``agent`` (one shared object)."""
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        """The action space of ``agent`` (one shared object)."""
        return self.action_spaces[agent]

    @property
    def action_masks(self) -> np.ndarray | None:
        """Which actions each agent may take now: bool ``[num_agents, n]`` by row (a copy).

        For a model that declares ``action_mask`` (``seer_env.action_masks``);
        None for one that does not (every action is valid). ``step`` and
        ``step_arrays`` refuse an action its row forbids (ValueError naming the
        agent, the action and the valid ones; nothing runs).
        """
        return self.sim.action_masks() if self._masked else None

    @property
    def agents(self) -> list[str]:
        """The live agents, in the caller's order (the caller may reorder, not shorten, it).

        After a load made behind the env's back (``env.sim.load``), the first
        read rebuilds it from the runtime (``_follow_runtime``).
        """
        if self.sim.generation != self._generation and self._torn is None:
            self._follow_runtime()
        return self._agents

    @agents.setter
    def agents(self, value: list[str]) -> None:
        self._agents = value

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
        """Start an episode; returns ``(observations, infos)`` for every agent.

        Interrupted (Ctrl-C) once it has reached the runtime, the env refuses
        ``step()`` until a ``reset()`` completes; an interrupted reset does not
        advance the seed sequence (docs/reliability.md, *Ctrl-C during a step*).
        """
        self._require_idle("reset()")
        seed = validate_seed(seed)
        # The configuration's names are looked up only when options name something.
        validate_reset_options(options, self._configuration() if options else ())
        # An interrupted call counts for nothing: continue from the seed before it.
        previous = self._episode_seed if self._torn is None else self._torn[1]
        seed = episode_seed(seed, previous, self._seed)
        if self._stpa_request is not None:
            self._choose_executor()
        self._torn = ("reset()", previous)  # until the bookkeeping below is done
        if previous is None:  # the first episode: check its first steps
            self.sim.check_next_steps(self._check_steps)
        self.sim.reset(seed)
        self._generation = self.sim.generation  # our own reset, not a load behind our back
        self._episode_seed = seed
        self._cycles = 0
        self.agents = list(self.possible_agents)
        self._live = np.ones(len(self.possible_agents), dtype=bool)
        self._all_live = True
        self._torn = None
        return self._first_outputs()

    def _first_outputs(self) -> tuple[dict[str, np.ndarray], dict[str, dict]]:
        """``(observations, infos)`` of the live agents at the current boundary."""
        # The bridge copies the observations into a buffer of its own: no
        # returned row aliases what a later step writes.
        obs, _, _, _, infos = self.sim.output_views()
        try:
            self._building_outputs = True
            observations, infos = self._dicts.reset_outputs(self.agents, obs, infos)
        finally:
            self._building_outputs = False
        return self._with_masks(observations), infos

    def _configuration(self) -> set[str]:
        """The names of this env's parameters and runtime options (fixed at construction)."""
        declared = (
            {p["name"] for p in _core.workload_spec(self._model)["params"]}
            if isinstance(self._model, str)
            else set()
        )
        return declared | set(option_names()) | set(self._model_config)

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
        start_as_decided(self.sim, decision.report)
        self._options["executor"] = decision.executor
        self._options["num_threads"] = decision.num_threads
        self._stpa_report = decision.report
        self._stpa_request = None

    def _require_idle(self, what: str) -> None:
        """RuntimeError while another call on this env runs (another thread, or a handler)."""
        # Checked first: mid-step, the sim also reads as needing a reset.
        if self.sim.busy or self._building_outputs:
            raise RuntimeError(
                f"{what} called while another call on this env is in progress (in another "
                "thread, or from one of the env's own handlers); wait for it to return"
            )

    def _require_running(self) -> None:
        self._require_idle("step()")
        if self.sim.generation != self._generation and self._torn is None:
            self._follow_runtime()
        # self._agents: the runtime was followed just above (the property would ask again).
        if self.sim.steps == 0 and not self._agents and self._episode_seed is None:
            raise RuntimeError("step() called before reset()")
        if self.sim.needs_reset:
            raise RuntimeError("step() called after a failed step; call reset() first")
        if self._torn is not None:
            raise RuntimeError(
                f"step() called after a {self._torn[0]} that was interrupted (Ctrl-C) once the "
                "runtime had begun it; call reset() first"
            )
        if not self._agents:
            raise RuntimeError("step() called with no live agents (episode over); call reset()")

    def step(self, actions: dict[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        """One step; returns ``(obs, rewards, terminations, truncations, infos)`` dicts.

        ``actions`` is keyed by agent name, in any order. Actions for agents
        that are done are ignored (``{a: pi(o) for a in env.possible_agents}``
        works all episode long); a key that is no agent's is a ValueError
        naming it. Discrete actions must be in the space, one per live agent
        (a live agent left out is a ValueError naming it). Box actions are
        clipped to the space (``ClipAction``), NaN raises ValueError, and a
        live agent left out takes the model's default action (aircraft:
        hover). A bool is not an action (ValueError). The dicts returned are
        keyed by ``agents`` in its order, also after the caller reordered it.
        See ``seer_env.action_checker``.
        """
        self._require_running()
        self.sim.prewake()  # parked workers wake while we convert the actions
        live = self._agents if type(self._agents) is list else list(self._agents)
        # C++ converts a well-formed action dict; anything else (or an error
        # to word) goes through the one ActionChecker.
        fast = self._dicts.actions(actions, live) if type(actions) is dict else None
        if fast is None:
            # ValueError: `agents` names an agent twice, or no agent
            rows = self._dicts.live_rows(live)
            self._require_live_agents(rows)
            arr, alive = self._actions.check_dict(actions, live, self._agent_index)
        else:
            arr, alive = fast
            self._require_live_agents(alive, mask=True)
        self._torn = ("step()", self._episode_seed)  # until the bookkeeping below is done
        with self._refusal_keeps_env():
            self.sim.step(arr, alive)
        self._cycles += 1
        over = self._cycles >= self.max_cycles
        views = self.sim.output_views()
        # The bridge reads the runtime's buffers in place and copies the
        # observations into a buffer of its own, one nobody else holds (no
        # returned row aliases what a later step writes): see DictBridge.
        try:
            self._building_outputs = True
            obs, rewards, terms, truncs, infos, self.agents = self._dicts.step_outputs(
                live, *views, over
            )
        finally:
            self._building_outputs = False
        if len(self._agents) != len(live):
            self._agents_left(views[2].view(bool) | views[3].view(bool), over)
        obs = self._with_masks(obs)
        self._torn = None
        return obs, rewards, terms, truncs, infos

    @contextlib.contextmanager
    def _refusal_keeps_env(self) -> Iterator[None]:
        """Around ``sim.step`` / ``sim.answer``: a refusal before anything ran keeps the env.

        A ValueError with the runtime not torn (an action a mask forbids)
        leaves the env usable; the call stays a direct one (the interrupt
        tests hook the C call's return).
        """
        try:
            yield
        except ValueError:
            if not self.sim.needs_reset:  # refused before the step began: nothing changed
                self._torn = None
            raise

    def _with_masks(self, observations: dict[str, np.ndarray]) -> dict:
        """The dict API's observations, with each agent's mask if the model declares them.

        PettingZoo's ``{"observation", "action_mask"}`` per agent for a model
        that declares ``action_mask``; else the observations as they are.
        """
        if not self._masked:
            return observations
        return with_masks(observations, self.sim.action_masks(), self._agent_index)

    def step_arrays(
        self, actions: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The array fast path: one row per possible agent, no per-agent dicts.

        Args:
            actions: int64 ``[num_agents]`` (Discrete) or float32 ``[num_agents, dim]`` (Box:
                clipped to the space like Gymnasium's ``ClipAction``; NaN raises
                ValueError). Rows of agents that are no longer live are ignored.

        Returns:
            tuple: ``(obs[num_agents, obs_dim] float32, rewards[num_agents] float64,
            terminations[num_agents] bool, truncations[num_agents] bool)``.
        """
        self._require_running()
        self.sim.prewake()  # parked workers wake while we check the actions
        n = len(self.possible_agents)
        live_names = self._agents if type(self._agents) is list else list(self._agents)
        # None in the common case (agents is possible_agents, in order: no index
        # work); else each live agent's row, by name (agents may be reordered).
        rows = self._dicts.live_rows(live_names)
        self._require_live_agents(rows)
        if rows is None:
            alive = live = None
        else:
            alive = np.zeros(n, dtype=np.uint8)
            alive[rows] = 1
            live = alive.view(bool)
        arr = self._actions.check_array(actions, n, live=live, names=self.possible_agents)
        self._torn = ("step()", self._episode_seed)  # until the bookkeeping below is done
        with self._refusal_keeps_env():
            self.sim.step(arr, alive)
        self._cycles += 1
        terms = self.sim.terminations()
        truncs = self.sim.truncations()
        over = self._cycles >= self.max_cycles
        if over:
            truncs[:] = True
        done = terms | truncs
        done_live = done if rows is None else done[rows]
        if done_live.any():
            self._agents_left(done, over)
            self.agents = [a for a, d in zip(live_names, done_live.tolist()) if not d]
        self._torn = None
        return self.sim.observations(), self.sim.rewards(), terms, truncs

    def _require_live_agents(self, rows: np.ndarray | None, *, mask: bool = False) -> None:
        """ValueError unless ``agents`` names exactly the live agents (in any order).

        Args:
            rows: None when ``agents`` is ``possible_agents`` in order, else the
                rows it names (no duplicates or strangers: checked before).
            mask: ``rows`` is the uint8 mask of those rows over all rows instead.
        """
        if rows is None:
            if self._all_live:
                return
            given = np.ones(len(self.possible_agents), dtype=bool)
        elif mask:
            given = rows.view(bool)
        else:
            given = np.zeros(len(self.possible_agents), dtype=bool)
            given[rows] = True
        if np.array_equal(given, self._live):
            return
        names = self.possible_agents
        missing = [names[i] for i in np.flatnonzero(self._live & ~given)]
        if missing:
            raise ValueError(
                f"env.agents lacks {missing[:5]}, live this episode: an agent leaves env.agents "
                "only by terminating or truncating (the list may be reordered, not shortened)"
            )
        done = [names[i] for i in np.flatnonzero(given & ~self._live)]
        raise ValueError(
            f"env.agents holds {done[:5]}, done (terminated or truncated) this episode; "
            "call reset() to start a new one"
        )

    def _follow_runtime(self) -> None:
        """Rebuild the bookkeeping from the runtime after a load made behind the env's back.

        ``env.sim.load(blob)`` replaces the runtime's state but not the env's:
        the cycle counter becomes the runtime's step count and the live agents
        those not done at the loaded boundary (exact for models whose
        terminations stay set, the built-in ones; ``env.restore`` carries the
        env's own record and is exact for every model).
        """
        if self.sim.needs_reset:
            return  # nothing loaded that could be stepped: step() says so
        self._cycles = int(self.sim.steps)
        done = self.sim.terminations() | self.sim.truncations()
        if self._cycles >= self.max_cycles:
            done[:] = True
        self._live = ~done
        self._all_live = bool(self._live.all())
        self.agents = [a for a, live in zip(self.possible_agents, self._live.tolist()) if live]
        if self._episode_seed is None:
            self._episode_seed = self._seed if self._seed is not None else 0
        self._generation = self.sim.generation

    def _agents_left(self, done: np.ndarray, over: bool) -> None:
        """Record that the agents with ``done`` (bool per row; all, if ``over``) left."""
        self._live = np.zeros_like(self._live) if over else self._live & ~done
        self._all_live = False

    def state(self) -> np.ndarray:
        """The global state vector (``state_space``)."""
        if self._episode_seed is None:
            raise RuntimeError("state() called before reset()")
        return self.sim.state()

    def neighbour_rule(self) -> NeighbourRule | None:
        """How this env's neighbour table is made (``seer_env.neighbours``), or None: none.

        A workload's env class that has a neighbour structure overrides this.
        """
        return None

    def neighbours(self) -> np.ndarray:
        """The neighbour structure: ``int64[num_agents, max_degree]``, ``-1`` padded.

        Row ``j`` holds the indices (into ``possible_agents``) of agent ``j``'s
        neighbours (``neighbour_rule()``: the pcs torus, static, or the UAVs an
        aircraft UAV has heard, read after ``reset()``).

        Raises:
            NotImplementedError: the env declares no neighbour structure.
        """
        rule = self.neighbour_rule()
        if rule is None:
            raise NotImplementedError(f"{type(self).__name__} declares no neighbour structure")
        if rule.static is not None:
            return rule.static
        if self._episode_seed is None:
            raise RuntimeError("neighbours() called before reset()")
        return rule.from_states(self.sim.entity_states())

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
            threads_used=last["threads"],
            thread_decision=last["thread_decision"],
            ready=last["ready"],
            queue_reads=last["queue_reads"],
        )

    # -- snapshots ------------------------------------------------------------------------------
    def _identity(self) -> dict[str, Any]:
        """What a snapshot must match beyond the runtime's own identity (model configuration)."""
        model = self._model
        name = model if isinstance(model, str) else f"{model.__module__}.{model.__qualname__}"
        return {"model": name, "max_cycles": self.max_cycles, "agents": len(self.possible_agents)}

    def snapshot(self) -> Snapshot:
        """The env's complete state at this step boundary (``seer_env.snapshot.Snapshot``).

        ``restore`` puts this env, or another of the same workload and
        configuration (any executor and thread count), back into it: the
        steps that follow return the same bytes as the ones that followed
        here. The runtime's part is one flat copy of the live state, taken
        without the GIL (docs/branching.md).

        Raises:
            RuntimeError: before ``reset()``, during another call, or after a
                failed or interrupted one (nothing consistent to copy).
        """
        self._require_idle("snapshot()")
        if self.sim.generation != self._generation and self._torn is None:
            self._follow_runtime()
        if self._episode_seed is None:
            raise RuntimeError("snapshot() called before reset()")
        if self.sim.needs_reset or self._torn is not None:
            raise RuntimeError(
                "snapshot() called after a failed or interrupted call; call reset() first"
            )
        episode = {
            "agents": list(self.agents),
            "cycles": self._cycles,
            "episode_seed": self._episode_seed,
            "checked_steps_left": self.sim.checked_steps_left,
        }
        return Snapshot(self._identity(), episode, self.sim.save())

    def restore(self, snapshot: Snapshot | bytes) -> tuple[dict[str, np.ndarray], dict[str, dict]]:
        """Put the env into ``snapshot``'s state; returns ``(observations, infos)`` there.

        ``snapshot``: from ``snapshot()`` of this env or another of the same
        workload and configuration, or its ``bytes`` (read from a file: data,
        never code). The env may be fresh (never reset) and run another
        executor or thread count.

        Raises:
            ValueError: a snapshot of another workload, version, size or
                parameter (naming what differs), or corrupt bytes; the env is
                left as it was.
            RuntimeError: during another call on this env.
        """
        self._require_idle("restore()")
        snap = require_same_env(snapshot, self._identity())
        agents, live, cycles, seed, checked = episode_fields(
            snap.episode, self._agent_index, self.max_cycles
        )
        if self._stpa_request is not None:
            self._choose_executor()
        # Interrupted (Ctrl-C) from here on, the env refuses to step until reset().
        torn = self._torn
        self._torn = ("restore()", self._episode_seed if torn is None else torn[1])
        try:
            self.sim.load(snap.runtime)
        except ValueError:  # refused before the runtime changed anything
            self._torn = torn
            raise
        self._generation = self.sim.generation
        self.sim.check_next_steps(checked)
        self._episode_seed = seed
        self._cycles = cycles
        self.agents = agents
        self._live = live
        self._all_live = agents == self.possible_agents
        self._torn = None
        return self._first_outputs()

    def fork(self, branches: int, **options: Any):
        """``branches`` copies of this env's current state, stepped together in one call.

        Returns a ``seer_env.vector.SeerVectorEnv`` whose every instance is
        restored from ``snapshot()`` (each continues exactly as this env would,
        given the same actions): rollouts of candidate actions, side by side on
        the thread pool. ``options``: ``executor``, ``num_threads`` for the
        batch (default: this env's). Instances autoreset when their episode
        ends, as in any vector env.
        """
        return self._fork_batch(self, self.snapshot(), branches, **options)

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
        # A copy taken mid-step would have no consistent boundary to save:
        # refuse rather than return an env without its episode.
        # The episode travels as a snapshot (restore() rebuilds it, exactly).
        self._require_idle("pickling")
        running = self._episode_seed is not None and not self.sim.needs_reset
        snapshot = self.snapshot() if running and self._torn is None else None
        state = self.__dict__.copy()
        sim = state.pop("sim")
        del state["_dicts"]  # a C++ object: rebuilt on load
        for shared in ("_agent_index", "observation_spaces", "action_spaces"):
            del state[shared]  # _share_agent_tables() on load
        state["_snapshot"] = snapshot
        state["_checked_steps_left"] = sim.checked_steps_left
        return state

    def __setstate__(self, state: dict) -> None:
        snapshot = state.pop("_snapshot")
        checked_steps_left = state.pop("_checked_steps_left")
        self.__dict__.update(state)
        self._building_outputs = False
        self._dicts = self._new_dict_bridge()
        self._share_agent_tables()
        self.sim = self._new_simulation()
        self._generation = self.sim.generation
        self.sim.check_next_steps(checked_steps_left)
        if snapshot is not None:
            self.restore(snapshot)
