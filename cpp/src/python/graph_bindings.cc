// Python bindings of the graph IR and jit: GraphBuilder, Graph, parse_graph, compile and
// Executable. Thin: argument conversion and calls. Value ids are ints; dtypes and ops are
// the integer codes of _core (DType order, UNARY_OPS / BINARY_OPS / REDUCE_OPS).
#include "graph_bindings.h"

#include <pybind11/stl.h>

#include "array_objects.h"
#include "tinyxla/compiler.h"
#include "tinyxla/error.h"
#include "tinyxla/graph.h"

namespace py = pybind11;

namespace tinyxla {
namespace {

DType dtype_code(int code) {
  if (code < 0 || code >= kNumDTypes)
    throw_error(ErrorKind::InvalidArgument, "graph", "bad dtype code " + std::to_string(code));
  return static_cast<DType>(code);
}

py::tuple shape_tuple(const Shape& s) {
  py::tuple t(s.size());
  for (size_t i = 0; i < s.size(); ++i) t[i] = py::int_(s[i]);
  return t;
}

std::shared_ptr<Executable> compile_graph(const Graph& g, bool simplify, bool fuse,
                                          bool fuse_epilogues, const std::string& name) {
  CompileOptions options;
  options.simplify = simplify;
  options.fuse = fuse;
  options.fuse_epilogues = fuse_epilogues;
  options.name = name;
  return compile(g, options);
}

// Executable::run for jit's cached calls: `args` are Python Arrays of the parameters'
// dtypes; the run goes to the first committed argument's device, else `default_device`;
// the results come back as Python Arrays of `array_type` with `out_meta`'s (weak type,
// dtype) per output, committed when an argument was, as the Python layer's _wrap makes them.
// Arguments marked in `donated` are deleted (their `delete` method) once their handles are
// taken, so the run holds the only reference and may write a result into the buffer.
py::list call_arrays(const Executable& e, py::sequence args, int default_device,
                     py::sequence out_meta, py::handle array_type,
                     const std::vector<bool>& donated_mask) {
  static const py::str h_name("_h"), committed_name("_committed"), delete_name("delete");
  if (!donated_mask.empty() && donated_mask.size() != args.size())
    throw std::invalid_argument("call_arrays: donated has " + std::to_string(donated_mask.size()) +
                                " entries for " + std::to_string(args.size()) + " arguments");
  const ArraySlots& slots = array_slots(array_type);
  // At the slot's offset when set (no lookup through Array's __getattr__ hook); a missing
  // attribute raises its AttributeError.
  auto attr = [&](py::handle a, PyObject* (ArraySlots::*slot)(PyObject*) const,
                  const py::str& name) {
    py::object v = slots.slot_or_attr(a.ptr(), slot, name);
    return v ? v : py::getattr(a, name);
  };
  std::vector<Array> handles;
  handles.reserve(args.size());
  int device = -1;
  for (py::handle a : args) {
    handles.push_back(attr(a, &ArraySlots::handle, h_name).cast<Array>());
    if (device < 0 && PyObject_IsTrue(attr(a, &ArraySlots::committed, committed_name).ptr()) == 1)
      device = handles.back().device();
  }
  const std::vector<char> donated(donated_mask.begin(), donated_mask.end());
  for (size_t i = 0; i < donated.size(); ++i)
    if (donated[i]) args[i].attr(delete_name)();
  const bool committed = device >= 0;
  std::vector<Array> outs;
  {
    py::gil_scoped_release release;
    outs = e.run(std::move(handles), committed ? device : default_device, donated);
  }
  if (out_meta.size() != outs.size())
    throw std::invalid_argument("call_arrays: out_meta has " + std::to_string(out_meta.size()) +
                                " entries for " + std::to_string(outs.size()) + " outputs");
  PyObject* committed_value = committed ? Py_True : Py_False;
  py::list result(outs.size());
  for (size_t i = 0; i < outs.size(); ++i) {
    py::tuple meta = py::reinterpret_borrow<py::tuple>(out_meta[i]);
    result[i] = slots.wrap(std::move(outs[i]), meta[1].ptr(), meta[0].ptr(), committed_value);
  }
  return result;
}

}  // namespace

void bind_graph(py::module_& m) {
  using V = ValueId;
  using Ints = std::vector<int64_t>;
  using B = GraphBuilder;

  py::class_<Graph, std::shared_ptr<Graph>>(m, "Graph")
      .def("text", &Graph::to_text)
      .def_property_readonly("num_nodes", &Graph::num_nodes)
      .def("verify", &Graph::verify)
      .def("identical_to", &Graph::identical_to)
      .def("__str__", &Graph::to_text);

  py::class_<B>(m, "GraphBuilder")
      .def(py::init<>())
      .def("parameter", [](B& b, Ints shape, int dtype) { return b.parameter(shape, dtype_code(dtype)); })
      .def("constant", [](B& b, const Array& value) { return b.constant(value); })
      .def("unary", [](B& b, int op, V x) { return b.unary(static_cast<UnaryOp>(op), x); })
      .def("binary", [](B& b, int op, V x, V y) { return b.binary(static_cast<BinaryOp>(op), x, y); })
      .def("select_n", &B::select_n)
      .def("clamp", &B::clamp)
      .def("convert", [](B& b, V x, int dtype) { return b.convert(x, dtype_code(dtype)); })
      .def("bitcast_convert", [](B& b, V x, int dtype) { return b.bitcast_convert(x, dtype_code(dtype)); })
      .def("iota", [](B& b, int dtype, Ints shape, int64_t dimension) {
        return b.iota(dtype_code(dtype), shape, dimension);
      })
      .def("reduce", [](B& b, int op, V x, Ints axes) { return b.reduce(static_cast<ReduceOp>(op), x, axes); })
      .def("argreduce", [](B& b, bool is_max, V x, int64_t axis, int index_dtype) {
        return b.argreduce(is_max, x, axis, dtype_code(index_dtype));
      })
      .def("reshape", &B::reshape)
      .def("transpose", &B::transpose)
      .def("broadcast_in_dim", &B::broadcast_in_dim)
      .def("slice", &B::slice, py::arg("x"), py::arg("start"), py::arg("limit"),
           py::arg("strides") = Ints{})
      .def("pad", &B::pad)
      .def("concatenate", &B::concatenate)
      .def("rev", &B::rev)
      .def("cumulative", [](B& b, int op, V x, int64_t axis, bool reverse) {
        return b.cumulative(static_cast<CumulativeOp>(op), x, axis, reverse);
      })
      .def("sort", [](B& b, const std::vector<V>& xs, int64_t dimension, int num_keys) {
        const V first = b.sort(xs, dimension, num_keys);
        std::vector<V> results;
        for (size_t i = 0; i < xs.size(); ++i) results.push_back(first + V(i));
        return results;
      })
      .def("while_loop", [](B& b, V pred, const std::vector<V>& inputs, int64_t num_consts,
                            const B& body) {
        auto graph = std::make_shared<const Graph>(body.build());
        const size_t carry = inputs.size() - size_t(num_consts);
        const V first = b.while_loop(pred, inputs, num_consts, graph);
        std::vector<V> results;
        for (size_t i = 0; i < carry; ++i) results.push_back(first + V(i));
        return results;
      })
      .def("eig", [](B& b, V x, bool compute_left, bool compute_right) {
        const V first = b.eig(x, compute_left, compute_right);
        std::vector<V> results{first};
        for (int i = 0; i < int(compute_left) + int(compute_right); ++i) results.push_back(first + 1 + V(i));
        return results;
      })
      .def("eigh", [](B& b, V x, bool lower) {
        const V first = b.eigh(x, lower);
        return std::vector<V>{first, first + 1};
      })
      .def("gather", [](B& b, V x, V indices, Ints offset_dims, Ints collapsed, Ints start_index_map,
                        Ints operand_batching, Ints indices_batching, Ints slice_sizes, int mode,
                        V fill_value) {
        GatherDims d{offset_dims, collapsed, start_index_map, operand_batching, indices_batching};
        return b.gather(x, indices, d, slice_sizes, static_cast<IndexMode>(mode), fill_value);
      })
      .def("scatter", [](B& b, int op, V x, V indices, V updates, Ints update_window_dims,
                         Ints inserted, Ints scatter_dims_to_operand_dims, Ints operand_batching,
                         Ints indices_batching, int mode) {
        GatherDims d{update_window_dims, inserted, scatter_dims_to_operand_dims, operand_batching,
                     indices_batching};
        return b.scatter(static_cast<ScatterOp>(op), x, indices, updates, d,
                         static_cast<IndexMode>(mode));
      })
      .def("dynamic_slice", &B::dynamic_slice)
      .def("dynamic_update_slice", &B::dynamic_update_slice)
      .def("dot_general", [](B& b, V lhs, V rhs, Ints lc, Ints rc, Ints lb, Ints rb, int preferred) {
        std::optional<DType> p;
        if (preferred >= 0) p = dtype_code(preferred);
        return b.dot_general(lhs, rhs, DotDims{lc, rc, lb, rb}, p);
      }, py::arg("lhs"), py::arg("rhs"), py::arg("lhs_contracting"), py::arg("rhs_contracting"),
         py::arg("lhs_batch"), py::arg("rhs_batch"), py::arg("preferred") = -1)
      .def("set_outputs", &B::set_outputs)
      .def("shape", [](const B& b, V v) { return shape_tuple(b.type(v).shape); })
      .def("dtype_code", [](const B& b, V v) { return int(b.type(v).dtype); })
      .def("build", [](const B& b) { return std::make_shared<Graph>(b.build()); })
      .def("text", [](const B& b) { return b.graph().to_text(); });

  m.def("parse_graph", [](const std::string& text) { return std::make_shared<Graph>(parse_graph(text)); });

  py::class_<Executable, std::shared_ptr<Executable>>(m, "Executable")
      .def("run", [](const Executable& e, std::vector<Array> args, int device) {
        return e.run(std::move(args), device);
      }, py::arg("args"), py::arg("device") = 0, py::call_guard<py::gil_scoped_release>())
      // Donated arguments: the list's entries are taken out before the run, so once the
      // caller has dropped its own handles the graph holds the only reference and may
      // write an output into the buffer.
      .def("run_donating", [](const Executable& e, py::list args, int device,
                              const std::vector<bool>& donated_mask) {
        const std::vector<char> donated(donated_mask.begin(), donated_mask.end());
        std::vector<Array> xs;
        xs.reserve(args.size());
        for (size_t i = 0; i < args.size(); ++i) {
          xs.push_back(args[i].cast<Array>());
          if (i < donated.size() && donated[i]) args[i] = py::none();
        }
        py::gil_scoped_release release;
        return e.run(std::move(xs), device, donated);
      }, py::arg("args"), py::arg("device"), py::arg("donated"))
      .def("call_arrays", &call_arrays, py::arg("args"), py::arg("default_device"),
           py::arg("out_meta"), py::arg("array_type"), py::arg("donated") = std::vector<bool>{})
      .def("text", &Executable::text)
      .def_property_readonly("num_kernels", &Executable::num_kernels)
      .def_property_readonly("tier", &Executable::tier)
      .def("wait_codegen", &Executable::wait_codegen, py::call_guard<py::gil_scoped_release>())
      .def_property_readonly("codegen_status", &Executable::codegen_status)
      .def_property_readonly("codegen_source", &Executable::codegen_source)
      .def_property_readonly("codegen_kernel_runs", &Executable::codegen_kernel_runs);

  m.def("compile", [](const B& b, bool simplify, bool fuse, bool fuse_epilogues,
                       const std::string& name) {
    return compile_graph(b.graph(), simplify, fuse, fuse_epilogues, name);
  }, py::arg("builder"), py::arg("simplify") = true, py::arg("fuse") = true,
     py::arg("fuse_epilogues") = true, py::arg("name") = "",
     py::call_guard<py::gil_scoped_release>());
  m.def("compile", [](const Graph& g, bool simplify, bool fuse, bool fuse_epilogues,
                       const std::string& name) {
    return compile_graph(g, simplify, fuse, fuse_epilogues, name);
  }, py::arg("graph"), py::arg("simplify") = true, py::arg("fuse") = true,
     py::arg("fuse_epilogues") = true, py::arg("name") = "",
     py::call_guard<py::gil_scoped_release>());
}

}  // namespace tinyxla
