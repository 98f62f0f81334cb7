// seer_env._core.VectorSimulation: many instances, one call per step.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "convert.hpp"
#include "interrupt.hpp"
#include "seer/vector_simulation.hpp"

namespace py = pybind11;

namespace seer::bindings {
namespace {

// The batch and its output buffers (numpy arrays the C++ writes into).
struct PyVectorSimulation {
  std::unique_ptr<VectorSimulation> vec;
  py::array_t<float> observations;
  py::array_t<double> rewards;
  py::array_t<std::uint8_t> terminations, truncations;
  py::array_t<std::int64_t> infos;
  std::vector<std::size_t> failed;
  std::atomic<bool> busy{false};
};

py::array readonly(py::array a) {
  py::array view = a[py::slice(py::none(), py::none(), py::none())];
  view.attr("flags").attr("writeable") = false;
  return view;
}

}  // namespace

void bind_vector(py::module_& m) {
  py::class_<PyVectorSimulation>(m, "VectorSimulation",
                                 "num_envs instances of one model, stepped in one call; with the "
                                 "parallel executor they share one thread pool and one "
                                 "executive list.")
      .def(py::init([](const std::string& model, const py::dict& config, const py::object& num_envs,
                       const std::string& executor, const py::object& num_threads, bool check,
                       const py::object& event_budget) {
             auto self = std::make_unique<PyVectorSimulation>();
             const SimulationOptions options =
                 to_options(executor, num_threads, check, event_budget);
             self->vec = std::make_unique<VectorSimulation>(
                 model, to_config(config), to_count(num_envs, "num_envs", 1, 65536), options);
             const ModelSpec& s = self->vec->spec();
             const auto rows = static_cast<py::ssize_t>(self->vec->size() * s.num_agents);
             self->observations = py::array_t<float>({rows, static_cast<py::ssize_t>(s.obs_dim)});
             self->rewards = py::array_t<double>(rows);
             self->terminations = py::array_t<std::uint8_t>(rows);
             self->truncations = py::array_t<std::uint8_t>(rows);
             self->infos = py::array_t<std::int64_t>(
                 {rows, static_cast<py::ssize_t>(s.info_keys.size())});
             self->vec->redirect_outputs(Outputs{
                 self->observations.mutable_data(), self->rewards.mutable_data(),
                 self->terminations.mutable_data(), self->truncations.mutable_data(),
                 self->infos.mutable_data()});
             return self;
           }),
           py::arg("model"), py::arg("config"), py::arg("num_envs"), py::kw_only(),
           py::arg("executor") = "serial", py::arg("num_threads") = 1, py::arg("check") = false,
           py::arg("event_budget") = 50'000'000,
           "num_envs (1..65536) instances of the registered model `model`; options as Simulation.")
      .def("release_threads",
           [](PyVectorSimulation& self) {
             BusyGuard guard(self.busy);
             self.vec->release_threads();
           },
           "Join the worker threads now (close()); the next step starts fresh ones.")
      .def("prewake",
           [](PyVectorSimulation& self) {
             if (idle_under_gil(self.busy)) self.vec->prewake();
           },
           "Hint that step() follows soon: wakes parked worker threads now.")
      .def("step",
           [](PyVectorSimulation& self, const py::object& actions, const py::object& alive,
              const py::object& modes, const py::object& seeds) {
             BusyGuard guard(self.busy);
             const ModelSpec& s = self.vec->spec();
             const std::size_t m = self.vec->size();
             const py::array acts = action_array(s, actions, m * s.num_agents);
             const auto live = mask_array(alive, m * s.num_agents, "alive");
             const auto mode = mask_array(modes, m, "modes");
             auto seed = py::array_t<std::uint64_t, py::array::c_style | py::array::forcecast>::ensure(seeds);
             if (mode.size() != static_cast<py::ssize_t>(m) || !seed ||
                 seed.size() != static_cast<py::ssize_t>(m)) {
               throw std::invalid_argument("modes and seeds must have num_envs values");
             }
             for (py::ssize_t i = 0; i < mode.size(); ++i) {
               if (mode.data()[i] > VectorSimulation::kSkip) {
                 throw std::invalid_argument("modes must be 0 (step), 1 (reset) or 2 (skip)");
               }
             }
             std::vector<std::exception_ptr> failures;
             {
               SigintScope sigint(*self.vec);
               py::gil_scoped_release release;
               failures = self.vec->step(acts.data(), alive.is_none() ? nullptr : live.data(),
                                         mode.data(), seed.data());
             }
             self.failed.clear();
             std::exception_ptr first;
             for (std::size_t i = 0; i < failures.size(); ++i) {
               if (failures[i]) {
                 self.failed.push_back(i);
                 if (!first) first = failures[i];
               }
             }
             if (first) std::rethrow_exception(first);
           },
           py::arg("actions"), py::arg("alive"), py::arg("modes"), py::arg("seeds"),
           "Step (mode 0), reset (1, with seeds[i]) or skip (2) each instance, in one call. "
           "Raises the first failure; failed_instances lists all.")
      .def("request_interrupt",
           [](PyVectorSimulation& self) { self.vec->request_interrupt(); },
           "Stop the step running in another thread. Thread-safe.")
      .def_property_readonly("failed_instances",
                             [](PyVectorSimulation& self) { return self.failed; },
                             "Indices of the instances whose last step failed (they need a reset).")
      .def_property_readonly("num_envs", [](PyVectorSimulation& self) { return self.vec->size(); },
                             "Number of instances.")
      .def_property_readonly("spec", [](PyVectorSimulation& self) { return spec_dict(self.vec->spec()); },
                             "The model's spec (one instance's).")
      .def_property_readonly("observations",
                             [](PyVectorSimulation& self) { return readonly(self.observations); },
                             "Read-only view of the batch observation buffer (copy it to keep it).")
      .def_property_readonly("rewards", [](PyVectorSimulation& self) { return readonly(self.rewards); },
                             "Read-only view of the float64 batch reward buffer.")
      .def_property_readonly("terminations",
                             [](PyVectorSimulation& self) { return readonly(self.terminations); },
                             "Read-only view of the uint8 batch termination buffer.")
      .def_property_readonly("truncations",
                             [](PyVectorSimulation& self) { return readonly(self.truncations); },
                             "Read-only view of the uint8 batch truncation buffer.")
      .def_property_readonly("infos", [](PyVectorSimulation& self) { return readonly(self.infos); },
                             "Read-only view of the int64 batch info buffer.")
      .def("digest", [](PyVectorSimulation& self, std::size_t i) { return self.vec->at(i).digest(); },
           py::arg("index"), "64-bit hash of instance `index` (as Simulation.digest).")
      .def("steps", [](PyVectorSimulation& self, std::size_t i) { return self.vec->at(i).steps(); },
           py::arg("index"), "Steps of instance `index` since its last reset.")
      .def("needs_reset",
           [](PyVectorSimulation& self, std::size_t i) { return self.vec->at(i).needs_reset(); },
           py::arg("index"), "Whether instance `index` failed and needs a reset.")
      .def("save", [](PyVectorSimulation& self, std::size_t i) { return py::bytes(self.vec->at(i).save()); },
           py::arg("index"), "Save instance `index` (as Simulation.save).")
      .def("load",
           [](PyVectorSimulation& self, std::size_t i, const py::bytes& blob) {
             BusyGuard guard(self.busy);
             self.vec->at(i).load(std::string(blob));
           },
           py::arg("index"), py::arg("blob"), "Load a save() into instance `index`.")
      .def("last_step",
           [](PyVectorSimulation& self, std::size_t i) {
             py::dict d;
             const StepStats& s = self.vec->at(i).last_step();
             d["events"] = s.events;
             d["cross_events"] = s.cross_events;
             d["rounds"] = s.rounds;
             d["seconds"] = self.vec->at(i).last_step_seconds();
             return d;
           },
           py::arg("index"), "What instance `index`'s last step did (as Simulation.last_step).")
      .def_property_readonly("num_threads", [](PyVectorSimulation& self) {
        return self.vec->at(0).executor().num_threads();
      }, "Threads of the shared executor (the calling thread included).");
}

}  // namespace seer::bindings
