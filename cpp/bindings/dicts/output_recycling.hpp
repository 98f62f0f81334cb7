// Reuse of the dict API's output objects once the caller has let go of them.
//
// A dict step of a 4096-agent env returned ~4096 x 4 new objects (row views,
// info dicts, floats, five 4096-entry dicts) and freed the previous step's:
// ~0.6 us per agent, more than the parallel step itself. Most callers drop a
// step's dicts a step or two later. An object only we reference (refcount as
// counted here, no weak reference) cannot be seen by anyone else, so giving it
// new contents is invisible: that is checked object by object before anything
// is reused. Whatever the caller still holds (a dict, one row, one info dict,
// a view derived from a row: it references the row's base array) is never
// written again; the step builds fresh objects in its place.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "compiler.hpp"

namespace seer::bindings {

// True when `obj` has exactly `refs` references and no weak reference: then
// the `refs` owners we know of are the only ones.
inline bool only_owned_by(PyObject* obj, Py_ssize_t refs) {
  if (Py_REFCNT(obj) != refs) return false;
  const Py_ssize_t offset = Py_TYPE(obj)->tp_weaklistoffset;
  if (offset == 0) return true;  // the type has no weak references
  if (offset < 0) return false;  // a layout we do not read: never reuse
  return *reinterpret_cast<PyObject**>(reinterpret_cast<char*>(obj) + offset) == nullptr;
}

// Row views of a 2-D array: made with NumPy's constructor directly (a third
// of the cost of `obs[i]`, which parses an index first).
class RowViews {
 public:
  explicit RowViews(const pybind11::array& base)
      : api_(pybind11::detail::npy_api::get()),
        base_(base),
        descr_(base.dtype()),
        dim_(base.shape(1)),
        stride_(base.strides(1)),
        row_stride_(base.strides(0)),
        data_(static_cast<char*>(const_cast<void*>(base.data()))),
        flags_(base.writeable() ? pybind11::detail::npy_api::NPY_ARRAY_WRITEABLE_ : 0) {}

  // A new reference.
  PyObject* row(std::ptrdiff_t i) const {
    Py_INCREF(descr_.ptr());  // stolen by the constructor
    PyObject* view = api_.PyArray_NewFromDescr_(api_.PyArray_Type_, descr_.ptr(), 1, &dim_,
                                                &stride_, data_ + i * row_stride_, flags_,
                                                nullptr);
    if (view == nullptr) throw pybind11::error_already_set();
    Py_INCREF(base_.ptr());  // stolen by SetBaseObject: the view keeps the array alive
    if (api_.PyArray_SetBaseObject_(view, base_.ptr()) != 0) {
      Py_DECREF(view);
      throw pybind11::error_already_set();
    }
    return view;
  }

 private:
  const pybind11::detail::npy_api& api_;
  const pybind11::array& base_;
  pybind11::dtype descr_;
  Py_intptr_t dim_, stride_, row_stride_;
  char* data_;
  int flags_;
};

// A float32 [rows, dim] array with a view of each row, built once and
// refilled while nobody but this object references the array or a row.
class ObservationBuffer {
 public:
  ObservationBuffer(std::size_t rows, std::size_t dim)
      : base_({static_cast<pybind11::ssize_t>(rows), static_cast<pybind11::ssize_t>(dim)}) {
    const RowViews views(base_);
    views_.reserve(rows);
    for (std::size_t i = 0; i < rows; ++i) {
      views_.push_back(pybind11::reinterpret_steal<pybind11::object>(
          views.row(static_cast<std::ptrdiff_t>(i))));
    }
  }

  float* data() { return base_.mutable_data(); }
  std::size_t bytes() const { return static_cast<std::size_t>(base_.nbytes()); }
  PyObject* row(std::size_t i) const { return views_[i].ptr(); }

  // True when nobody else holds the array or a row, `in_dict[i]` counting
  // one more reference to row i (from `dict`, held by us only).
  bool free(const std::vector<std::uint8_t>& in_dict) const {
    const auto rows = static_cast<Py_ssize_t>(views_.size());
    if (!only_owned_by(base_.ptr(), 1 + rows)) return false;  // us + each row's base
    constexpr std::size_t kAhead = 16;  // rows whose object is fetched ahead of the test
    for (std::size_t i = 0; i < views_.size(); ++i) {
      if (i + kAhead < views_.size()) SEER_PREFETCH(views_[i + kAhead].ptr());
      if (!only_owned_by(views_[i].ptr(), 1 + in_dict[i])) return false;
    }
    return true;
  }

  // The observation dict last built from these rows, kept for reuse.
  pybind11::object dict;

 private:
  pybind11::array_t<float> base_;
  std::vector<pybind11::object> views_;
};

// A few reusable objects of one kind: a step takes a free one, or makes a
// new one in the oldest one's place while the caller holds them all.
template <class T>
class Pool {
 public:
  explicit Pool(std::size_t size) : items_(size) {}

  std::size_t size() const { return items_.size(); }
  T& operator[](std::size_t i) { return items_[i]; }
  std::size_t victim() { return next_++ % items_.size(); }

 private:
  std::vector<T> items_;
  std::size_t next_ = 0;
};

}  // namespace seer::bindings
