// seer_env._core.workload_spec / workload_names: each registered model's
// declaration (seer/workload.hpp) as plain Python data, from which the Python
// side builds env signatures, argument checks, docs and record dtypes.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>

#include "bindings.hpp"
#include "model_registry.hpp"
#include "seer/workload.hpp"

namespace py = pybind11;

namespace seer::bindings {
namespace {

py::object number(const ParamDecl& p, double v) {
  if (p.type == ParamType::kInteger) return py::int_(static_cast<long long>(v));
  return py::float_(v);
}

py::dict param_dict(const ParamDecl& p) {
  py::dict d;
  d["name"] = p.name;
  d["type"] = p.type == ParamType::kInteger ? "int" : "real";
  d["default"] = p.has_default ? number(p, p.default_value) : py::none();
  d["default_doc"] = p.default_doc;
  d["low"] = number(p, p.lo);
  d["high"] = number(p, p.hi);
  d["low_open"] = p.lo_open;
  d["high_is_cap"] = p.hi_is_cap;
  d["doc"] = p.doc;
  return d;
}

py::dict space_dict(const SpaceDecl& s) {
  py::dict d;
  d["shape"] = s.shape;
  d["dtype"] = s.dtype;
  d["bounds"] = s.bounds;
  return d;
}

// A dict numpy.dtype() accepts: names, formats, offsets, itemsize. A field of
// another record nests that record's dict.
py::dict record_dict(const WorkloadDecl& w, const RecordDecl& r) {
  py::list names, formats, offsets;
  for (const FieldDecl& f : r.fields) {
    names.append(f.name);
    offsets.append(f.offset);
    const RecordDecl* nested = w.find_record(f.type);
    py::object base = nested != nullptr ? py::object(record_dict(w, *nested)) : py::str(f.type);
    formats.append(f.shape.empty() ? base : py::object(py::make_tuple(base, py::tuple(py::cast(f.shape)))));
  }
  py::dict d;
  d["names"] = names;
  d["formats"] = formats;
  d["offsets"] = offsets;
  d["itemsize"] = r.size;
  return d;
}

py::dict workload_spec(const std::string& name) {
  const WorkloadDecl w = workload_decl(name);
  py::dict d;
  d["name"] = w.name;
  d["summary"] = w.summary;
  py::list params;
  for (const ParamDecl& p : w.params) params.append(param_dict(p));
  d["params"] = params;
  py::dict spaces;
  spaces["observation"] = space_dict(w.observation);
  spaces["action"] = space_dict(w.action);
  spaces["state"] = space_dict(w.state);
  d["spaces"] = spaces;
  d["info_keys"] = w.info_keys;
  d["total_keys"] = w.total_keys;
  d["event_kinds"] = w.event_kinds;
  d["decisions"] = w.decisions;
  d["action_mask"] = w.action_mask;
  py::dict records;
  for (const RecordDecl& r : w.records) records[py::str(r.name)] = record_dict(w, r);
  d["records"] = records;
  return d;
}

}  // namespace

void bind_workload(py::module_& m) {
  m.def("workload_spec", &workload_spec, py::arg("name"),
        "The declaration of registered model `name` as plain data: name, summary, params "
        "(name, type 'int'/'real', default (None: computed, see default_doc), low, high, "
        "low_open, high_is_cap, doc), spaces (observation/action/state: shape, dtype, bounds "
        "as text), info_keys, total_keys, event_kinds, decisions, action_mask (agents' valid actions "
        "vary), records (name -> a dict numpy.dtype() accepts). ValueError for an unknown "
        "name.");
}

}  // namespace seer::bindings
