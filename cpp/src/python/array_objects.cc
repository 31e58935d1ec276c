// The Python Array's slots from C++ (see array_objects.h).
#include "array_objects.h"

#include <structmember.h>

#include <memory>
#include <string>
#include <vector>

namespace py = pybind11;

namespace tinyxla {
namespace {

// The offset of __slots__ member `name` of `type`.
Py_ssize_t slot_offset(PyTypeObject* type, const char* name) {
  PyObject* d = PyDict_GetItemString(type->tp_dict, name);
  if (!d || Py_TYPE(d) != &PyMemberDescr_Type ||
      reinterpret_cast<PyMemberDescrObject*>(d)->d_member->type != T_OBJECT_EX)
    throw py::type_error(std::string("array_slots: ") + type->tp_name + " has no slot " + name);
  return reinterpret_cast<PyMemberDescrObject*>(d)->d_member->offset;
}

void put(PyObject* a, Py_ssize_t offset, PyObject* value) {
  Py_INCREF(value);
  *reinterpret_cast<PyObject**>(reinterpret_cast<char*>(a) + offset) = value;
}

}  // namespace

ArraySlots::ArraySlots(PyTypeObject* type)
    : type_(type),
      h_(slot_offset(type, "_h")),
      dtype_(slot_offset(type, "dtype")),
      weak_type_(slot_offset(type, "weak_type")),
      committed_(slot_offset(type, "_committed")),
      aval_(slot_offset(type, "_aval")) {}

py::object ArraySlots::slot_or_attr(PyObject* a, PyObject* (ArraySlots::*slot)(PyObject*) const,
                                    const py::str& name) const {
  if (Py_TYPE(a) == type_) {
    if (PyObject* v = (this->*slot)(a)) return py::reinterpret_borrow<py::object>(v);
  }
  PyObject* v = PyObject_GetAttr(a, name.ptr());
  if (!v) PyErr_Clear();
  return py::reinterpret_steal<py::object>(v);
}

py::object ArraySlots::wrap(Array handle, PyObject* dtype, PyObject* weak_type,
                            PyObject* committed) const {
  py::object h = py::cast(std::move(handle));
  // tp_alloc, as object.__new__ without its abstract-class check (Array is an ABC); the
  // slots start unset, and are set once here before anyone sees the object.
  PyObject* a = type_->tp_alloc(type_, 0);
  if (!a) throw py::error_already_set();
  put(a, h_, h.ptr());
  put(a, dtype_, dtype);
  put(a, weak_type_, weak_type);
  put(a, committed_, committed);
  put(a, aval_, Py_None);
  return py::reinterpret_steal<py::object>(a);
}

const ArraySlots& array_slots(py::handle type) {
  if (!PyType_Check(type.ptr())) throw py::type_error("array_slots: expected a class");
  auto* t = reinterpret_cast<PyTypeObject*>(type.ptr());
  // Never freed, as the classes they describe (held here) live as long as the module.
  static auto* known = new std::vector<std::unique_ptr<ArraySlots>>();
  for (const auto& s : *known)
    if (s->type() == t) return *s;
  known->push_back(std::make_unique<ArraySlots>(t));
  Py_INCREF(type.ptr());
  return *known->back();
}

}  // namespace tinyxla
