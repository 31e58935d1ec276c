// The generic op binding: _core.make_op(name, attrs) returns a cached handle that runs the
// op eagerly (a one-node graph, runtime/eager.h), and GraphBuilder.op(name, attrs, inputs)
// adds it to a graph. Attributes cross as a dict whose keys and values each op's
// definition derives from its attribute record (ops/op_def.h): ints, lists of ints, and
// enum names ("add", "fill_or_drop") or codes; dtypes as _core dtype codes.
#include "op_bindings.h"

#include <pybind11/stl.h>

#include <mutex>
#include <unordered_map>

#include "ops/mpi_collective.h"
#include "ops/op_def.h"
#include "runtime/eager.h"

namespace py = pybind11;

namespace tinyxla {
namespace {

// One op kind with fixed attributes, ready to run.
struct EagerOp {
  OpKind kind;
  std::any attrs;
  bool multiple_results;
};

const ops::OpDef& def_named(const std::string& name) {
  const std::optional<OpKind> kind = ops::op_kind_named(name);
  if (!kind) throw_error(ErrorKind::InvalidArgument, name, "no op of this name is registered");
  return ops::op_def(*kind);
}

ops::AttrFields to_fields(const ops::OpDef& def, const py::dict& attrs) {
  ops::AttrFields fields;
  for (auto [k, v] : attrs) {
    const std::string key = py::str(k);
    if (py::isinstance<py::str>(v)) {
      fields.emplace_back(key, v.cast<std::string>());
    } else if (PyBool_Check(v.ptr()) || PyLong_Check(v.ptr()) || py::hasattr(v, "__index__")) {
      fields.emplace_back(key, int64_t(py::int_(py::reinterpret_borrow<py::object>(v))));
    } else if (v.is_none()) {
      fields.emplace_back(key, int64_t(-1));
    } else if (py::isinstance<py::sequence>(v)) {
      std::vector<int64_t> list;
      for (py::handle e : py::reinterpret_borrow<py::sequence>(v)) list.push_back(py::int_(py::reinterpret_borrow<py::object>(e)));
      fields.emplace_back(key, std::move(list));
    } else {
      throw_error(ErrorKind::TypeError, def.name(),
                  "attribute '" + key + "' must be an int, a list of ints or a name");
    }
  }
  return fields;
}

py::dict to_dict(const ops::AttrFields& fields) {
  py::dict d;
  for (const auto& [key, value] : fields)
    std::visit([&d, &key = key](const auto& v) { d[py::str(key)] = py::cast(v); }, value);
  return d;
}

std::shared_ptr<EagerOp> make_op(const std::string& name, const py::dict& attrs) {
  const ops::OpDef& def = def_named(name);
  if (!def.runs()) throw_error(ErrorKind::InvalidArgument, name, "does not run as an op");
  std::any record = def.from_fields(to_fields(def, attrs));
  std::string key = name + '\0';
  def.append_key(record, key);
  static std::mutex m;
  static std::unordered_map<std::string, std::shared_ptr<EagerOp>> cache;
  std::lock_guard<std::mutex> lock(m);
  std::shared_ptr<EagerOp>& op = cache[key];
  if (!op) op = std::make_shared<EagerOp>(EagerOp{def.kind(), std::move(record), def.multiple_results()});
  return op;
}

// Runs `op` on `args` (Arrays, or numbers taking the first Array's dtype and device).
py::object call(const EagerOp& op, const py::args& args, int device) {
  std::vector<Array> ins;
  ins.reserve(args.size());
  const Array* like = nullptr;
  for (py::handle h : args)
    if (py::isinstance<Array>(h)) {
      like = &h.cast<const Array&>();
      break;
    }
  for (py::handle h : args) {
    if (py::isinstance<Array>(h)) {
      ins.push_back(h.cast<const Array&>());
    } else {
      if (!like) throw py::type_error("at least one operand must be an Array");
      ins.push_back(operand(h, like->dtype(), like->device()));
    }
  }
  std::vector<Array> outs = runtime::run_op(op.kind, op.attrs, ins, device);
  if (op.multiple_results) return py::cast(std::move(outs));
  return py::cast(std::move(outs[0]));
}

}  // namespace

bool to_scalar(py::handle h, Scalar* s) {
  PyObject* o = h.ptr();
  if (PyBool_Check(o)) {
    *s = Scalar::of_bool(o == Py_True);
  } else if (PyLong_Check(o)) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow > 0) {
      unsigned long long u = PyLong_AsUnsignedLongLong(o);
      if (PyErr_Occurred()) throw py::error_already_set();
      *s = Scalar::of_uint(u);
    } else if (overflow < 0) {
      throw py::value_error("Python int too large to convert to int64");
    } else {
      *s = Scalar::of_int(v);
    }
  } else if (PyFloat_Check(o)) {
    *s = Scalar::of_float(PyFloat_AS_DOUBLE(o));
  } else if (PyComplex_Check(o)) {
    *s = Scalar::of_complex(PyComplex_RealAsDouble(o), PyComplex_ImagAsDouble(o));
  } else if (py::hasattr(h, "dtype") && py::hasattr(h, "item") && !py::isinstance<Array>(h)) {
    return to_scalar(h.attr("item")(), s);
  } else {
    return false;
  }
  return true;
}

Array operand(py::handle h, DType dtype, int device) {
  if (py::isinstance<Array>(h)) return h.cast<const Array&>();
  Scalar s;
  if (!to_scalar(h, &s)) throw py::type_error("expected an Array or a Python scalar");
  return scalar(dtype, s, device);
}

void bind_ops(py::module_& m) {
  py::class_<EagerOp, std::shared_ptr<EagerOp>>(m, "Op", R"doc(
A registered op with fixed attributes (from make_op). op(*operands) runs it eagerly and
returns an Array (a list for ops with multiple results: sort, eig, eigh); operands are
Arrays, or Python numbers taking the first Array's dtype and device. op.run(operands,
device) runs an op without operands (iota) on `device`.)doc")
      .def("__call__", [](const EagerOp& op, py::args args) { return call(op, args, 0); })
      .def("run", [](const EagerOp& op, py::sequence operands, int device) {
        return call(op, py::args(py::tuple(operands)), device);
      }, py::arg("operands"), py::arg("device") = 0)
      .def_property_readonly("name", [](const EagerOp& op) { return op_kind_name(op.kind); })
      .def_property_readonly("attrs", [](const EagerOp& op) {
        return to_dict(ops::op_def(op.kind).fields(op.attrs));
      })
      .def_property_readonly("multiple_results", [](const EagerOp& op) { return op.multiple_results; });

  m.def("make_op", &make_op, py::arg("name"), py::arg("attrs") = py::dict(), R"doc(
The eager handle of op `name` (a C++ op kind: "binary", "gather", ...) with attributes
`attrs`, e.g. make_op("binary", {"op": "add"}) or make_op("reduce", {"op": "sum",
"axes": [0]}). Handles are cached by name and attributes: keep one and call it. Unknown
names or attributes raise ValueError naming the op.)doc");
  m.def("set_mpi_functions", &ops::set_mpi_functions, py::arg("iallreduce"), py::arg("iallgather"),
        py::arg("test"), R"doc(
The addresses of MPI_Iallreduce, MPI_Iallgather and MPI_Test in the process's MPI library,
which mpi_collective nodes call (all 0: none; jax.distributed sets them).)doc");
  m.def("op_kinds", []() {
    py::list names;
#define TINYXLA_NAME_ITEM(name) names.append(#name);
    TINYXLA_GRAPH_OPS(TINYXLA_NAME_ITEM)
#undef TINYXLA_NAME_ITEM
    return names;
  }, "The names of the registered op kinds.");
  m.def("op_attrs", [](const std::string& name) {
    const ops::OpDef& def = def_named(name);
    return to_dict(def.fields(def.default_attrs()));
  }, py::arg("name"), "The attributes of op `name` with their default values.");

  py::class_<GraphBuilder> builder = py::reinterpret_borrow<py::class_<GraphBuilder>>(m.attr("GraphBuilder"));
  builder.def("op", [](GraphBuilder& b, const std::string& name, const py::dict& attrs,
                       const std::vector<ValueId>& inputs) -> py::object {
    const ops::OpDef& def = def_named(name);
    Node n;
    n.kind = def.kind();
    n.attrs = def.from_fields(to_fields(def, attrs));
    n.inputs = inputs;
    const ValueId first = b.add(std::move(n));
    const Node& added = b.graph().node(b.graph().num_nodes() - 1);
    if (!def.multiple_results()) return py::int_(first);
    std::vector<ValueId> results;
    for (int r = 0; r < added.num_results; ++r) results.push_back(first + r);
    return py::cast(results);
  }, py::arg("name"), py::arg("attrs"), py::arg("inputs"), R"doc(
Adds op `name` with attributes `attrs` (as make_op's) on values `inputs`; returns its
result's value id (a list of ids for ops with multiple results).)doc");
}

}  // namespace tinyxla
