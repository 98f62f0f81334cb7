// seer_env._core.Simulation: one env instance of a registered model.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <type_traits>

#include "bindings.hpp"
#include "live_objects.hpp"
#include "model_registry.hpp"
#include "models/numba_model.hpp"
#include "models/python_model.hpp"
#include "parallel_executor.hpp"
#include "platform.hpp"
#include "seer/errors.hpp"
#include "simulation.hpp"
#include "simulation/convert.hpp"
#include "simulation/interrupt.hpp"

namespace py = pybind11;

namespace seer::bindings {

namespace {

// The Python-facing object: a Simulation plus a concurrency guard; live for
// the fork handler.
struct PySimulation {
  PySimulation() { live_objects<PySimulation>().insert(this); }
  ~PySimulation() { live_objects<PySimulation>().erase(this); }
  PySimulation(const PySimulation&) = delete;
  PySimulation& operator=(const PySimulation&) = delete;

  std::unique_ptr<Simulation> sim;
  std::string model_name;
  py::dict config;
  bool python_model = false;  // a seer_env.PythonModel: serial executor only
  std::atomic<bool> busy{false};
};

// In a child forked while another thread was inside a call on an env, that
// call never returns here: clear its busy flag and make reset() rebuild the
// torn state. Runs in the child right after fork() (only flag stores).
void after_fork_in_child() {
  for (PySimulation* self : live_objects<PySimulation>()) {
    if (self->busy.load(std::memory_order_relaxed) && self->sim) {
      self->sim->forget_call_in_flight();
      self->busy.store(false, std::memory_order_relaxed);
    }
  }
}

// The `decisions` argument: how agents act (simulation.hpp's DecisionMode);
// None: as `model` declares (lockstep, or windows for a model that asks).
DecisionMode to_decision_mode(const py::object& value, const Model& model) {
  if (value.is_none()) {
    return model.spec().decisions ? DecisionMode::kWindows : DecisionMode::kLockstep;
  }
  if (!py::isinstance<py::str>(value)) {
    throw std::invalid_argument(
        "decisions must be None, 'lockstep', 'windows' or 'one_at_a_time', got " +
        py::repr(value).cast<std::string>());
  }
  const auto name = value.cast<std::string>();
  if (name == "lockstep") return DecisionMode::kLockstep;
  if (name == "windows") return DecisionMode::kWindows;
  if (name == "one_at_a_time") return DecisionMode::kOneAtATime;
  throw std::invalid_argument(
      "decisions must be None, 'lockstep', 'windows' or 'one_at_a_time', got '" + name + "'");
}

const char* decision_mode_name(DecisionMode mode) {
  switch (mode) {
    case DecisionMode::kWindows:
      return "windows";
    case DecisionMode::kOneAtATime:
      return "one_at_a_time";
    default:
      return "lockstep";
  }
}

void answer(PySimulation& self, const py::object& actions) {
  BusyGuard guard(self.busy, "answer");
  Simulation& sim = *self.sim;
  const ModelSpec& s = sim.spec();
  const std::size_t rows = sim.requests().size();
  const py::array arr = action_array(s, actions, rows);
  check_action_values(s, arr, rows, nullptr);
  const void* data = arr.data();
  SigintScope sigint(sim);
  py::gil_scoped_release release;
  sim.answer(data);
}

void step(PySimulation& self, const py::object& actions, const py::object& alive) {
  BusyGuard guard(self.busy, "step");
  Simulation& sim = *self.sim;
  const ModelSpec& s = sim.spec();
  const py::array arr = action_array(s, actions, s.num_agents);
  const auto alive_arr = mask_array(alive, s.num_agents, "alive");
  const std::uint8_t* alive_ptr = alive.is_none() ? nullptr : alive_arr.data();
  check_action_values(s, arr, s.num_agents, alive_ptr);
  const void* data = arr.data();
  SigintScope sigint(sim);
  py::gil_scoped_release release;
  sim.step(data, alive_ptr);
}

}  // namespace

void bind_simulation(py::module_& m) {
  static const bool fork_handler = platform::on_fork_in_child(after_fork_in_child);
  (void)fork_handler;
  m.def("model_names", &model_names, "Names of the registered models.");
  m.def("executor_names", &executor_names, "Names of the available executors.");
  m.def("max_num_threads", &max_num_threads,
        "The most threads an executor may use: 8 per CPU this process may use, at least 64.");
  m.def("num_threads_range", &num_threads_range,
        "The range num_threads must be in, as the errors state it: '[1, max_num_threads()] (8 "
        "per usable CPU, at least 64)'.");

  py::class_<PySimulation>(m, "Simulation",
                           "One instance of a registered model on an executor: the low-level "
                           "runtime object under every seer_env env.")
      .def(py::init([](const std::string& model, const py::dict& config,
                       const std::string& executor, const py::object& num_threads, bool check,
                       const py::object& event_budget, const py::object& decisions) {
             auto self = std::make_unique<PySimulation>();
             SimulationOptions options = to_options(executor, num_threads, check, event_budget);
             std::map<std::string, double> used;
             std::unique_ptr<Model> built = make_model(model, to_config(config), &used);
             options.decisions = to_decision_mode(decisions, *built);
             self->sim = std::make_unique<Simulation>(std::move(built), options);
             self->sim->set_config(std::move(used));
             self->model_name = model;
             self->config = config;
             return self;
           }),
           py::arg("model"), py::arg("config") = py::dict(), py::kw_only(),
           py::arg("executor") = "serial", py::arg("num_threads") = 1, py::arg("check") = false,
           py::arg("event_budget") = 50'000'000, py::arg("decisions") = py::none(),
           "A Simulation of the registered C++ model `model` (seer_env.model_names()) with "
           "numeric `config`; num_threads in [1, max_num_threads()], event_budget: max events per step "
           "(0: unlimited).")
      .def(py::init([](const py::object& model, const py::dict& config,
                       const std::string& executor, const py::object& num_threads, bool check,
                       const py::object& event_budget, const py::object& decisions) {
             if (!config.empty()) {
               throw std::invalid_argument(
                   "config must be empty for a PythonModel instance (configure it in its "
                   "constructor)");
             }
             SimulationOptions options = to_options(executor, num_threads, check, event_budget);
             // A compiled NumbaModel runs on any executor; Python handlers serially.
             std::unique_ptr<Model> compiled = make_compiled_model(model);
             const bool python_model = compiled == nullptr;
             if (python_model) {
               require_serial_for_python(options.executor, options.num_threads);
               options.executor = "serial";
               options.num_threads = 1;
             }
             std::unique_ptr<Model> built =
                 python_model ? make_python_model(model) : std::move(compiled);
             options.decisions = to_decision_mode(decisions, *built);
             auto self = std::make_unique<PySimulation>();
             self->sim = std::make_unique<Simulation>(std::move(built), options);
             self->model_name = self->sim->spec().name;
             self->python_model = python_model;
             return self;
           }),
           py::arg("model"), py::arg("config") = py::dict(), py::kw_only(),
           py::arg("executor") = "serial", py::arg("num_threads") = 1, py::arg("check") = false,
           py::arg("event_budget") = 50'000'000, py::arg("decisions") = py::none(),
           "A Simulation of a seer_env.PythonModel instance (serial executor only, unless it is a "
           "compiled seer_env.NumbaModel).")
      .def("reset",
           [](PySimulation& self, const py::object& seed) {
             const std::uint64_t s = to_seed(seed);
             BusyGuard guard(self.busy, "reset");
             SigintScope sigint(*self.sim);
             py::gil_scoped_release release;
             self.sim->reset(s);
           },
           py::arg("seed"), "Start an episode with this seed (0 <= seed < 2**64).")
      .def("step", &step, py::arg("actions"), py::arg("alive") = py::none(),
           "One step: int64[num_agents] (Discrete) or float32[num_agents, dim] (Box) actions.")
      .def("advance",
           [](PySimulation& self) {
             BusyGuard guard(self.busy, "advance");
             Simulation& sim = *self.sim;
             SigintScope sigint(sim);
             py::gil_scoped_release release;
             return sim.advance() == Simulation::Progress::kDecisions ? "decisions" : "boundary";
           },
           "Event-driven decisions: run until agents wait for actions ('decisions': requests()) "
           "or the step ends ('boundary': every output written, as after step()).")
      .def("answer", &answer, py::arg("actions"),
           "The waiting agents' actions, one row per requests() entry, in its order.")
      .def("requests",
           [](PySimulation& self) {
             const auto& requests = self.sim->requests();
             py::array_t<std::int64_t> agents(static_cast<py::ssize_t>(requests.size()));
             py::array_t<double> times(static_cast<py::ssize_t>(requests.size()));
             auto a = agents.mutable_unchecked<1>();
             auto t = times.mutable_unchecked<1>();
             for (std::size_t k = 0; k < requests.size(); ++k) {
               a(static_cast<py::ssize_t>(k)) = requests[k].agent;
               t(static_cast<py::ssize_t>(k)) = requests[k].time;
             }
             return py::make_tuple(agents, times);
           },
           "(agents int64[k], times float64[k]): the agents waiting for actions, by (time, agent).")
      .def("_plant_early_release_for_testing",
           [](PySimulation& self) {
             BusyGuard guard(self.busy, "_plant_early_release_for_testing");
             self.sim->plant_early_release_for_testing();
           },
           "Test hook: a waiting agent's events run before its action arrives (a planted bug "
           "the decision equivalence tests must catch).")
      .def_property_readonly(
          "decisions",
          [](PySimulation& self) { return decision_mode_name(self.sim->options().decisions); },
          "How agents act: 'lockstep', 'windows' or 'one_at_a_time'.")
      .def_property_readonly(
          "decision_window",
          [](PySimulation& self) {
            return py::make_tuple(self.sim->window_begin(), self.sim->window_end());
          },
          "[begin, end) of the lookahead window the waiting requests are due in.")
      .def("release_threads",
           [](PySimulation& self) {
             BusyGuard guard(self.busy, "release_threads");
             self.sim->executor().release_threads();
           },
           "Join this env's worker threads now (close()); the next step starts fresh ones.")
      .def("_stall_worker_for_testing",
           [](PySimulation& self, unsigned worker, std::int64_t microseconds) {
             BusyGuard guard(self.busy, "_stall_worker_for_testing");
             auto* parallel = dynamic_cast<ParallelExecutor*>(&self.sim->executor());
             if (parallel == nullptr) {
               throw std::invalid_argument("_stall_worker_for_testing: not a parallel executor");
             }
             parallel->engine().set_stall_for_testing(
                 worker, std::chrono::microseconds(std::max<std::int64_t>(0, microseconds)));
           },
           py::arg("worker"), py::arg("microseconds"),
           "Test hook (parallel executor): worker `worker` sleeps this long at the start of "
           "every round, as if it had lost its core (0: off), so that the adaptive pool sheds "
           "threads (tests, bench.memory's shed rows).")
      .def("start_on_one_thread",
           [](PySimulation& self, const std::string& why) {
             BusyGuard guard(self.busy, "start_on_one_thread");
             self.sim->executor().start_on_one_thread(why);
           },
           py::arg("why"),
           "The next steps run on one thread (the serial loop) until a probe of more threads "
           "runs clean, as after a confirmed shed (`why` starts the thread decision). For a "
           "pool size chosen while the CPUs were busy; no effect on other executors.")
      .def("prewake",
           [](PySimulation& self) {
             // Busy: a step is running, its workers are awake anyway.
             if (idle_under_gil(self.busy)) self.sim->executor().prewake();
           },
           "Hint that step() follows soon: wakes parked worker threads now, so the "
           "wake-up overlaps the caller's own work (a policy forward pass, action "
           "checks). Changes no result; cheap when nothing is parked.")
      .def("run_until",
           [](PySimulation& self, double t) {
             if (!std::isfinite(t)) {
               throw std::invalid_argument("t must be finite, got " + std::to_string(t));
             }
             BusyGuard guard(self.busy, "run_until");
             SigintScope sigint(*self.sim);
             py::gil_scoped_release release;
             self.sim->run_until(t);
           },
           py::arg("t"), "Step without actions until the clock reaches t.")
      .def("request_interrupt",
           [](PySimulation& self) { self.sim->request_interrupt(); },
           "Stop the reset/step running in another thread (it raises KeyboardInterrupt; the env "
           "then needs reset()). Thread-safe; no effect when nothing runs.")
      .def("set_executor",
           [](PySimulation& self, const std::string& executor, const py::object& num_threads) {
             const unsigned threads = to_num_threads(num_threads);
             if (self.python_model) require_serial_for_python(executor, threads);
             BusyGuard guard(self.busy, "set_executor");
             self.sim->set_executor(executor, threads);
           },
           py::arg("executor"), py::arg("num_threads") = 1,
           "Switch executor between steps (outputs never depend on it).")
      .def("check_next_steps",
           [](PySimulation& self, const py::object& steps) {
             const std::uint64_t n = to_count(steps, "steps", 0, ~std::uint64_t{0});
             BusyGuard guard(self.busy, "check_next_steps");
             self.sim->check_next_steps(n);
           },
           py::arg("steps"),
           "Run the contract checks on the next `steps` steps (across resets; 0: none beyond "
           "`check`), one handler at a time (on the caller alone, or a serial stand-in for a "
           "comparison executor). Outputs are byte-identical with checking on or off; only the "
           "cost changes.")
      .def_property_readonly("checked_steps_left",
                             [](PySimulation& self) { return self.sim->checked_steps_left(); },
                             "Steps that check_next_steps() still has to check.")
      .def("digest",
           [](PySimulation& self) {
             require_idle(self.busy, "digest");
             return self.sim->digest();
           },
           "64-bit hash of every entity state, stream, counter and pending event.")
      .def("save",
           [](PySimulation& self) {
             // Guarded: a save taken while a step runs would mix two boundaries.
             BusyGuard guard(self.busy, "save");
             return save_to_bytes(*self.sim);
           },
           "Everything needed to continue identically, on any executor (see load): a flat, "
           "checksummed snapshot written with plain copies (about the live state's size).")
      .def("load",
           [](PySimulation& self, const py::object& blob) {
             BusyGuard guard(self.busy, "load");
             load_from_buffer(*self.sim, blob);
           },
           py::arg("blob"),
           "Continue from a save() of the same model and config (any bytes-like object, read "
           "in place); ValueError, changing nothing, for a corrupt save or another config's.")
      .def("observations",
           [](PySimulation& self) {
             require_idle(self.busy, "observations");
             const ModelSpec& s = self.sim->spec();
             return copy_array(self.sim->outputs().observations,
                               {static_cast<py::ssize_t>(s.num_agents),
                                static_cast<py::ssize_t>(s.obs_dim)});
           },
           "Fresh float32[num_agents, obs_dim] observations of the last boundary.")
      .def("action_masks",
           [](PySimulation& self) {
             require_idle(self.busy, "action_masks");
             const ModelSpec& s = self.sim->spec();
             if (!s.action_mask) {
               throw std::invalid_argument("action_masks(): model " + s.name +
                                           " declares no action_mask (every action is valid)");
             }
             // array_t<bool>: the stub says NDArray[bool] (astype already made it bool: no copy).
             return py::array_t<bool>(
                 copy_array(self.sim->outputs().action_masks,
                            {static_cast<py::ssize_t>(s.num_agents),
                             static_cast<py::ssize_t>(s.action.n)})
                     .attr("astype")("bool"));
           },
           "Fresh bool[num_agents, n] action masks (True: valid) of a model that declares "
           "action_mask: every agent's at the last boundary; with decisions, an asking "
           "agent's row is its mask when it asked. ValueError for a model without one.")
      .def("rewards",
           [](PySimulation& self) {
             require_idle(self.busy, "rewards");
             return copy_array(self.sim->outputs().rewards, {static_cast<py::ssize_t>(self.sim->spec().num_agents)});
           },
           "Fresh float64[num_agents] rewards of the last step.")
      .def("terminations",
           [](PySimulation& self) {
             require_idle(self.busy, "terminations");
             // array_t<bool>: the stub says NDArray[bool] (astype already made it bool: no copy).
             return py::array_t<bool>(
                 copy_array(self.sim->outputs().terminations, {static_cast<py::ssize_t>(self.sim->spec().num_agents)})
                     .attr("astype")("bool"));
           },
           "Fresh bool[num_agents] terminations of the last step.")
      .def("truncations",
           [](PySimulation& self) {
             require_idle(self.busy, "truncations");
             // array_t<bool>: the stub says NDArray[bool] (astype already made it bool: no copy).
             return py::array_t<bool>(
                 copy_array(self.sim->outputs().truncations, {static_cast<py::ssize_t>(self.sim->spec().num_agents)})
                     .attr("astype")("bool"));
           },
           "Fresh bool[num_agents] truncations of the last step.")
      .def("infos",
           [](PySimulation& self) {
             require_idle(self.busy, "infos");
             const ModelSpec& s = self.sim->spec();
             return copy_array(self.sim->outputs().infos, {static_cast<py::ssize_t>(s.num_agents),
                                                   static_cast<py::ssize_t>(s.info_keys.size())});
           },
           "Fresh int64[num_agents, len(spec['info_keys'])] info counters of the last step.")
      .def("output_views",
           [](py::object self_obj) {
             PySimulation& self = self_obj.cast<PySimulation&>();
             require_idle(self.busy, "output_views");
             const ModelSpec& s = self.sim->spec();
             const Outputs& out = self.sim->outputs();
             const auto n = static_cast<py::ssize_t>(s.num_agents);
             // Read-only views that keep the Simulation alive; the next step
             // overwrites them: for callers that copy what they keep (the dict API).
             auto view = [&](auto* data, std::vector<py::ssize_t> shape) {
               using T = std::remove_const_t<std::remove_pointer_t<decltype(data)>>;
               py::array_t<T> a(shape, data, self_obj);
               py::detail::array_proxy(a.ptr())->flags &=
                   ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
               return a;
             };
             return py::make_tuple(
                 view(out.observations, {n, static_cast<py::ssize_t>(s.obs_dim)}),
                 view(out.rewards, {n}), view(out.terminations, {n}),
                 view(out.truncations, {n}),
                 view(out.infos, {n, static_cast<py::ssize_t>(s.info_keys.size())}));
           },
           "(observations, rewards, terminations (uint8), truncations (uint8), infos): "
           "read-only views of the last boundary's buffers, overwritten by the next step "
           "(private: the dict API copies what it returns).")
      .def("state",
           [](PySimulation& self) {
             require_idle(self.busy, "state");
             py::array_t<float> out(static_cast<py::ssize_t>(self.sim->spec().state_dim));
             self.sim->state(out.mutable_data());
             return out;
           },
           "Fresh float32[state_dim] global state of the last boundary.")
      .def("checked_counts",
           [](PySimulation& self) {
             require_idle(self.busy, "checked_counts");
             const auto& counts = self.sim->checked_counts();
             const ModelSpec& s = self.sim->spec();
             py::dict events;
             for (std::size_t k = 0; k < s.event_kinds.size(); ++k) {
               events[py::str(s.event_kinds[k])] = counts.events[k];
             }
             py::dict out;
             out["on_init"] = counts.init;
             // None: the model has no on_step_begin (the runtime never calls it).
             out["on_step_begin"] = self.sim->model().has_step_begin()
                                        ? py::object(py::int_(counts.step_begin))
                                        : py::object(py::none());
             out["on_action"] = counts.action;
             out["events"] = events;
             return out;
           },
           "Handlers run under a contract check (check=True, check_steps, check_contract) "
           "since this Simulation was made: {'on_init', 'on_step_begin' (None when the "
           "model has none), 'on_action': counts, 'events': {kind: count}}. Unchecked "
           "steps are not counted.")
      .def("entity_states",
           [](PySimulation& self) {
             require_idle(self.busy, "entity_states");
             Model& model = self.sim->model();
             const auto n = static_cast<py::ssize_t>(self.sim->spec().num_entities);
             const auto size = static_cast<py::ssize_t>(model.entity_state_size());
             py::array_t<std::uint8_t> out({n, size});
             for (py::ssize_t e = 0; e < n; ++e) {
               std::memcpy(out.mutable_data(e, 0), model.entity_state(static_cast<EntityId>(e)),
                           static_cast<std::size_t>(size));
             }
             return out;
           },
           "Copy of every entity's state bytes, uint8[num_entities, state_size].")
      .def("totals",
           [](PySimulation& self) {
             require_idle(self.busy, "totals");
             const ModelSpec& s = self.sim->spec();
             std::vector<std::int64_t> values(s.total_keys.size(), 0);
             self.sim->model().totals(values.data());
             py::dict out;
             for (std::size_t k = 0; k < values.size(); ++k) out[py::str(s.total_keys[k])] = values[k];
             return out;
           },
           "The model's env-wide counters (spec['total_keys']) as a dict of ints.")
      .def("pending_events",
           [](PySimulation& self) {
             require_idle(self.busy, "pending_events");
             const auto events = self.sim->pending_events();
             py::dict out;
             py::array_t<double> time(events.size());
             py::array_t<std::uint32_t> target(events.size()), source(events.size()),
                 kind(events.size());
             py::array_t<std::uint64_t> seq(events.size());
             for (std::size_t i = 0; i < events.size(); ++i) {
               time.mutable_data()[i] = events[i].time;
               target.mutable_data()[i] = events[i].target;
               source.mutable_data()[i] = events[i].source;
               seq.mutable_data()[i] = events[i].seq;
               kind.mutable_data()[i] = events[i].kind;
             }
             out["time"] = time;
             out["target"] = target;
             out["source"] = source;
             out["seq"] = seq;
             out["kind"] = kind;
             return out;
           },
           "Pending events in key order, as a dict of arrays.")
      .def_property_readonly("spec", [](PySimulation& self) { return spec_dict(self.sim->spec()); },
                             "The model's spec: agents, spaces, info and total keys, lookahead, dt.")
      .def_property_readonly("model", [](PySimulation& self) { return self.model_name; },
                             "The model's name.")
      .def_property_readonly("config", [](PySimulation& self) { return self.config; },
                             "The config the Simulation was built with.")
      .def_property_readonly("executor",
                             [](PySimulation& self) { return self.sim->options().executor; },
                             "Name of the current executor.")
      .def_property_readonly("num_threads",
                             [](PySimulation& self) { return self.sim->executor().num_threads(); },
                             "Threads of the current executor (the calling thread included).")
      .def_property_readonly("check", [](PySimulation& self) { return self.sim->options().check; },
                             "Whether every step runs the contract checks (check_next_steps: only the next few).")
      .def_property_readonly("event_budget",
                             [](PySimulation& self) { return self.sim->options().event_budget; },
                             "Max events in one step (0: unlimited).")
      .def_property_readonly(
          "generation", [](PySimulation& self) { return self.sim->generation(); },
          "Completed reset() and load() calls: the env wrappers compare it to see a load "
          "made behind their back.")
      .def_property_readonly(
          "pending_limit", [](PySimulation& self) { return self.sim->pending_limit(); },
          "The memory guard: most events pending at once during a step (half of the memory "
          "available when it was made, at 152 B an event); a cascade past it raises "
          "EventBudgetExceeded.")
      .def_property_readonly("now", [](PySimulation& self) { return self.sim->now(); },
                             "Simulated time of the last boundary.")
      .def_property_readonly("steps", [](PySimulation& self) { return self.sim->steps(); },
                             "Steps since the last reset.")
      .def_property_readonly("events_processed",
                             [](PySimulation& self) { return self.sim->events_processed(); },
                             "Events handled since the last reset.")
      .def_property_readonly("pending_count",
                             [](PySimulation& self) { return self.sim->pending_count(); },
                             "Events scheduled and not yet handled.")
      .def_property_readonly("busy",
                             [](PySimulation& self) { return !idle_under_gil(self.busy); },
                             "True while a call on this Simulation runs (in another thread, or "
                             "this is one of its handlers): other calls are refused meanwhile.")
      .def_property_readonly("needs_reset",
                             [](PySimulation& self) { return self.sim->needs_reset(); },
                             "True after a failed step: only reset() or load() may follow.")
      .def_property_readonly(
          "last_step", [](PySimulation& self) { return last_step_dict(*self.sim); }, kLastStepDoc);
}

}  // namespace seer::bindings
