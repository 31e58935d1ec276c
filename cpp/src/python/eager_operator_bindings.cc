// The eager operators of the Python Array (see eager_operator_bindings.h and
// python/tinyxla/_src/numpy/eager_operators.py, which states the cases). Each operator is a
// method descriptor of the Array class, so `x + 1` reaches it with no Python frame.
#include "eager_operator_bindings.h"

#include <array>
#include <climits>
#include <cstring>
#include <string>
#include <utility>

#include "array_objects.h"
#include "op_bindings.h"
#include "tinyxla/ops.h"

namespace py = pybind11;

namespace tinyxla {
namespace {

// What setup_eager_operators gives: where the current trace is, and the dtypes (numpy
// dtype objects, compared by identity as the Python layer's `is`) of the fast cases.
struct Context {
  const ArraySlots* slots = nullptr;
  py::object state, trace_name, eval_trace;
  py::tuple same_dtypes, float_scalar_dtypes;
  py::object int32;
};

Context& context() {
  static auto* c = new Context();  // never destroyed: it holds Python objects
  return *c;
}

// One operator: its op, whether it is reflected (1 + x), and the general operator.
struct Operator {
  BinaryOp op = BinaryOp::add;
  bool reflected = false;
  py::object general;
  std::string name, doc;
  PyMethodDef def{};
};

constexpr BinaryOp kOps[] = {BinaryOp::add, BinaryOp::sub, BinaryOp::mul};
constexpr int kNumOperators = 2 * int(std::size(kOps));

std::array<Operator, kNumOperators>& operators() {
  static auto* ops = new std::array<Operator, kNumOperators>();
  return *ops;
}

bool among(PyObject* x, const py::tuple& items) {
  for (py::handle i : items)
    if (i.ptr() == x) return true;
  return false;
}

bool is_bool(PyObject* x) { return x && Py_TYPE(x) == &PyBool_Type; }

// Python's `a or b` and `a and b` of two objects (-1: an error is set).
PyObject* py_or(PyObject* a, PyObject* b, int* err) {
  const int t = PyObject_IsTrue(a);
  if (t < 0) *err = 1;
  return t ? a : b;
}
PyObject* py_and(PyObject* a, PyObject* b, int* err) {
  const int t = PyObject_IsTrue(a);
  if (t < 0) *err = 1;
  return t ? b : a;
}

// The 0-d array of a Python number: a loop's `x + 1` meets the same few numbers again, so
// each thread keeps the last few (immutable and ready, they are safe to share).
const Array& scalar_operand(DType dtype, const Scalar& s, int device) {
  struct Entry {
    DType dtype;
    int device;
    Scalar::Kind kind;
    int64_t i;
    uint64_t f;  // the double's bits: -0.0 and NaNs stay apart
    Array array;
  };
  constexpr int kEntries = 4;
  thread_local std::array<Entry, kEntries> cache{};
  thread_local int next = 0;
  uint64_t f;
  std::memcpy(&f, &s.f, sizeof f);
  for (const Entry& e : cache)
    if (e.array.buffer() && e.dtype == dtype && e.device == device && e.kind == s.kind &&
        e.i == s.i && e.f == f)
      return e.array;
  Entry& e = cache[size_t(next)];
  next = (next + 1) % kEntries;
  e = Entry{dtype, device, s.kind, s.i, f, scalar(dtype, s, device)};
  return e.array;
}

// The result of the fast path (a new reference), or null with no error set where it does
// not apply; null with an error set for a Python error.
PyObject* fast(const Operator& op, PyObject* self, PyObject* other) {
  const Context& c = context();
  const ArraySlots& slots = *c.slots;
  PyObject* trace = PyObject_GetAttr(c.state.ptr(), c.trace_name.ptr());
  if (!trace) return nullptr;
  const bool eager = trace == c.eval_trace.ptr();
  Py_DECREF(trace);
  // An Array laid out over a mesh (its _committed is its layout, not a bool) takes the
  // general path, which lays the result out.
  if (!eager || Py_TYPE(self) != slots.type()) return nullptr;
  PyObject* committed = slots.committed(self);
  PyObject* dtype = slots.dtype(self);
  PyObject* h = slots.handle(self);
  PyObject* weak = slots.weak_type(self);
  if (!is_bool(committed) || !dtype || !h || !weak) return nullptr;
  try {
    const Array& x = py::handle(h).cast<const Array&>();
    PyTypeObject* t = Py_TYPE(other);
    if (t == slots.type()) {
      PyObject* ocommitted = slots.committed(other);
      PyObject* oh = slots.handle(other);
      PyObject* oweak = slots.weak_type(other);
      if (slots.dtype(other) != dtype || !among(dtype, c.same_dtypes) || !is_bool(ocommitted) ||
          !oh || !oweak)
        return nullptr;
      const Array& y = py::handle(oh).cast<const Array&>();
      if (x.ndim() != y.ndim() && x.ndim() && y.ndim()) return nullptr;
      Array out = op.reflected ? binary(op.op, y, x) : binary(op.op, x, y);
      int err = 0;
      PyObject* out_weak = py_and(weak, oweak, &err);
      PyObject* out_committed = py_or(committed, ocommitted, &err);
      if (err) return nullptr;
      return slots.wrap(std::move(out), dtype, out_weak, out_committed).release().ptr();
    }
    bool scalar_ok = false;
    if (t == &PyFloat_Type) {
      scalar_ok = among(dtype, c.float_scalar_dtypes);
    } else if (t == &PyLong_Type && (among(dtype, c.float_scalar_dtypes) || dtype == c.int32.ptr())) {
      int overflow = 0;
      const long long v = PyLong_AsLongLongAndOverflow(other, &overflow);
      scalar_ok = !overflow && v >= INT32_MIN && v <= INT32_MAX;
    }
    if (!scalar_ok) return nullptr;
    Scalar s;
    to_scalar(other, &s);
    const Array& y = scalar_operand(x.dtype(), s, x.device());
    Array out = op.reflected ? binary(op.op, y, x) : binary(op.op, x, y);
    return slots.wrap(std::move(out), dtype, weak, committed).release().ptr();
  } catch (py::error_already_set& e) {
    e.restore();
    return nullptr;
  } catch (const std::exception&) {
    // Devices, shapes, memory: the general path raises JAX's error for these.
    return nullptr;
  }
}

template <int I>
PyObject* call(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  const Operator& op = operators()[I];
  if (nargs != 1) {
    PyErr_Format(PyExc_TypeError, "%s expected 1 argument, got %zd", op.name.c_str(), nargs);
    return nullptr;
  }
  if (PyObject* out = fast(op, self, args[0])) return out;
  if (PyErr_Occurred()) return nullptr;
  PyObject* call_args[] = {self, args[0]};
  return PyObject_Vectorcall(op.general.ptr(), call_args, 2, nullptr);
}

using FastMethod = PyObject* (*)(PyObject*, PyObject* const*, Py_ssize_t);

template <size_t... I>
constexpr std::array<FastMethod, sizeof...(I)> calls(std::index_sequence<I...>) {
  return {&call<int(I)>...};
}

}  // namespace

void bind_eager_operators(py::module_& m) {
  m.def("setup_eager_operators",
        [](py::handle array_type, py::object state, py::object eval_trace, py::tuple same_dtypes,
           py::tuple float_scalar_dtypes, py::object int32) {
          Context& c = context();
          c.slots = &array_slots(array_type);
          c.state = std::move(state);
          c.trace_name = py::str("trace");
          c.eval_trace = std::move(eval_trace);
          c.same_dtypes = std::move(same_dtypes);
          c.float_scalar_dtypes = std::move(float_scalar_dtypes);
          c.int32 = std::move(int32);
        },
        py::arg("array_type"), py::arg("state"), py::arg("eval_trace"), py::arg("same_dtypes"),
        py::arg("float_scalar_dtypes"), py::arg("int32"),
        "Where eager_operator's methods find the current trace (state.trace is eval_trace "
        "when eager) and the dtypes of their fast cases.");
  m.def("eager_operator",
        [](const std::string& name, int op, bool reflected, py::object general) {
          Context& c = context();
          if (!c.slots) throw py::value_error("eager_operator: call setup_eager_operators first");
          int index = -1;
          for (int i = 0; i < int(std::size(kOps)); ++i)
            if (int(kOps[i]) == op) index = 2 * i + int(reflected);
          if (index < 0) throw py::value_error("eager_operator: no fast path for this op");
          static const auto fns = calls(std::make_index_sequence<kNumOperators>());
          Operator& o = operators()[size_t(index)];
          o.op = static_cast<BinaryOp>(op);
          o.reflected = reflected;
          o.name = name;
          py::object doc = general.attr("__doc__");
          o.doc = doc.is_none() ? "" : doc.cast<std::string>();
          o.general = std::move(general);
          o.def = PyMethodDef{o.name.c_str(), reinterpret_cast<PyCFunction>(fns[size_t(index)]),
                              METH_FASTCALL, o.doc.c_str()};
          PyObject* d = PyDescr_NewMethod(c.slots->type(), &o.def);
          if (!d) throw py::error_already_set();
          return py::reinterpret_steal<py::object>(d);
        },
        py::arg("name"), py::arg("op"), py::arg("reflected"), py::arg("general"),
        "A method of the Array class for operator `name` (a BINARY_OPS code: add, sub or mul) "
        "that runs the fast cases itself and calls `general(self, other)` otherwise.");
}

}  // namespace tinyxla
