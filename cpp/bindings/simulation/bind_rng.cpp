// The per-entity random stream, exposed so tests can prove it equals numpy's.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "bindings.hpp"
#include "seer/rng.hpp"

namespace py = pybind11;

namespace seer::bindings {

void bind_rng(py::module_& m) {
  py::class_<EntityRng>(m, "EntityRng",
                        "Philox4x64-10 stream of one entity: numpy.random.Philox(key=seed | "
                        "entity << 64).")
      .def(py::init<std::uint64_t, std::uint64_t>(), py::arg("seed"), py::arg("entity"))
      .def("raw", [](EntityRng& r, std::size_t n) {
        py::array_t<std::uint64_t> out(n);
        auto* p = out.mutable_data();
        for (std::size_t i = 0; i < n; ++i) p[i] = r.next_u64();
        return out;
      }, py::arg("n"))
      .def("uniform", &EntityRng::uniform)
      .def("exponential", &EntityRng::exponential, py::arg("mean"))
      .def("below", &EntityRng::below, py::arg("n"))
      .def_property_readonly("blocks", &EntityRng::blocks)
      .def_property_readonly("used", &EntityRng::used);
}

}  // namespace seer::bindings
