// seer_env._core.VectorSimulation: many instances, one call per step.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "background_worker.hpp"
#include "bindings.hpp"
#include "live_objects.hpp"
#include "models/numba_model.hpp"
#include "platform.hpp"
#include "simulation/convert.hpp"
#include "simulation/interrupt.hpp"
#include "vector_simulation.hpp"

namespace py = pybind11;

namespace seer::bindings {
namespace {

// memory_copies: None (the batch's own instances) or a count of instances.
std::size_t to_memory_copies(const py::object& value) {
  return value.is_none() ? 0 : to_count(value, "memory_copies", 1, std::uint64_t{1} << 32);
}

// The inputs of a background step, owned by the binding until step_wait():
// the caller's arrays may change or die meanwhile.
struct PendingStep {
  std::vector<unsigned char> actions;
  std::vector<std::uint8_t> alive, modes;
  std::vector<std::uint64_t> seeds;
  bool has_alive = false;
  std::vector<std::exception_ptr> failures;
  std::exception_ptr fatal;  // VectorSimulation::step itself threw (bad_alloc, ...)
};

// The batch and its output buffers (numpy arrays the C++ writes into); live
// for the fork and exit handlers.
struct PyVectorSimulation {
  PyVectorSimulation() { live_objects<PyVectorSimulation>().insert(this); }
  ~PyVectorSimulation();
  PyVectorSimulation(const PyVectorSimulation&) = delete;
  PyVectorSimulation& operator=(const PyVectorSimulation&) = delete;

  std::unique_ptr<VectorSimulation> vec;
  py::array_t<float> observations;
  py::array_t<double> rewards;
  py::array_t<std::uint8_t> terminations, truncations;
  py::array_t<std::int64_t> infos;
  py::array_t<std::uint8_t> action_masks;  // [rows, n] for a model that declares action_mask
  std::vector<std::size_t> failed;
  std::atomic<bool> busy{false};
  // This process is a child forked while the step_async() in flight ran:
  // step_wait() raises (set by the fork handler).
  bool step_lost_to_fork = false;
  PendingStep pending;
  // Declared last: destroyed first, so its thread (which uses `vec` and
  // `pending`) is joined before they go.
  BackgroundWorker worker;
};

// In a child forked while a call ran on another thread (a step() or the
// background step), that call never returns here: clear the busy flag and
// make the next call rebuild the torn batch. A background step that had
// returned before the fork is whole: step_wait() returns it as usual. Only
// flag loads and stores.
void after_fork_in_child() {
  for (PyVectorSimulation* self : live_objects<PyVectorSimulation>()) {
    if (!self->busy.load(std::memory_order_relaxed)) continue;
    if (self->worker.in_flight() && !self->worker.job_unfinished_at_fork()) continue;
    self->vec->forget_call_in_flight();
    self->step_lost_to_fork = self->worker.in_flight();
    self->busy.store(false, std::memory_order_relaxed);
  }
}

// Drops the background step in flight, if any, instead of waiting for it:
// interrupts it, waits for its thread (GIL released when `release_gil`),
// and marks every instance it stepped or reset as needing a reset
// (failed_instances lists them). Its results are dropped. Then joins the
// background thread. A call running in another thread (busy without a
// background step) is refused, unless `refuse_busy` is false.
void drop_background_step(PyVectorSimulation& self, bool release_gil, bool refuse_busy) {
  const bool dropping = self.worker.in_flight() && !self.step_lost_to_fork;
  if (!dropping && refuse_busy && !idle_under_gil(self.busy)) throw call_in_progress("close");
  if (dropping) self.vec->request_interrupt();
  if (release_gil) {
    py::gil_scoped_release release;
    self.worker.stop();
  } else {
    self.worker.stop();
  }
  if (dropping) {
    self.failed.clear();
    const std::vector<std::uint8_t>& modes = self.pending.modes;
    for (std::size_t i = 0; i < modes.size(); ++i) {
      if (modes[i] == VectorSimulation::kSkip) continue;
      self.vec->at(i).require_reset();
      self.failed.push_back(i);
    }
    self.busy.store(false, std::memory_order_release);
  } else if (self.step_lost_to_fork) {
    self.step_lost_to_fork = false;  // the fork handler cleared busy
  }
}

// Whether the GIL may be released here: this thread holds it and the
// interpreter is not shutting down (module teardown).
bool may_release_gil() {
#if PY_VERSION_HEX >= 0x030D0000
  const bool finalizing = Py_IsFinalizing() != 0;
#else
  const bool finalizing = _Py_IsFinalizing() != 0;
#endif
  return PyGILState_Check() != 0 && !finalizing;
}

PyVectorSimulation::~PyVectorSimulation() {
  live_objects<PyVectorSimulation>().erase(this);
  // `del` or garbage collection with a step in flight: interrupt it rather
  // than wait for it (its results have nobody to go to).
  try {
    drop_background_step(*this, may_release_gil(), false);
  } catch (...) {  // a destructor must not throw (cannot happen: refuse_busy is false)
  }
}

// Interpreter exit (atexit, before module teardown): every background step
// still in flight is interrupted and waited for, GIL released.
void drop_background_steps_at_exit() {
  const auto& all = live_objects<PyVectorSimulation>();
  const std::vector<PyVectorSimulation*> live(all.begin(), all.end());
  for (PyVectorSimulation* self : live) drop_background_step(*self, true, false);
}

// The output buffers are written by a step in flight: refuse to show them.
void require_no_step_in_flight(const PyVectorSimulation& self) {
  if (self.worker.in_flight()) {
    throw CallOrderError("a background step is in flight; call step_wait() first");
  }
}

py::array readonly(const PyVectorSimulation& self, py::array a) {
  require_no_step_in_flight(self);
  py::array view = a[py::slice(py::none(), py::none(), py::none())];
  view.attr("flags").attr("writeable") = false;
  return view;
}

// Records the failed instances and raises the first failure.
void raise_failures(PyVectorSimulation& self, const std::vector<std::exception_ptr>& failures) {
  self.failed.clear();
  std::exception_ptr first;
  for (std::size_t i = 0; i < failures.size(); ++i) {
    if (failures[i]) {
      self.failed.push_back(i);
      if (!first) first = failures[i];
    }
  }
  if (first) std::rethrow_exception(first);
}

// The batch output arrays, and every instance's outputs redirected into them.
void wire_outputs(PyVectorSimulation& self) {
  const ModelSpec& s = self.vec->spec();
  const auto rows = static_cast<py::ssize_t>(self.vec->size() * s.num_agents);
  self.observations = py::array_t<float>({rows, static_cast<py::ssize_t>(s.obs_dim)});
  self.rewards = py::array_t<double>(rows);
  self.terminations = py::array_t<std::uint8_t>(rows);
  self.truncations = py::array_t<std::uint8_t>(rows);
  self.infos = py::array_t<std::int64_t>({rows, static_cast<py::ssize_t>(s.info_keys.size())});
  self.action_masks = py::array_t<std::uint8_t>(
      {s.action_mask ? rows : py::ssize_t{0}, static_cast<py::ssize_t>(s.action.n)});
  self.vec->redirect_outputs(Outputs{
      self.observations.mutable_data(), self.rewards.mutable_data(),
      self.terminations.mutable_data(), self.truncations.mutable_data(),
      self.infos.mutable_data(), s.action_mask ? self.action_masks.mutable_data() : nullptr});
}

// Checked step inputs (with the GIL held): actions, alive (or empty), modes, seeds.
struct StepInputs {
  py::array actions;
  py::array_t<std::uint8_t> alive, modes;
  py::array_t<std::uint64_t> seeds;
};

StepInputs step_inputs(PyVectorSimulation& self, const py::object& actions,
                       const py::object& alive, const py::object& modes,
                       const py::object& seeds) {
  const ModelSpec& s = self.vec->spec();
  const std::size_t m = self.vec->size();
  const std::size_t rows = m * s.num_agents;
  StepInputs in;
  in.actions = action_array(s, actions, rows);
  in.alive = mask_array(alive, rows, "alive");
  // Range-checked before narrowing: 256 or -1 must not wrap into a valid value.
  in.modes = small_uint_array(modes, m, VectorSimulation::kSkip, "modes");
  in.seeds = seed_array(seeds, m);
  // Only the actions of live agents of stepping instances are read.
  std::vector<std::uint8_t> read(rows);
  for (std::size_t r = 0; r < rows; ++r) {
    read[r] = (alive.is_none() || in.alive.data()[r]) &&
              in.modes.data()[r / s.num_agents] == VectorSimulation::kStep;
  }
  check_action_values(s, in.actions, rows, read.data());
  if (s.action_mask) {
    // Every stepping instance's actions against its masks, before any instance runs.
    const auto* acts = static_cast<const std::int64_t*>(in.actions.data());
    for (std::size_t i = 0; i < m; ++i) {
      if (in.modes.data()[i] != VectorSimulation::kStep) continue;
      try {
        self.vec->at(i).check_action_masks(acts + i * s.num_agents,
                                           read.data() + i * s.num_agents);
      } catch (const std::invalid_argument& e) {
        throw std::invalid_argument("instance " + std::to_string(i) + ": " + e.what());
      }
    }
  }
  return in;
}

template <class T>
void copy_into(std::vector<T>& out, const py::array& a) {
  out.resize(static_cast<std::size_t>(a.nbytes()) / sizeof(T));
  if (a.nbytes() > 0) std::memcpy(out.data(), a.data(), static_cast<std::size_t>(a.nbytes()));
}

}  // namespace

void bind_vector(py::module_& m) {
  static const bool fork_handler = platform::on_fork_in_child(after_fork_in_child);
  (void)fork_handler;
  py::module_::import("atexit").attr("register")(
      py::cpp_function(&drop_background_steps_at_exit));
  py::class_<PyVectorSimulation>(m, "VectorSimulation",
                                 "num_envs instances of one model, stepped in one call; with the "
                                 "parallel executor they share one thread pool and one "
                                 "executive list.")
      .def(py::init([](const std::string& model, const py::dict& config, const py::object& num_envs,
                       const std::string& executor, const py::object& num_threads, bool check,
                       const py::object& event_budget, const py::object& memory_copies) {
             auto self = std::make_unique<PyVectorSimulation>();
             const SimulationOptions options =
                 to_options(executor, num_threads, check, event_budget);
             self->vec = std::make_unique<VectorSimulation>(
                 model, to_config(config), to_count(num_envs, "num_envs", 1, 65536), options,
                 to_memory_copies(memory_copies));
             wire_outputs(*self);
             return self;
           }),
           py::arg("model"), py::arg("config"), py::arg("num_envs"), py::kw_only(),
           py::arg("executor") = "serial", py::arg("num_threads") = 1, py::arg("check") = false,
           py::arg("event_budget") = 50'000'000, py::arg("memory_copies") = py::none(),
           "num_envs (1..65536) instances of the registered model `model`; options as Simulation. "
           "memory_copies: instances the memory check counts (default num_envs; an async env's "
           "first batch counts them all).")
      .def(py::init([](const py::object& model, const py::dict& config, const py::object& num_envs,
                       const std::string& executor, const py::object& num_threads, bool check,
                       const py::object& event_budget, const py::object& memory_copies) {
             if (!config.empty()) {
               throw std::invalid_argument(
                   "config must be empty for a NumbaModel instance (configure it in its "
                   "constructor)");
             }
             const SimulationOptions options =
                 to_options(executor, num_threads, check, event_budget);
             const std::size_t count = to_count(num_envs, "num_envs", 1, 65536);
             // Each instance gets its own CompiledModel (the handlers are shared code).
             VectorSimulation::ModelMaker make = [&model] {
               std::unique_ptr<Model> compiled = make_compiled_model(model);
               if (!compiled) {
                 throw std::invalid_argument(
                     "model must be a registered model name or a compiled seer_env.NumbaModel "
                     "instance (Python handlers hold the GIL: run a PythonModel or "
                     "compiled=False in a SeerParallelEnv), got " +
                     py::repr(model).cast<std::string>());
               }
               return compiled;
             };
             auto self = std::make_unique<PyVectorSimulation>();
             self->vec = std::make_unique<VectorSimulation>(make, count, options,
                                                            to_memory_copies(memory_copies));
             wire_outputs(*self);
             return self;
           }),
           py::arg("model"), py::arg("config"), py::arg("num_envs"), py::kw_only(),
           py::arg("executor") = "serial", py::arg("num_threads") = 1, py::arg("check") = false,
           py::arg("event_budget") = 50'000'000, py::arg("memory_copies") = py::none(),
           "num_envs (1..65536) instances of a compiled seer_env.NumbaModel instance (each "
           "with its own state); config must be empty; options and memory_copies as for a "
           "registered model.")
      .def("release_threads",
           [](PyVectorSimulation& self) {
             require_no_step_in_flight(self);
             BusyGuard guard(self.busy, "release_threads");
             self.vec->release_threads();
           },
           "Join the worker threads now (close()); the next step starts fresh ones.")
      .def("start_on_one_thread",
           [](PyVectorSimulation& self, const std::string& why) {
             require_no_step_in_flight(self);
             BusyGuard guard(self.busy, "start_on_one_thread");
             self.vec->start_on_one_thread(why);
           },
           py::arg("why"),
           "The next batch steps run on one thread (the serial loop) until a probe of more "
           "threads runs clean, as after a confirmed shed (`why` starts the thread decision). "
           "For a pool size chosen while the CPUs were busy; no effect on other executors.")
      .def("prewake",
           [](PyVectorSimulation& self) {
             if (idle_under_gil(self.busy)) self.vec->prewake();
           },
           "Hint that step() follows soon: wakes parked worker threads now.")
      .def("step",
           [](PyVectorSimulation& self, const py::object& actions, const py::object& alive,
              const py::object& modes, const py::object& seeds) {
             require_no_step_in_flight(self);
             BusyGuard guard(self.busy, "step");
             const StepInputs in = step_inputs(self, actions, alive, modes, seeds);
             std::vector<std::exception_ptr> failures;
             self.vec->clear_interrupt();
             {
               SigintScope sigint(*self.vec);
               py::gil_scoped_release release;
               failures = self.vec->step(in.actions.data(),
                                         alive.is_none() ? nullptr : in.alive.data(),
                                         in.modes.data(), in.seeds.data());
             }
             raise_failures(self, failures);
           },
           py::arg("actions"), py::arg("alive"), py::arg("modes"), py::arg("seeds"),
           "Step (mode 0), reset (1, with seeds[i]) or skip (2) each instance, in one call. "
           "Raises the first failure; failed_instances lists all.")
      .def("step_async",
           [](PyVectorSimulation& self, const py::object& actions, const py::object& alive,
              const py::object& modes, const py::object& seeds) {
             // Held from here until step_wait(): no other call may touch the batch.
             if (self.busy.exchange(true, std::memory_order_acquire)) {
               throw CallOrderError(self.worker.in_flight()
                                        ? "a background step is in flight; call step_wait() first"
                                        : "this env is already running a call in another thread");
             }
             try {
               const StepInputs in = step_inputs(self, actions, alive, modes, seeds);
               PendingStep& p = self.pending;
               copy_into(p.actions, in.actions);
               p.has_alive = !alive.is_none();
               if (p.has_alive) copy_into(p.alive, in.alive);
               copy_into(p.modes, in.modes);
               copy_into(p.seeds, in.seeds);
               p.failures.clear();
               p.fatal = nullptr;
               VectorSimulation* vec = self.vec.get();
               vec->clear_interrupt();
               self.worker.submit([vec, &p] {
                 try {
                   p.failures = vec->step(p.actions.data(), p.has_alive ? p.alive.data() : nullptr,
                                          p.modes.data(), p.seeds.data());
                 } catch (...) {
                   p.fatal = std::current_exception();
                 }
               });
             } catch (...) {
               self.busy.store(false, std::memory_order_release);
               throw;
             }
           },
           py::arg("actions"), py::arg("alive"), py::arg("modes"), py::arg("seeds"),
           "step() on a background thread: returns at once (the inputs are copied); "
           "step_wait() waits for it and raises its failures. Until then the outputs and "
           "every other call are refused.")
      .def("step_wait",
           [](PyVectorSimulation& self) {
             if (!self.worker.in_flight()) {
               throw CallOrderError("step_wait() called without a step_async() in flight");
             }
             if (self.step_lost_to_fork) {
               self.step_lost_to_fork = false;
               self.worker.wait();  // a forked child: forgets its parent's job
               self.failed.clear();
               for (std::size_t i = 0; i < self.vec->size(); ++i) self.failed.push_back(i);
               throw CallOrderError(
                   "step_wait(): the step_async() in flight was lost: this process was forked "
                   "while it ran (the child has no copy of its thread); every instance needs a "
                   "reset");
             }
             {
               SigintScope sigint(*self.vec);  // Ctrl-C stops the background step
               py::gil_scoped_release release;
               self.worker.wait();
             }
             self.busy.store(false, std::memory_order_release);
             if (self.pending.fatal) std::rethrow_exception(self.pending.fatal);
             raise_failures(self, self.pending.failures);
           },
           "Wait for the step_async() in flight (GIL released) and raise its first failure; "
           "failed_instances lists all.")
      .def_property_readonly("in_flight",
                             [](PyVectorSimulation& self) { return self.worker.in_flight(); },
                             "A step_async() has not been waited for.")
      .def("close",
           [](PyVectorSimulation& self) { drop_background_step(self, true, true); },
           "Join the background thread. A background step in flight is interrupted, not "
           "waited for: its results are dropped and every instance it stepped or reset needs "
           "a reset (failed_instances lists them). RuntimeError while a call runs in another "
           "thread.")
      .def("request_interrupt",
           [](PyVectorSimulation& self) { self.vec->request_interrupt(); },
           "Stop the step running in another thread. Thread-safe.")
      .def_property_readonly("busy",
                             [](PyVectorSimulation& self) { return !idle_under_gil(self.busy); },
                             "True while a call on this VectorSimulation runs.")
      .def_property_readonly("failed_instances",
                             [](PyVectorSimulation& self) { return self.failed; },
                             "Indices of the instances whose last step failed (they need a reset).")
      .def_property_readonly("num_envs", [](PyVectorSimulation& self) { return self.vec->size(); },
                             "Number of instances.")
      .def_property_readonly("spec", [](PyVectorSimulation& self) { return spec_dict(self.vec->spec()); },
                             "The model's spec (one instance's).")
      .def_property_readonly("observations",
                             [](PyVectorSimulation& self) { return readonly(self, self.observations); },
                             "Read-only view of the batch observation buffer (copy it to keep it).")
      .def_property_readonly("rewards",
                             [](PyVectorSimulation& self) { return readonly(self, self.rewards); },
                             "Read-only view of the float64 batch reward buffer.")
      .def_property_readonly("terminations",
                             [](PyVectorSimulation& self) { return readonly(self, self.terminations); },
                             "Read-only view of the uint8 batch termination buffer.")
      .def_property_readonly("truncations",
                             [](PyVectorSimulation& self) { return readonly(self, self.truncations); },
                             "Read-only view of the uint8 batch truncation buffer.")
      .def_property_readonly("infos",
                             [](PyVectorSimulation& self) { return readonly(self, self.infos); },
                             "Read-only view of the int64 batch info buffer.")
      .def_property_readonly(
          "action_masks",
          [](PyVectorSimulation& self) {
            const ModelSpec& s = self.vec->spec();
            if (!s.action_mask) {
              throw std::invalid_argument("action_masks: model " + s.name +
                                          " declares no action_mask (every action is valid)");
            }
            // array_t<bool>: the stub says NDArray[bool] (the view is bool already: no copy).
            return py::array_t<bool>(readonly(self, self.action_masks).attr("view")("bool"));
          },
          "Read-only bool view [num_envs * num_agents, n] of the batch action masks (True: "
          "valid) of a model that declares action_mask; ValueError for one without.")
      .def("check_next_steps",
           [](PyVectorSimulation& self, const py::object& steps) {
             const std::uint64_t n = to_count(steps, "steps", 0, ~std::uint64_t{0});
             require_no_step_in_flight(self);
             BusyGuard guard(self.busy, "check_next_steps");
             self.vec->check_next_steps(n);
           },
           py::arg("steps"),
           "Run the contract checks on the next `steps` steps of every instance (as "
           "Simulation.check_next_steps); a checked instance steps alone, before the batch.")
      .def("checked_steps_left",
           [](PyVectorSimulation& self, std::size_t i) {
             require_no_step_in_flight(self);
             return self.vec->at(i).checked_steps_left();
           },
           py::arg("index"), "Steps instance `index` still has to check.")
      .def("digest",
           [](PyVectorSimulation& self, std::size_t i) {
             require_no_step_in_flight(self);
             require_idle(self.busy, "digest");
             return self.vec->at(i).digest();
           },
           py::arg("index"), "64-bit hash of instance `index` (as Simulation.digest).")
      .def("steps",
           [](PyVectorSimulation& self, std::size_t i) {
             require_no_step_in_flight(self);
             return self.vec->at(i).steps();
           },
           py::arg("index"), "Steps of instance `index` since its last reset.")
      .def_property_readonly(
          "pending_limit", [](PyVectorSimulation& self) { return self.vec->at(0).pending_limit(); },
          "The memory guard of each instance (Simulation.pending_limit, shared among the "
          "instances).")
      .def("needs_reset",
           [](PyVectorSimulation& self, std::size_t i) {
             require_no_step_in_flight(self);
             return self.vec->at(i).needs_reset();
           },
           py::arg("index"), "Whether instance `index` failed and needs a reset.")
      .def("save",
           [](PyVectorSimulation& self, std::size_t i) {
             require_no_step_in_flight(self);
             BusyGuard guard(self.busy, "save");
             return save_to_bytes(self.vec->at(i));
           },
           py::arg("index"), "Save instance `index` (as Simulation.save).")
      .def("load",
           [](PyVectorSimulation& self, std::size_t i, const py::object& blob) {
             require_no_step_in_flight(self);
             BusyGuard guard(self.busy, "load");
             load_from_buffer(self.vec->at(i), blob);
           },
           py::arg("index"), py::arg("blob"), "Load a save() into instance `index`.")
      .def("last_step",
           [](PyVectorSimulation& self, std::size_t i) {
             require_no_step_in_flight(self);
             return last_step_dict(self.vec->at(i));
           },
           py::arg("index"), "What instance `index`'s last step did (as Simulation.last_step).")
      .def("states",
           [](PyVectorSimulation& self) {
             require_no_step_in_flight(self);
             require_idle(self.busy, "states");
             const auto m = static_cast<py::ssize_t>(self.vec->size());
             const auto d = static_cast<py::ssize_t>(self.vec->spec().state_dim);
             py::array_t<float> out({m, d});
             for (py::ssize_t i = 0; i < m; ++i) {
               self.vec->at(static_cast<std::size_t>(i)).state(out.mutable_data(i, 0));
             }
             return out;
           },
           "Fresh float32[num_envs, state_dim]: every instance's global state of the last "
           "boundary (as Simulation.state).")
      .def("entity_states",
           [](PyVectorSimulation& self, std::size_t i) {
             require_no_step_in_flight(self);
             require_idle(self.busy, "entity_states");
             Model& model = self.vec->at(i).model();
             const auto n = static_cast<py::ssize_t>(self.vec->spec().num_entities);
             const auto size = static_cast<py::ssize_t>(model.entity_state_size());
             py::array_t<std::uint8_t> out({n, size});
             for (py::ssize_t e = 0; e < n; ++e) {
               std::memcpy(out.mutable_data(e, 0), model.entity_state(static_cast<EntityId>(e)),
                           static_cast<std::size_t>(size));
             }
             return out;
           },
           py::arg("index"),
           "Copy of instance `index`'s entity state bytes (as Simulation.entity_states).")
      .def_property_readonly("num_threads", [](PyVectorSimulation& self) {
        return self.vec->at(0).executor().num_threads();
      }, "Threads of the shared executor (the calling thread included).");
}

}  // namespace seer::bindings
