"""
seer_env's C++ runtime (private: use the seer_env package)
"""
from __future__ import annotations
import numpy
import numpy.typing
import typing
__all__: list[str] = ['ContractViolation', 'DictBridge', 'EntityRng', 'EventBudgetExceeded', 'HandlerContext', 'HandlerError', 'HandlerEvent', 'HandlerRng', 'Simulation', 'VectorSimulation', 'executor_names', 'handler_abi', 'max_num_threads', 'model_names', 'num_threads_range', 'plugin_abi_version', 'register_plugin', 'workload_spec']
class ContractViolation(RuntimeError):
    """
    A model broke the event-locality contract. Attributes: entity, kind, time, target, event_time.
    """
class HandlerError(RuntimeError):
    """
    A model handler raised. Attributes: entity, kind, time. The env needs reset().
    """
class EventBudgetExceeded(RuntimeError):
    """
    A step handled more events than its event budget (a runaway cascade?).
    """
class EntityRng:
    """
    Philox4x64-10 stream of one entity: numpy.random.Philox(key=seed | entity << 64).
    """
    def __init__(self, seed: typing.SupportsInt | typing.SupportsIndex, entity: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def below(self, n: typing.SupportsInt | typing.SupportsIndex) -> int:
        ...
    def exponential(self, mean: typing.SupportsFloat | typing.SupportsIndex) -> float:
        ...
    def raw(self, n: typing.SupportsInt | typing.SupportsIndex) -> numpy.typing.NDArray[numpy.uint64]:
        ...
    def uniform(self) -> float:
        ...
    @property
    def blocks(self) -> int:
        ...
    @property
    def used(self) -> int:
        ...
class Simulation:
    """
    One instance of a registered model on an executor: the low-level runtime object under every seer_env env.
    """
    @typing.overload
    def __init__(self, model: str, config: dict = {}, *, executor: str = 'serial', num_threads: typing.Any = 1, check: bool = False, event_budget: typing.Any = 50000000, decisions: typing.Any = None) -> None:
        """
        A Simulation of the registered C++ model `model` (seer_env.model_names()) with numeric `config`; num_threads in [1, max_num_threads()], event_budget: max events per step (0: unlimited).
        """
    @typing.overload
    def __init__(self, model: typing.Any, config: dict = {}, *, executor: str = 'serial', num_threads: typing.Any = 1, check: bool = False, event_budget: typing.Any = 50000000, decisions: typing.Any = None) -> None:
        """
        A Simulation of a seer_env.PythonModel instance (serial executor only, unless it is a compiled seer_env.NumbaModel).
        """
    def _plant_early_release_for_testing(self) -> None:
        """
        Test hook: a waiting agent's events run before its action arrives (a planted bug the decision equivalence tests must catch).
        """
    def _stall_worker_for_testing(self, worker: typing.SupportsInt | typing.SupportsIndex, microseconds: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        Test hook (parallel executor): worker `worker` sleeps this long at the start of every round, as if it had lost its core (0: off), so that the adaptive pool sheds threads (tests, bench.memory's shed rows).
        """
    def action_masks(self) -> numpy.typing.NDArray[numpy.bool]:
        """
        Fresh bool[num_agents, n] action masks (True: valid) of a model that declares action_mask: every agent's at the last boundary; with decisions, an asking agent's row is its mask when it asked. ValueError for a model without one.
        """
    def advance(self) -> str:
        """
        Event-driven decisions: run until agents wait for actions ('decisions': requests()) or the step ends ('boundary': every output written, as after step()).
        """
    def answer(self, actions: typing.Any) -> None:
        """
        The waiting agents' actions, one row per requests() entry, in its order.
        """
    def check_next_steps(self, steps: typing.Any) -> None:
        """
        Run the contract checks on the next `steps` steps (across resets; 0: none beyond `check`), one handler at a time (on the caller alone, or a serial stand-in for a comparison executor). Outputs are byte-identical with checking on or off; only the cost changes.
        """
    def checked_counts(self) -> dict:
        """
        Handlers run under a contract check (check=True, check_steps, check_contract) since this Simulation was made: {'on_init', 'on_step_begin' (None when the model has none), 'on_action': counts, 'events': {kind: count}}. Unchecked steps are not counted.
        """
    def digest(self) -> int:
        """
        64-bit hash of every entity state, stream, counter and pending event.
        """
    def entity_states(self) -> numpy.typing.NDArray[numpy.uint8]:
        """
        Copy of every entity's state bytes, uint8[num_entities, state_size].
        """
    def infos(self) -> numpy.typing.NDArray[numpy.int64]:
        """
        Fresh int64[num_agents, len(spec['info_keys'])] info counters of the last step.
        """
    def load(self, blob: typing.Any) -> None:
        """
        Continue from a save() of the same model and config (any bytes-like object, read in place); ValueError, changing nothing, for a corrupt save or another config's.
        """
    def observations(self) -> numpy.typing.NDArray[numpy.float32]:
        """
        Fresh float32[num_agents, obs_dim] observations of the last boundary.
        """
    def output_views(self) -> tuple[numpy.typing.NDArray[numpy.float32], numpy.typing.NDArray[numpy.float64], numpy.typing.NDArray[numpy.uint8], numpy.typing.NDArray[numpy.uint8], numpy.typing.NDArray[numpy.int64]]:
        """
        (observations, rewards, terminations (uint8), truncations (uint8), infos): read-only views of the last boundary's buffers, overwritten by the next step (private: the dict API copies what it returns).
        """
    def pending_events(self) -> dict:
        """
        Pending events in key order, as a dict of arrays.
        """
    def prewake(self) -> None:
        """
        Hint that step() follows soon: wakes parked worker threads now, so the wake-up overlaps the caller's own work (a policy forward pass, action checks). Changes no result; cheap when nothing is parked.
        """
    def release_threads(self) -> None:
        """
        Join this env's worker threads now (close()); the next step starts fresh ones.
        """
    def request_interrupt(self) -> None:
        """
        Stop the reset/step running in another thread (it raises KeyboardInterrupt; the env then needs reset()). Thread-safe; no effect when nothing runs.
        """
    def requests(self) -> tuple[numpy.typing.NDArray[numpy.int64], numpy.typing.NDArray[numpy.float64]]:
        """
        (agents int64[k], times float64[k]): the agents waiting for actions, by (time, agent).
        """
    def reset(self, seed: typing.Any) -> None:
        """
        Start an episode with this seed (0 <= seed < 2**64).
        """
    def rewards(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        Fresh float64[num_agents] rewards of the last step.
        """
    def run_until(self, t: typing.SupportsFloat | typing.SupportsIndex) -> None:
        """
        Step without actions until the clock reaches t.
        """
    def save(self) -> bytes:
        """
        Everything needed to continue identically, on any executor (see load): a flat, checksummed snapshot written with plain copies (about the live state's size).
        """
    def set_executor(self, executor: str, num_threads: typing.Any = 1) -> None:
        """
        Switch executor between steps (outputs never depend on it).
        """
    def start_on_one_thread(self, why: str) -> None:
        """
        The next steps run on one thread (the serial loop) until a probe of more threads runs clean, as after a confirmed shed (`why` starts the thread decision). For a pool size chosen while the CPUs were busy; no effect on other executors.
        """
    def state(self) -> numpy.typing.NDArray[numpy.float32]:
        """
        Fresh float32[state_dim] global state of the last boundary.
        """
    def step(self, actions: typing.Any, alive: typing.Any = None) -> None:
        """
        One step: int64[num_agents] (Discrete) or float32[num_agents, dim] (Box) actions.
        """
    def terminations(self) -> numpy.typing.NDArray[numpy.bool]:
        """
        Fresh bool[num_agents] terminations of the last step.
        """
    def totals(self) -> dict:
        """
        The model's env-wide counters (spec['total_keys']) as a dict of ints.
        """
    def truncations(self) -> numpy.typing.NDArray[numpy.bool]:
        """
        Fresh bool[num_agents] truncations of the last step.
        """
    @property
    def busy(self) -> bool:
        """
        True while a call on this Simulation runs (in another thread, or this is one of its handlers): other calls are refused meanwhile.
        """
    @property
    def check(self) -> bool:
        """
        Whether every step runs the contract checks (check_next_steps: only the next few).
        """
    @property
    def checked_steps_left(self) -> int:
        """
        Steps that check_next_steps() still has to check.
        """
    @property
    def config(self) -> dict:
        """
        The config the Simulation was built with.
        """
    @property
    def decision_window(self) -> tuple[float, float]:
        """
        [begin, end) of the lookahead window the waiting requests are due in.
        """
    @property
    def decisions(self) -> str:
        """
        How agents act: 'lockstep', 'windows' or 'one_at_a_time'.
        """
    @property
    def event_budget(self) -> int:
        """
        Max events in one step (0: unlimited).
        """
    @property
    def events_processed(self) -> int:
        """
        Events handled since the last reset.
        """
    @property
    def executor(self) -> str:
        """
        Name of the current executor.
        """
    @property
    def generation(self) -> int:
        """
        Completed reset() and load() calls: the env wrappers compare it to see a load made behind their back.
        """
    @property
    def last_step(self) -> dict:
        """
        What the last step did: events, cross_events, rounds, ready (entities the parallel executor's rounds found ready, summed over rounds; 0 for the serial loop), queue_reads (entity queue lines it read: each entity's at the step's begin, then the ready ones'), seconds, threads (it ran on; 0 before the first step), parked_waits (waits that parked a thread), thread_decision (why that many, when the executor adapts at run time).
        """
    @property
    def model(self) -> str:
        """
        The model's name.
        """
    @property
    def needs_reset(self) -> bool:
        """
        True after a failed step: only reset() or load() may follow.
        """
    @property
    def now(self) -> float:
        """
        Simulated time of the last boundary.
        """
    @property
    def num_threads(self) -> int:
        """
        Threads of the current executor (the calling thread included).
        """
    @property
    def pending_count(self) -> int:
        """
        Events scheduled and not yet handled.
        """
    @property
    def pending_limit(self) -> int:
        """
        The memory guard: most events pending at once during a step (half of the memory available when it was made, at 152 B an event); a cascade past it raises EventBudgetExceeded.
        """
    @property
    def spec(self) -> dict:
        """
        The model's spec: agents, spaces, info and total keys, lookahead, dt.
        """
    @property
    def steps(self) -> int:
        """
        Steps since the last reset.
        """
class VectorSimulation:
    """
    num_envs instances of one model, stepped in one call; with the parallel executor they share one thread pool and one executive list.
    """
    @typing.overload
    def __init__(self, model: str, config: dict, num_envs: typing.Any, *, executor: str = 'serial', num_threads: typing.Any = 1, check: bool = False, event_budget: typing.Any = 50000000, memory_copies: typing.Any = None) -> None:
        """
        num_envs (1..65536) instances of the registered model `model`; options as Simulation. memory_copies: instances the memory check counts (default num_envs; an async env's first batch counts them all).
        """
    @typing.overload
    def __init__(self, model: typing.Any, config: dict, num_envs: typing.Any, *, executor: str = 'serial', num_threads: typing.Any = 1, check: bool = False, event_budget: typing.Any = 50000000, memory_copies: typing.Any = None) -> None:
        """
        num_envs (1..65536) instances of a compiled seer_env.NumbaModel instance (each with its own state); config must be empty; options and memory_copies as for a registered model.
        """
    def check_next_steps(self, steps: typing.Any) -> None:
        """
        Run the contract checks on the next `steps` steps of every instance (as Simulation.check_next_steps); a checked instance steps alone, before the batch.
        """
    def checked_steps_left(self, index: typing.SupportsInt | typing.SupportsIndex) -> int:
        """
        Steps instance `index` still has to check.
        """
    def close(self) -> None:
        """
        Join the background thread. A background step in flight is interrupted, not waited for: its results are dropped and every instance it stepped or reset needs a reset (failed_instances lists them). RuntimeError while a call runs in another thread.
        """
    def digest(self, index: typing.SupportsInt | typing.SupportsIndex) -> int:
        """
        64-bit hash of instance `index` (as Simulation.digest).
        """
    def entity_states(self, index: typing.SupportsInt | typing.SupportsIndex) -> numpy.typing.NDArray[numpy.uint8]:
        """
        Copy of instance `index`'s entity state bytes (as Simulation.entity_states).
        """
    def last_step(self, index: typing.SupportsInt | typing.SupportsIndex) -> dict:
        """
        What instance `index`'s last step did (as Simulation.last_step).
        """
    def load(self, index: typing.SupportsInt | typing.SupportsIndex, blob: typing.Any) -> None:
        """
        Load a save() into instance `index`.
        """
    def needs_reset(self, index: typing.SupportsInt | typing.SupportsIndex) -> bool:
        """
        Whether instance `index` failed and needs a reset.
        """
    def prewake(self) -> None:
        """
        Hint that step() follows soon: wakes parked worker threads now.
        """
    def release_threads(self) -> None:
        """
        Join the worker threads now (close()); the next step starts fresh ones.
        """
    def request_interrupt(self) -> None:
        """
        Stop the step running in another thread. Thread-safe.
        """
    def save(self, index: typing.SupportsInt | typing.SupportsIndex) -> bytes:
        """
        Save instance `index` (as Simulation.save).
        """
    def start_on_one_thread(self, why: str) -> None:
        """
        The next batch steps run on one thread (the serial loop) until a probe of more threads runs clean, as after a confirmed shed (`why` starts the thread decision). For a pool size chosen while the CPUs were busy; no effect on other executors.
        """
    def states(self) -> numpy.typing.NDArray[numpy.float32]:
        """
        Fresh float32[num_envs, state_dim]: every instance's global state of the last boundary (as Simulation.state).
        """
    def step(self, actions: typing.Any, alive: typing.Any, modes: typing.Any, seeds: typing.Any) -> None:
        """
        Step (mode 0), reset (1, with seeds[i]) or skip (2) each instance, in one call. Raises the first failure; failed_instances lists all.
        """
    def step_async(self, actions: typing.Any, alive: typing.Any, modes: typing.Any, seeds: typing.Any) -> None:
        """
        step() on a background thread: returns at once (the inputs are copied); step_wait() waits for it and raises its failures. Until then the outputs and every other call are refused.
        """
    def step_wait(self) -> None:
        """
        Wait for the step_async() in flight (GIL released) and raise its first failure; failed_instances lists all.
        """
    def steps(self, index: typing.SupportsInt | typing.SupportsIndex) -> int:
        """
        Steps of instance `index` since its last reset.
        """
    @property
    def action_masks(self) -> numpy.typing.NDArray[numpy.bool]:
        """
        Read-only bool view [num_envs * num_agents, n] of the batch action masks (True: valid) of a model that declares action_mask; ValueError for one without.
        """
    @property
    def busy(self) -> bool:
        """
        True while a call on this VectorSimulation runs.
        """
    @property
    def failed_instances(self) -> list[int]:
        """
        Indices of the instances whose last step failed (they need a reset).
        """
    @property
    def in_flight(self) -> bool:
        """
        A step_async() has not been waited for.
        """
    @property
    def infos(self) -> numpy.ndarray:
        """
        Read-only view of the int64 batch info buffer.
        """
    @property
    def num_envs(self) -> int:
        """
        Number of instances.
        """
    @property
    def num_threads(self) -> int:
        """
        Threads of the shared executor (the calling thread included).
        """
    @property
    def observations(self) -> numpy.ndarray:
        """
        Read-only view of the batch observation buffer (copy it to keep it).
        """
    @property
    def pending_limit(self) -> int:
        """
        The memory guard of each instance (Simulation.pending_limit, shared among the instances).
        """
    @property
    def rewards(self) -> numpy.ndarray:
        """
        Read-only view of the float64 batch reward buffer.
        """
    @property
    def spec(self) -> dict:
        """
        The model's spec (one instance's).
        """
    @property
    def terminations(self) -> numpy.ndarray:
        """
        Read-only view of the uint8 batch termination buffer.
        """
    @property
    def truncations(self) -> numpy.ndarray:
        """
        Read-only view of the uint8 batch truncation buffer.
        """
class DictBridge:
    """
    Builds the PettingZoo dict API's per-agent objects in C++ (private).
    """
    def __init__(self, names: list, info_keys: list, discrete: bool, act_dim: typing.SupportsInt | typing.SupportsIndex, act_n: typing.SupportsInt | typing.SupportsIndex, low: typing.SupportsFloat | typing.SupportsIndex, high: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    def actions(self, actions: dict, live: list) -> typing.Any:
        """
        (actions, alive or None) from a well-formed action dict, else None.
        """
    def live_rows(self, live: list) -> typing.Any:
        """
        None when live is possible_agents in order, else each live agent's row (int64); ValueError for a name twice or one that is no agent's.
        """
    def reset_outputs(self, live: list, obs: numpy.ndarray, infos: numpy.ndarray) -> tuple:
        """
        (observations, infos) dicts keyed by live.
        """
    def step_outputs(self, live: list, obs: numpy.ndarray, rewards: numpy.ndarray, terminations: numpy.ndarray, truncations: numpy.ndarray, infos: numpy.ndarray, truncate_all: bool) -> tuple:
        """
        (obs, rewards, terminations, truncations, infos) dicts keyed by live, and the agents left.
        """
    @property
    def index(self) -> dict:
        """
        agent name -> row: the bridge's own dict, shared (do not change it).
        """
class HandlerContext:
    """
    What a PythonModel handler may do: the runtime's Context.
    """
    def request_decision(self) -> None:
        """
        Ask for this agent's next action (a model with decisions = True): the agent waits from now, its later events held, until on_action runs with the action at this time.
        """
    def schedule(self, target: typing.SupportsInt | typing.SupportsIndex, time: typing.SupportsFloat | typing.SupportsIndex, kind: typing.SupportsInt | typing.SupportsIndex, payload: typing.Any = None) -> None:
        """
        Schedule `kind` for `target` at `time` (>= now for self, >= now + lookahead for others) with an optional payload record (<= 64 bytes).
        """
    @property
    def now(self) -> float:
        """
        Simulated time of this handler.
        """
    @property
    def rng(self) -> typing.Any:
        """
        This entity's random stream (Philox4x64, as in C++).
        """
    @property
    def self(self) -> int:
        """
        The entity this handler runs for.
        """
    @property
    def snapshot(self) -> typing.Any:
        """
        Read-only public records of every entity at the last boundary.
        """
class HandlerRng:
    """
    The handler entity's own random stream.
    """
    def below(self, n: typing.SupportsInt | typing.SupportsIndex) -> int:
        ...
    def exponential(self, mean: typing.SupportsFloat | typing.SupportsIndex) -> float:
        ...
    def next_u64(self) -> int:
        ...
    def uniform(self) -> float:
        ...
class HandlerEvent:
    """
    The event an on_event handler handles.
    """
    def __repr__(self) -> str:
        ...
    @property
    def kind(self) -> int:
        ...
    @property
    def payload(self) -> typing.Any:
        """
        The payload record (payload_dtype), or 64 raw bytes without one.
        """
    @property
    def seq(self) -> int:
        ...
    @property
    def source(self) -> int:
        ...
    @property
    def target(self) -> int:
        ...
    @property
    def time(self) -> float:
        ...
def _dict_entries(use: bool | None = None) -> bool:
    """
    Whether DictBridge reads its own dicts' items in place (tests switch it off and on).
    """
def _register_comparison_executors() -> None:
    """
    Registers the comparison executors (locked, barrier). For the bench and the tests.
    """
def _register_test_models() -> None:
    """
    Registers the test-only models (faulty). For seer_env's own tests.
    """
def executor_names() -> list[str]:
    """
    Names of the available executors.
    """
def handler_abi() -> dict:
    """
    Addresses of the compiled-handler context functions (cpp/src/handler_abi.h), by symbol name, and the ABI version.
    """
def max_num_threads() -> int:
    """
    The most threads an executor may use: 8 per CPU this process may use, at least 64.
    """
def model_names() -> list[str]:
    """
    Names of the registered models.
    """
def num_threads_range() -> str:
    """
    The range num_threads must be in, as the errors state it: '[1, max_num_threads()] (8 per usable CPU, at least 64)'.
    """
def register_plugin(name: str, plugin: typing.Any) -> None:
    """
    Register a compiled model plugin (a ModelPlugin capsule) under `name`.
    """
def workload_spec(name: str) -> dict:
    """
    The declaration of registered model `name` as plain data: name, summary, params (name, type 'int'/'real', default (None: computed, see default_doc), low, high, low_open, high_is_cap, doc), spaces (observation/action/state: shape, dtype, bounds as text), info_keys, total_keys, event_kinds, decisions, action_mask (agents' valid actions vary), records (name -> a dict numpy.dtype() accepts). ValueError for an unknown name.
    """
plugin_abi_version: int = 6
