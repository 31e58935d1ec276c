// The Python Array (tinyxla._src.array.Array) from C++: its __slots__ read and written at
// their offsets, and new Arrays made as array._wrap makes them, for the paths that must not
// pay an attribute lookup per slot (jit's cached calls, the eager operators).
#pragma once
#include <pybind11/pybind11.h>

#include "tinyxla/array.h"

namespace tinyxla {

class ArraySlots {
 public:
  // The slot offsets of `type`; a TypeError unless it has the slots _h, dtype, weak_type,
  // _committed and _aval.
  explicit ArraySlots(PyTypeObject* type);

  PyTypeObject* type() const { return type_; }
  // A slot's value (borrowed), or null when the slot is unset.
  PyObject* handle(PyObject* a) const { return get(a, h_); }
  PyObject* dtype(PyObject* a) const { return get(a, dtype_); }
  PyObject* weak_type(PyObject* a) const { return get(a, weak_type_); }
  PyObject* committed(PyObject* a) const { return get(a, committed_); }
  // Array `a`'s slot read at its offset when `a` is of this type and the slot is set, else
  // its attribute `name` (a pmap result makes its _h on first use); a null object, the
  // error cleared, when neither is there.
  pybind11::object slot_or_attr(PyObject* a, PyObject* (ArraySlots::*slot)(PyObject*) const,
                                const pybind11::str& name) const;

  // A new Array of this type around `handle`, as _wrap(handle, weak_type, dtype) followed
  // by `a._committed = committed` makes it.
  pybind11::object wrap(Array handle, PyObject* dtype, PyObject* weak_type,
                        PyObject* committed) const;

 private:
  static PyObject* get(PyObject* a, Py_ssize_t offset) {
    return *reinterpret_cast<PyObject**>(reinterpret_cast<char*>(a) + offset);
  }
  PyTypeObject* type_;
  Py_ssize_t h_, dtype_, weak_type_, committed_, aval_;
};

// The slots of `type`, found at the first call for that type (under the GIL).
const ArraySlots& array_slots(pybind11::handle type);

}  // namespace tinyxla
