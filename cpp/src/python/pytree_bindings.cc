// jit's call path in C++, as in JAX's pytree module and jit: the cache keys of a call's
// arguments (flat Arrays, or pytrees flattened into leaves), the leaves of a tree, waiting for a tree's
// Arrays, and rebuilding an output tree. Node types come from tree_util's registry, whose
// flatten and unflatten functions are called from here; tuples and lists are walked
// directly. The walks keep their own stack: trees may be deep.
#include "pytree_bindings.h"

#include <pybind11/stl.h>

#include <functional>
#include <string>
#include <vector>

#include "array_objects.h"
#include "tinyxla/array.h"

namespace py = pybind11;

namespace tinyxla {
namespace {

struct Registry {
  py::object type_nodes;    // tree_util._type_nodes: type -> (type, node) or None
  py::object node_of_type;  // tree_util._node_of_type, which fills type_nodes
  py::object array_type;    // the Python Array class
  const ArraySlots* slots = nullptr;  // array_type's slots
};

Registry& registry() {
  static auto* r = new Registry();  // never destroyed: Python objects outlive static teardown
  return *r;
}

bool is_scalar_type(PyTypeObject* t) {
  return t == &PyBool_Type || t == &PyLong_Type || t == &PyFloat_Type || t == &PyComplex_Type;
}

// The registry's (type, node) for type t, or None for a leaf type.
py::object node_entry(PyTypeObject* t) {
  const Registry& r = registry();
  if (!r.type_nodes) throw std::runtime_error("pytree: the registry is not set");
  PyObject* hit = PyDict_GetItemWithError(r.type_nodes.ptr(), reinterpret_cast<PyObject*>(t));
  if (hit) return py::reinterpret_borrow<py::object>(hit);
  if (PyErr_Occurred()) throw py::error_already_set();
  return r.node_of_type(py::handle(reinterpret_cast<PyObject*>(t)));
}

// Walks `tree` in JAX's leaf order. on_node(type, arity, aux) for each node (aux: nullptr
// for tuples and lists), on_leaf(leaf) for each leaf; a visitor returning false stops the
// walk, and walk returns false.
template <typename OnNode, typename OnLeaf>
bool walk(py::handle tree, OnNode on_node, OnLeaf on_leaf) {
  const PyObject* array_type = registry().array_type.ptr();
  std::vector<py::object> held;  // children sequences made by flatten functions
  std::vector<PyObject*> stack{tree.ptr()};
  while (!stack.empty()) {
    PyObject* o = stack.back();
    stack.pop_back();
    PyTypeObject* t = Py_TYPE(o);
    PyObject* children;
    if (t == &PyTuple_Type || t == &PyList_Type) {
      children = o;
      if (!on_node(t, PySequence_Fast_GET_SIZE(o), nullptr)) return false;
    } else if (reinterpret_cast<const PyObject*>(t) == array_type || is_scalar_type(t)) {
      if (!on_leaf(o)) return false;
      continue;
    } else {
      py::object entry = node_entry(t);
      if (entry.is_none()) {
        if (!on_leaf(o)) return false;
        continue;
      }
      py::tuple flat = py::reinterpret_borrow<py::tuple>(entry)[1].attr("flatten")(py::handle(o));
      PyObject* seq = PySequence_Fast(flat[0].ptr(), "pytree: flatten must return a sequence");
      if (!seq) throw py::error_already_set();
      held.push_back(py::reinterpret_steal<py::object>(seq));
      children = seq;
      if (!on_node(t, PySequence_Fast_GET_SIZE(seq), flat[1].ptr())) return false;
    }
    PyObject** items = PySequence_Fast_ITEMS(children);
    for (Py_ssize_t i = PySequence_Fast_GET_SIZE(children); i-- > 0;) stack.push_back(items[i]);
  }
  return true;
}

// A jit cache key of pytree arguments: the bytes of the tree's shape and leaf signatures,
// and each registered node's type and aux data. As in JAX, aux data is compared by value
// but not hashed (optimizers keep lists in it).
struct TreeKey {
  std::string bytes;
  py::list nodes;

  bool operator==(const TreeKey& o) const {
    if (bytes != o.bytes || nodes.size() != o.nodes.size()) return false;
    for (size_t i = 0; i < nodes.size(); ++i) {
      const int eq = PyObject_RichCompareBool(nodes[i].ptr(), o.nodes[i].ptr(), Py_EQ);
      if (eq < 0) throw py::error_already_set();
      if (eq == 0) return false;
    }
    return true;
  }
};

void put(std::string& key, int64_t v) { key.append(reinterpret_cast<const char*>(&v), sizeof v); }

// Appends a Python Array's part of a jit key (dtype, weak type, committed device, shape) to
// `key`. False for anything else, and for an Array laid out over a mesh (its `_committed`
// is then its ShardLayout, not a bool: sharded jit runs it) or deleted (the general path
// says what it is).
bool put_array_signature(PyObject* o, std::string& key) {
  static const py::str h_name("_h"), weak_name("weak_type"), committed_name("_committed");
  // Other types are refused before an attribute lookup could raise (costly on this path).
  if (reinterpret_cast<PyObject*>(Py_TYPE(o)) != registry().array_type.ptr()) return false;
  const ArraySlots& slots = *registry().slots;
  const py::object committed_obj = slots.slot_or_attr(o, &ArraySlots::committed, committed_name);
  PyObject* c = committed_obj.ptr();
  if (c != Py_True && c != Py_False) return false;
  const py::object handle = slots.slot_or_attr(o, &ArraySlots::handle, h_name);
  if (!handle || !py::isinstance<Array>(handle)) return false;
  const Array& x = handle.cast<const Array&>();
  const py::object weak_obj = slots.slot_or_attr(o, &ArraySlots::weak_type, weak_name);
  if (!weak_obj) return false;
  const bool weak = PyObject_IsTrue(weak_obj.ptr()) == 1;
  const bool committed = c == Py_True;
  put(key, int64_t(x.dtype()) | int64_t(weak) << 8 | int64_t(committed) << 9 |
               int64_t(committed ? x.device() : 0) << 16 | int64_t(x.ndim()) << 40);
  for (int64_t d : x.shape()) put(key, d);
  return true;
}

// The jit cache key of a call whose positional arguments are all Arrays of the Python
// layer: `salt`, then each argument's signature, as bytes; None otherwise (the pytree path
// or the general one takes the call).
py::object jit_signature(py::sequence args, int64_t salt) {
  std::string key;
  key.reserve(8 + 32 * args.size());
  put(key, salt);
  for (py::handle a : args)
    if (!put_array_signature(a.ptr(), key)) return py::none();
  return py::bytes(key);
}

// The jit cache key and leaves of a call whose argument leaves are all Arrays or Python
// scalars: (leaves, TreeKey), or None. The key's bytes are `salt`, the tree's shape (node
// kinds and arities in preorder) and per leaf its Array signature, or for a Python scalar
// its type alone (its abstract value, weak or for bool strong, depends on nothing else).
py::object jit_flatten(py::handle args, int64_t salt) {
  constexpr int64_t kScalar = int64_t(1) << 62, kTuple = int64_t(1) << 61,
                    kList = int64_t(1) << 60, kNode = int64_t(1) << 59;
  std::string key;
  key.reserve(256);
  put(key, salt);
  py::list leaves;
  py::list nodes;  // type, aux of each registered node
  const bool ok = walk(
      args,
      [&](PyTypeObject* t, Py_ssize_t n, PyObject* aux) {
        if (!aux) {
          put(key, (t == &PyTuple_Type ? kTuple : kList) | int64_t(n));
          return true;
        }
        put(key, kNode | int64_t(n));
        nodes.append(py::handle(reinterpret_cast<PyObject*>(t)));
        nodes.append(py::handle(aux));
        return true;
      },
      [&](PyObject* o) {
        PyTypeObject* t = Py_TYPE(o);
        if (is_scalar_type(t)) {
          put(key, kScalar | (t == &PyBool_Type ? 1 : t == &PyLong_Type ? 2 : t == &PyFloat_Type ? 3 : 4));
        } else if (!put_array_signature(o, key)) {
          return false;
        }
        leaves.append(py::handle(o));
        return true;
      });
  if (!ok) return py::none();
  return py::make_tuple(leaves, TreeKey{std::move(key), std::move(nodes)});
}

py::list tree_leaves(py::handle tree) {
  py::list leaves;
  walk(
      tree, [](PyTypeObject*, Py_ssize_t, PyObject*) { return true; },
      [&](PyObject* o) {
        leaves.append(py::handle(o));
        return true;
      });
  return leaves;
}

// Waits for every Array leaf of `tree` that holds one handle, in order (the first failed
// computation raises); returns the other leaves, for the caller to wait on.
py::list wait_tree(py::handle tree) {
  static const py::str h_name("_h");
  const PyObject* array_type = registry().array_type.ptr();
  // The handles' Arrays by address, kept alive by `held` (copies of Arrays, at 104 bytes
  // each, made a vector big enough to send glibc into malloc_consolidate at every call).
  std::vector<py::object> held;
  std::vector<const Array*> handles;
  py::list others;
  walk(
      tree, [](PyTypeObject*, Py_ssize_t, PyObject*) { return true; },
      [&](PyObject* o) {
        if (reinterpret_cast<const PyObject*>(Py_TYPE(o)) == array_type) {
          py::object handle = registry().slots->slot_or_attr(o, &ArraySlots::handle, h_name);
          if (handle && py::isinstance<Array>(handle)) {
            handles.push_back(&handle.cast<const Array&>());
            held.push_back(std::move(handle));
            return true;
          }
        }
        others.append(py::handle(o));
        return true;
      });
  {
    py::gil_scoped_release release;
    for (const Array* a : handles) a->wait();
  }
  return others;
}

// An output tree's rebuilding, compiled from its treedef once: postorder steps, each a
// leaf, a tuple or list of the last n values, None, or a registered unflatten(aux, children).
class TreeBuilder {
 public:
  enum Op { kLeaf = 0, kTuple = 1, kList = 2, kNone = 3, kCall = 4 };
  struct Step {
    int op;
    Py_ssize_t n;
    py::object fn, aux;
  };

  explicit TreeBuilder(const std::vector<py::tuple>& program) {
    Py_ssize_t depth = 0;
    for (const py::tuple& s : program) {
      Step step{s[0].cast<int>(), s[1].cast<Py_ssize_t>(), s[2], s[3]};
      if (step.op < kLeaf || step.op > kCall || step.n < 0 || step.n > depth)
        throw py::value_error("TreeBuilder: malformed program");
      if (step.op == kLeaf) ++num_leaves_;
      depth += 1 - (step.op == kLeaf || step.op == kNone ? 0 : step.n);
      steps_.push_back(std::move(step));
    }
    if (depth != 1) throw py::value_error("TreeBuilder: the program must build one tree");
  }

  py::object build(py::handle leaves_in) const {
    py::object fast = py::reinterpret_steal<py::object>(
        PySequence_Fast(leaves_in.ptr(), "TreeBuilder: leaves must be a sequence"));
    if (!fast) throw py::error_already_set();
    const Py_ssize_t n = PySequence_Fast_GET_SIZE(fast.ptr());
    if (n != num_leaves_)
      throw py::value_error("Too " + std::string(n < num_leaves_ ? "few" : "many") +
                            " leaves for PyTreeDef; expected " + std::to_string(num_leaves_) +
                            ", got " + std::to_string(n));
    PyObject** leaves = PySequence_Fast_ITEMS(fast.ptr());
    std::vector<py::object> stack;
    Py_ssize_t next = 0;
    for (const Step& s : steps_) {
      switch (s.op) {
        case kLeaf: stack.push_back(py::reinterpret_borrow<py::object>(leaves[next++])); break;
        case kNone: stack.push_back(py::none()); break;
        default: {
          const size_t first = stack.size() - size_t(s.n);
          py::object node;
          if (s.op == kTuple) {
            py::tuple t(s.n);
            for (Py_ssize_t i = 0; i < s.n; ++i) t[i] = std::move(stack[first + size_t(i)]);
            node = std::move(t);
          } else {
            py::list l(s.n);
            for (Py_ssize_t i = 0; i < s.n; ++i) l[i] = std::move(stack[first + size_t(i)]);
            node = s.op == kList ? py::object(std::move(l)) : s.fn(s.aux, l);
          }
          stack.resize(first);
          stack.push_back(std::move(node));
        }
      }
    }
    return std::move(stack.back());
  }

  Py_ssize_t num_leaves() const { return num_leaves_; }

 private:
  std::vector<Step> steps_;
  Py_ssize_t num_leaves_ = 0;
};

}  // namespace

void bind_pytree(py::module_& m) {
  m.def(
      "set_pytree_registry",
      [](py::object type_nodes, py::object node_of_type) {
        registry().type_nodes = std::move(type_nodes);
        registry().node_of_type = std::move(node_of_type);
      },
      "Sets tree_util's node cache and the function that fills it, for the C++ walks.");
  m.def(
      "set_pytree_array_type",
      [](py::object array_type) {
        registry().slots = &array_slots(array_type);
        registry().array_type = std::move(array_type);
      },
      "Sets the Array class, whose instances the walks take as leaves without a lookup.");
  m.def("jit_signature", &jit_signature, py::arg("args"), py::arg("salt"),
        "The jit cache key of a call whose arguments are all Arrays, else None.");
  m.def("jit_flatten", &jit_flatten, py::arg("args"), py::arg("salt"),
        "(leaves, key) of a jit call whose leaves are Arrays or Python scalars, else None.");
  m.def("tree_leaves", &tree_leaves, "The leaves of a pytree, in order.");
  m.def("wait_tree", &wait_tree,
        "Waits for the tree's Arrays; returns the leaves it did not wait for.");
  py::class_<TreeKey>(m, "TreeKey")
      .def("__eq__", [](const TreeKey& a, py::handle b) {
        return py::isinstance<TreeKey>(b) && a == b.cast<const TreeKey&>();
      })
      .def("__hash__", [](const TreeKey& k) { return py::ssize_t(std::hash<std::string>()(k.bytes)); });
  py::class_<TreeBuilder>(m, "TreeBuilder")
      .def(py::init<const std::vector<py::tuple>&>())
      .def("__call__", &TreeBuilder::build)
      .def_property_readonly("num_leaves", &TreeBuilder::num_leaves);
}

}  // namespace tinyxla
