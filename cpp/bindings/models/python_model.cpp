#include "models/python_model.hpp"

#include <pybind11/stl.h>

#include <cmath>
#include <cstring>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "executor.hpp"
#include "seer/errors.hpp"

namespace py = pybind11;

namespace seer::bindings {
namespace {

// The Python exception as text (type, message, traceback summary).
std::string python_error(const py::error_already_set& error) { return error.what(); }

py::object readonly_view(const py::array& array) {
  py::object view = array.attr("view")();
  view.attr("flags").attr("writeable") = false;
  return view;
}

}  // namespace

Context& PyHandlerContext::get() const {
  if (ctx == nullptr) {
    throw CallOrderError("handler context used outside its handler (do not keep `ctx`)");
  }
  return *ctx;
}

void require_serial_for_python(const std::string& executor, unsigned num_threads) {
  if (!runs_on_calling_thread(executor)) {
    throw std::invalid_argument(
        "executor must be 'serial' for a PythonModel (its handlers hold the GIL, so they run one "
        "at a time; to run in parallel, port the model to C++ or write it as a NumbaModel and "
        "run it compiled), got '" +
        executor + "'");
  }
  if (num_threads != 1) {
    throw std::invalid_argument("num_threads must be 1 for a PythonModel, got " +
                                std::to_string(num_threads));
  }
}

ModelSpec spec_from_python(const py::dict& s) {
  ModelSpec spec;
  spec.name = s["name"].cast<std::string>();
  spec.num_entities = s["num_entities"].cast<std::uint32_t>();
  spec.num_agents = s["num_agents"].cast<std::uint32_t>();
  spec.agent_prefix = s["agent_prefix"].cast<std::string>();
  spec.lookahead = s["lookahead"].cast<double>();
  spec.dt = s["dt"].cast<double>();
  spec.obs_dim = s["obs_dim"].cast<std::size_t>();
  spec.obs_low = s["obs_low"].cast<std::vector<float>>();
  spec.obs_high = s["obs_high"].cast<std::vector<float>>();
  const py::dict action = s["action"];
  spec.action.discrete = action["discrete"].cast<bool>();
  spec.action.n = action["n"].cast<std::int64_t>();
  spec.action.dim = action["dim"].cast<std::size_t>();
  spec.action.low = action["low"].cast<float>();
  spec.action.high = action["high"].cast<float>();
  spec.state_dim = s["state_dim"].cast<std::size_t>();
  spec.state_low = s["state_low"].cast<float>();
  spec.state_high = s["state_high"].cast<float>();
  spec.info_keys = s["info_keys"].cast<std::vector<std::string>>();
  spec.total_keys = s["total_keys"].cast<std::vector<std::string>>();
  spec.event_kinds = s["event_kinds"].cast<std::vector<std::string>>();
  spec.decisions = s.contains("decisions") && s["decisions"].cast<bool>();
  spec.action_mask = s.contains("action_mask") && s["action_mask"].cast<bool>();
  return spec;
}

PythonModel::PythonModel(py::object impl) : impl_(std::move(impl)) {
  const py::dict layout = impl_.attr("_runtime_layout")();
  spec_ = spec_from_python(layout["spec"]);

  py::module_ np = py::module_::import("numpy");
  states_ = np.attr("zeros")(spec_.num_entities, layout["state_dtype"]);
  snapshot_ = np.attr("zeros")(spec_.num_entities, layout["public_dtype"]);
  states_data_ = static_cast<unsigned char*>(states_.mutable_data());
  public_data_ = static_cast<unsigned char*>(snapshot_.mutable_data());
  state_size_ = static_cast<std::size_t>(states_.itemsize());
  public_size_ = static_cast<std::size_t>(snapshot_.itemsize());
  states_ro_ = readonly_view(states_);
  snapshot_ro_ = readonly_view(snapshot_);
  for (const auto& field : layout["public_fields"].cast<py::list>()) {
    const auto t = field.cast<py::tuple>();
    public_fields_.push_back(
        {t[0].cast<std::size_t>(), t[1].cast<std::size_t>(), t[2].cast<std::size_t>()});
  }
  payload_dtype_ = layout["payload_dtype"];
  write_snapshot_ = layout["write_snapshot"];

  auto owner = std::make_unique<PyHandlerContext>();
  owner->model = this;
  ctx_ = owner.get();
  ctx_obj_ = py::cast(std::move(owner));
  rng_obj_ = py::cast(PyHandlerRng{ctx_obj_, ctx_});

  on_init_ = impl_.attr("on_init");
  on_step_begin_ = impl_.attr("on_step_begin");
  on_action_ = impl_.attr("on_action");
  on_event_ = impl_.attr("on_event");
  after_snapshot_ = impl_.attr("after_snapshot");
  observe_ = impl_.attr("observe");
  action_mask_ = impl_.attr("valid_actions");
  reward_ = impl_.attr("reward");
  terminated_ = impl_.attr("terminated");
  truncated_ = impl_.attr("truncated");
  info_ = impl_.attr("info");
  global_state_ = impl_.attr("global_state");
  totals_ = impl_.attr("totals");
  reset_ = impl_.attr("reset");
}

PythonModel::~PythonModel() {
  // Python references may only be dropped with the GIL held; the owner (a
  // Python object) is usually deallocated with it held already.
  py::gil_scoped_acquire gil;
  ctx_->model = nullptr;
  ctx_->ctx = nullptr;
  for (py::object* o : {&impl_, &rng_obj_, &ctx_obj_, &states_ro_, &snapshot_ro_, &payload_dtype_,
                        &on_init_, &on_step_begin_, &on_action_, &on_event_, &after_snapshot_,
                        &write_snapshot_, &observe_, &action_mask_, &reward_, &terminated_, &truncated_, &info_, &global_state_,
                        &totals_, &reset_}) {
    *o = py::object();
  }
  states_ = py::array();
  snapshot_ = py::array();
}

py::object PythonModel::state_record(EntityId e) const {
  return states_.attr("__getitem__")(e);
}

py::object PythonModel::readonly_record(EntityId e) const {
  return states_ro_.attr("__getitem__")(e);
}

template <class... Args>
void PythonModel::run_handler(Context& ctx, const py::object& hook, Args&&... args) {
  py::gil_scoped_acquire gil;
  ctx_->ctx = &ctx;
  struct Unbind {
    PyHandlerContext* c;
    ~Unbind() { c->ctx = nullptr; }
  } unbind{ctx_};
  // A live record, not a copy: a record kept and written later from another
  // entity's handler is then a foreign write that check=True reports (a copy
  // would drop the write silently and hide the bug).
  try {
    hook(ctx_obj_, state_record(ctx.self()), std::forward<Args>(args)...);
  } catch (py::error_already_set& error) {
    if (pending_) std::rethrow_exception(std::exchange(pending_, nullptr));
    // Ctrl-C reached Python inside the handler: stop the step as an interrupt
    // (KeyboardInterrupt, env needs reset), not as a failing handler.
    if (error.matches(PyExc_KeyboardInterrupt)) {
      throw Interrupted("interrupted: KeyboardInterrupt in a Python handler; call reset()");
    }
    throw std::runtime_error(python_error(error));
  }
  if (pending_) std::rethrow_exception(std::exchange(pending_, nullptr));
}

template <class... Args>
py::object PythonModel::call_boundary(const char* what, EntityId agent, const py::object& hook,
                                      Args&&... args) const {
  try {
    return hook(std::forward<Args>(args)...);
  } catch (py::error_already_set& error) {
    std::ostringstream out;
    out.precision(17);
    out << "handler failed: " << what << "(" << agent << ") at t=" << boundary_time_ << ": "
        << python_error(error);
    throw HandlerError(out.str(), agent, what, boundary_time_);
  }
}

void PythonModel::reset_states() {
  py::gil_scoped_acquire gil;
  std::memset(states_data_, 0, state_size_ * spec_.num_entities);
  std::memset(public_data_, 0, public_size_ * spec_.num_entities);
  boundary_time_ = 0.0;
  call_boundary("reset", 0, reset_, states_);
}

void PythonModel::on_init(Context& ctx) { run_handler(ctx, on_init_); }

void PythonModel::on_step_begin(Context& ctx) {
  boundary_time_ = ctx.now() + spec_.dt;  // serial only: no race
  run_handler(ctx, on_step_begin_);
}

void PythonModel::on_action(Context& ctx, const ActionView& action) {
  if (spec_.action.discrete) {
    run_handler(ctx, on_action_, action.discrete);
    return;
  }
  py::gil_scoped_acquire gil;
  py::array_t<float> box(static_cast<py::ssize_t>(action.dim));
  std::memcpy(box.mutable_data(), action.box, action.dim * sizeof(float));
  run_handler(ctx, on_action_, box);
}

void PythonModel::on_event(Context& ctx, const Event& event) {
  py::gil_scoped_acquire gil;
  run_handler(ctx, on_event_, py::cast(PyHandlerEvent{event, payload_dtype_}));
}

void PythonModel::write_snapshot(EntityId e) {
  if (!write_snapshot_.is_none()) {  // a computed public record (serial executor: no race)
    py::gil_scoped_acquire gil;
    call_boundary("write_snapshot", e, write_snapshot_, readonly_record(e),
                  snapshot_.attr("__getitem__")(e));
    return;
  }
  const unsigned char* from = states_data_ + e * state_size_;
  unsigned char* to = public_data_ + e * public_size_;
  for (const FieldCopy& f : public_fields_) std::memcpy(to + f.to, from + f.from, f.size);
}

void PythonModel::after_snapshot() {
  py::gil_scoped_acquire gil;
  call_boundary("after_snapshot", 0, after_snapshot_, snapshot_ro_);
}

void PythonModel::observe(EntityId agent, float* obs) const {
  py::gil_scoped_acquire gil;
  py::object result = call_boundary("observe", agent, observe_, agent, readonly_record(agent),
                                    snapshot_ro_);
  copy_reals("observe", agent, result, spec_.obs_dim, obs);
}

void PythonModel::action_mask(EntityId agent, std::uint8_t* out) const {
  py::gil_scoped_acquire gil;
  py::object result = call_boundary("valid_actions", agent, action_mask_, agent,
                                    readonly_record(agent), snapshot_ro_);
  // Exactly n bools (or 0/1 integers), 1-D: anything else would be coerced silently.
  const auto n = static_cast<std::size_t>(spec_.action.n);
  const std::string expected = std::to_string(n) + " bools (a 1-D sequence, True: valid)";
  py::array values;
  try {
    values = py::module_::import("numpy").attr("asarray")(result);
  } catch (py::error_already_set&) {
    throw bad_result("valid_actions", agent, expected, result);
  }
  const char kind = values.dtype().kind();
  if ((kind != 'b' && kind != 'i' && kind != 'u') || values.ndim() != 1 ||
      static_cast<std::size_t>(values.size()) != n) {
    throw bad_result("valid_actions", agent, expected, result);
  }
  const auto wide =
      py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>::ensure(values);
  for (std::size_t k = 0; k < n; ++k) {
    const std::int64_t v = wide.data()[k];
    if (v != 0 && v != 1) throw bad_result("valid_actions", agent, expected, result);
    out[k] = static_cast<std::uint8_t>(v);
  }
}

double PythonModel::reward(EntityId agent) const {
  py::gil_scoped_acquire gil;
  py::object result =
      call_boundary("reward", agent, reward_, agent, readonly_record(agent), snapshot_ro_);
  if (!is_real(result)) throw bad_result("reward", agent, "a real number", result);
  return py::float_(result).cast<double>();
}

bool PythonModel::terminated(EntityId agent) const {
  py::gil_scoped_acquire gil;
  return to_flag("terminated", agent,
                 call_boundary("terminated", agent, terminated_, agent, readonly_record(agent),
                               snapshot_ro_));
}

bool PythonModel::truncated(EntityId agent) const {
  py::gil_scoped_acquire gil;
  return to_flag("truncated", agent,
                 call_boundary("truncated", agent, truncated_, agent, readonly_record(agent),
                               snapshot_ro_));
}

void PythonModel::info(EntityId agent, std::int64_t* out) const {
  py::gil_scoped_acquire gil;
  py::object result =
      call_boundary("info", agent, info_, agent, readonly_record(agent), snapshot_ro_);
  copy_integers("info", agent, result, spec_.info_keys.size(), out);
}

void PythonModel::state(float* out) const {
  py::gil_scoped_acquire gil;
  py::object result = call_boundary("global_state", 0, global_state_, states_ro_, snapshot_ro_);
  copy_reals("global_state", 0, result, spec_.state_dim, out);
}

void PythonModel::totals(std::int64_t* out) const {
  py::gil_scoped_acquire gil;
  py::object result = call_boundary("totals", 0, totals_, states_ro_);
  copy_integers("totals", 0, result, spec_.total_keys.size(), out);
}

HandlerError PythonModel::bad_result(const char* what, EntityId agent, const std::string& expected,
                                     const py::handle& result) const {
  std::ostringstream out;
  out.precision(17);
  out << "handler failed: " << what << "(" << agent << ") must return " << expected << ", got "
      << short_repr(result) << " (at t=" << boundary_time_ << ")";
  return HandlerError(out.str(), agent, what, boundary_time_);
}

void PythonModel::copy_reals(const char* what, EntityId agent, const py::object& result,
                             std::size_t n, float* out) const {
  // Exactly n numbers, 1-D: a 2-D array of the right size, strings numpy
  // could parse, or values a float32 cannot hold would be silent coercions.
  const std::string expected = std::to_string(n) + " float32 values (a 1-D sequence of reals)";
  py::module_ np = py::module_::import("numpy");
  py::array values;
  try {
    values = np.attr("asarray")(result);
  } catch (py::error_already_set&) {
    throw bad_result(what, agent, expected, result);
  }
  const char kind = values.dtype().kind();
  if ((kind != 'i' && kind != 'u' && kind != 'f') || values.ndim() != 1 ||
      static_cast<std::size_t>(values.size()) != n) {
    throw bad_result(what, agent, expected, result);
  }
  const auto reals =
      py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(values);
  for (std::size_t i = 0; i < n; ++i) {
    const double v = reals.data()[i];
    const auto f = static_cast<float>(v);
    if (std::isfinite(v) && !std::isfinite(f)) {  // beyond float32: would become inf
      throw bad_result(what, agent, expected + " within float32 range", result);
    }
    out[i] = f;
  }
}

void PythonModel::copy_integers(const char* what, EntityId agent, const py::object& result,
                                std::size_t n, std::int64_t* out) const {
  const std::string expected = std::to_string(n) + " integers in [-2**63, 2**63)";
  if (py::isinstance<py::str>(result) || py::isinstance<py::bytes>(result) ||
      !py::isinstance<py::iterable>(result)) {
    throw bad_result(what, agent, expected, result);
  }
  const py::list items = py::module_::import("builtins").attr("list")(result);
  if (items.size() != n) throw bad_result(what, agent, expected, result);
  py::module_ np = py::module_::import("numpy");
  for (std::size_t i = 0; i < n; ++i) {
    py::handle v = items[i];
    const bool integer = (PyLong_Check(v.ptr()) && !PyBool_Check(v.ptr())) ||
                         py::isinstance(v, np.attr("integer"));
    if (!integer) throw bad_result(what, agent, expected, result);
    const py::int_ value = py::reinterpret_steal<py::int_>(PyNumber_Index(v.ptr()));
    int overflow = 0;
    const long long x = PyLong_AsLongLongAndOverflow(value.ptr(), &overflow);
    if (overflow != 0) throw bad_result(what, agent, expected, result);  // 2**70
    out[i] = x;
  }
}

bool PythonModel::to_flag(const char* what, EntityId agent, const py::object& result) const {
  // A bool, or an integer 0/1 (a uint8 flag field): None, 0.5, "no" or an
  // array would be truthy/falsy silently.
  py::module_ np = py::module_::import("numpy");
  if (PyBool_Check(result.ptr())) return result.ptr() == Py_True;
  if (py::isinstance(result, np.attr("bool_"))) return result.cast<bool>();
  if (PyLong_Check(result.ptr()) || py::isinstance(result, np.attr("integer"))) {
    const py::int_ value = py::reinterpret_steal<py::int_>(PyNumber_Index(result.ptr()));
    if (value.equal(py::int_(0))) return false;
    if (value.equal(py::int_(1))) return true;
  }
  throw bad_result(what, agent, "a bool (or an integer 0/1)", result);
}

bool PythonModel::is_real(const py::handle& v) {
  if (PyBool_Check(v.ptr())) return false;
  if (PyLong_Check(v.ptr())) {  // 2**1100 is an int no double holds
    PyLong_AsDouble(v.ptr());
    if (PyErr_Occurred()) {
      PyErr_Clear();
      return false;
    }
    return true;
  }
  py::module_ np = py::module_::import("numpy");
  return PyFloat_Check(v.ptr()) || py::isinstance(v, np.attr("integer")) ||
         py::isinstance(v, np.attr("floating"));
}

std::string PythonModel::short_repr(const py::handle& v) {
  std::string text = py::str(py::repr(v));
  if (text.size() > 200) text = text.substr(0, 200) + "...";
  return text + " (" + std::string(py::str(v.get_type().attr("__name__"))) + ")";
}

std::unique_ptr<Model> make_python_model(const py::object& impl) {
  py::object base = py::module_::import("seer_env").attr("PythonModel");
  if (!py::isinstance(impl, base)) {
    throw py::type_error("model must be a registered model name or a seer_env.PythonModel, got " +
                         py::repr(impl).cast<std::string>());
  }
  return std::make_unique<PythonModel>(impl);
}

}  // namespace seer::bindings
