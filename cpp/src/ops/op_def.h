// One definition per op kind. An OpDef holds, for its kind: the typed attribute record
// (a struct with a field visitor), type and shape inference with its errors, and the kernel
// or view it runs. Everything else is derived from it: the graph builder, the text form
// (print and parse), equality and hashing for CSE, the eager runner and jit's node runner,
// and the Python binding's attribute marshalling all find the op through op_def(kind).
//
// An attribute record lists its fields once, with how the text form shows each:
//
//   struct ReduceAttrs {
//     ReduceOp op = ReduceOp::sum;
//     std::vector<int64_t> axes;
//     template <class V> void visit(V& v) { v("op", op, kInName); v("axes", axes); }
//   };
//
// Field types: int64_t, bool (printed 0/1), std::vector<int64_t> (and Shape), DType,
// std::optional<DType>, and the enums that have an EnumNames specialisation below.
#pragma once
#include <any>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <typeinfo>
#include <utility>
#include <variant>
#include <vector>

#include "tinyxla/dtype.h"
#include "tinyxla/error.h"
#include "tinyxla/graph.h"
#include "tinyxla/shape.h"

namespace tinyxla::ops {

// What every family's inference rules share; each family's own rules sit in its file, in
// this namespace, beside the definitions that call them.
namespace infer {
// An operand's type without copying its shape.
struct TypeRef {
  const Shape* shape;
  DType dtype;
};
[[noreturn]] void invalid(const std::string& op, const std::string& msg);
std::string ints_str(const std::vector<int64_t>& v);
// Operands of one op need equal dtypes (JAX's TypeError).
void check_same_dtypes(const std::string& op, const std::vector<DType>& dtypes);
// The operands' shapes as JAX's messages list them ("(2, 3), (3,)" with sep ", "); built
// only for a message, never on the way to a result.
std::string shapes_str(const std::vector<TypeRef>& xs, const char* sep);
}  // namespace infer

// Operand types and operand/result arrays, as every definition's infer and run take them.
using Types = std::vector<infer::TypeRef>;
using Arrays = std::vector<Array>;

// How a field appears in the text form.
enum AttrFlags : int {
  kText = 0,          // "{name=value}"
  kOmitEmpty = 1,     // a list printed only when it is not empty, a bool only when true
  kResultShape = 2,   // carried by the first result's type, not printed
  kResultDtype = 4,   // the first result's dtype, not printed
  kInName = 8,        // an enum spelled in the op's name ("reduce_sum", "cumprod")
  kPositional = 16,   // printed among the operands ("parameter(0)")
};
constexpr int kNotInBraces = kResultShape | kResultDtype | kInName | kPositional;

// An attribute as the Python binding passes it: an integer (ints, bools, dtype codes,
// enum codes; -1 for no dtype), a list of integers, or a name (enums).
using AttrValue = std::variant<int64_t, std::vector<int64_t>, std::string>;
using AttrFields = std::vector<std::pair<std::string, AttrValue>>;

// The enums that may be attributes: how many values and each one's name.
template <class E> struct EnumNames;
#define TINYXLA_OP_ENUM(E, COUNT_LIST)                                      \
  template <> struct EnumNames<E> {                                        \
    static constexpr int count = 0 COUNT_LIST(TINYXLA_OP_ENUM_COUNT);      \
    static const char* name(int i) { return op_name(static_cast<E>(i)); }  \
  };
#define TINYXLA_OP_ENUM_COUNT(name) +1
TINYXLA_OP_ENUM(UnaryOp, TINYXLA_UNARY_OPS)
TINYXLA_OP_ENUM(BinaryOp, TINYXLA_BINARY_OPS)
TINYXLA_OP_ENUM(ReduceOp, TINYXLA_REDUCE_OPS)
TINYXLA_OP_ENUM(ScatterOp, TINYXLA_SCATTER_OPS)
TINYXLA_OP_ENUM(CumulativeOp, TINYXLA_CUMULATIVE_OPS)
#undef TINYXLA_OP_ENUM_COUNT
#undef TINYXLA_OP_ENUM
template <> struct EnumNames<IndexMode> {
  static constexpr int count = 2;
  static const char* name(int i) { return i == 0 ? "clip" : "fill_or_drop"; }
};

// Reads attribute values from the text form (the parser implements it).
class AttrReader {
 public:
  virtual ~AttrReader() = default;
  virtual int64_t integer() = 0;
  virtual std::vector<int64_t> int_list() = 0;
  // Rejects the value just read (an enum code or dtype code out of range), saying where.
  [[noreturn]] virtual void reject(const std::string& why) = 0;
};

class OpDef {
 public:
  explicit OpDef(OpKind kind) : kind_(kind) {}
  virtual ~OpDef() = default;
  OpKind kind() const { return kind_; }
  const char* name() const { return op_kind_name(kind_); }

  // ---- attributes (TypedOpDef derives these from the record's visit()) ----
  virtual std::any default_attrs() const = 0;
  virtual const std::type_info& attrs_type() const = 0;
  // The op name the text form prints for these attributes ("reduce_sum"), and every name
  // it reads with the attributes that name implies.
  virtual std::string spelling(const std::any& attrs) const = 0;
  virtual std::vector<std::pair<std::string, std::any>> spellings() const = 0;
  // "key=value, ..." of the printed fields ("" when none).
  virtual std::string print_attrs(const std::any& attrs) const = 0;
  // Reads the value of printed field `key`; false when the kind has no such field.
  virtual bool parse_attr(std::any& attrs, const std::string& key, AttrReader& in) const = 0;
  // Sets the fields that the result types carry (see kResultShape, kResultDtype).
  virtual void take_result_types(std::any& attrs, const std::vector<ValueType>& types) const = 0;
  // Bytes that equal nodes share: every field, for equality and CSE's hash.
  virtual void append_key(const std::any& attrs, std::string& key) const = 0;
  // The fields by name, and a record from fields by name (absent ones keep their default;
  // an unknown name or a value of the wrong kind throws, naming the op).
  virtual AttrFields fields(const std::any& attrs) const = 0;
  virtual std::any from_fields(const AttrFields& fields) const = 0;

  // ---- semantics ----
  // The result types of operands `ins`; makes the attributes canonical (non-negative axes)
  // and throws the op's Error (op name first) for invalid operands or attributes.
  virtual std::vector<ValueType> infer(std::any& attrs, const std::vector<infer::TypeRef>& ins) const = 0;
  // Whether results come as a list even when there is one (sort), as JAX's
  // multiple_results.
  virtual bool multiple_results() const { return false; }
  // Whether running it does something besides computing its results (host_callback).
  virtual bool has_side_effects() const { return false; }
  // Whether a graph holding it must run on its device's stream, never on the calling
  // thread (mpi_collective: it waits for other processes).
  virtual bool stream_only() const { return false; }
  // Whether it runs: views and kernels do; parameter, constant and fused do not.
  virtual bool runs() const { return true; }
  // Layout ops whose result is a view of their operand's buffer.
  virtual bool is_view() const { return false; }
  // Views that need a dense operand (reshape, bitcast): a strided one is copied first.
  virtual bool view_needs_dense() const { return false; }
  // The view of `x` (ready or not; dense where view_needs_dense) of result type `type`.
  virtual Array view(const std::any& attrs, const ValueType& type, const Array& x) const;
  // Runs the kernel on ready `ins` into `outs`, dense arrays of the result types.
  virtual void run(const std::any& attrs, const std::vector<Array>& ins,
                   const std::vector<Array>& outs) const;
  // As run() for an op of one result, calling `epilogue(begin, end)` once elements
  // [begin, end) of the result are written, on disjoint ranges that cover it, from any
  // thread. An anchor op (ir/fused_body.h is_anchor) calls it part by part while each part
  // is still in cache; by default it runs over everything once the kernel is done.
  virtual void run_with_epilogue(const std::any& attrs, const std::vector<Array>& ins,
                                 const std::vector<Array>& outs,
                                 const std::function<void(int64_t, int64_t)>& epilogue) const;
  // Element-operations, for the choice of running small work on the caller.
  virtual double cost(const std::any& attrs, const std::vector<Array>& ins,
                      const std::vector<ValueType>& outs) const;

 protected:
  [[noreturn]] void invalid(const std::string& msg) const {
    throw_error(ErrorKind::InvalidArgument, name(), msg);
  }
  // Throws unless there are `count` operands.
  void need(const std::vector<infer::TypeRef>& ins, size_t count) const;

 private:
  OpKind kind_;
};

// The definition of `kind` (every kind has one).
const OpDef& op_def(OpKind kind);
// The kind whose name is `name` ("gather"), or nullopt.
std::optional<OpKind> op_kind_named(const std::string& name);

// Running a node synchronously on ready arrays (jit's executor, the constant folder):
// a dense, ready copy of `x` in a fresh buffer, and the view node `n` makes of ready `x`
// (a strided operand copied first where the view needs a dense one).
Array dense_copy(const Array& x);
Array ready_view(const Node& n, const ValueType& type, const Array& x);

// A node of `kind` with attributes `attrs` and operands `inputs`.
template <class A>
Node make_node(OpKind kind, A attrs, std::vector<ValueId> inputs = {}) {
  Node n;
  n.kind = kind;
  n.attrs = std::move(attrs);
  n.inputs = std::move(inputs);
  return n;
}

namespace detail {

template <class T> struct is_optional : std::false_type {};
template <class T> struct is_optional<std::optional<T>> : std::true_type {};

std::string ints_text(const std::vector<int64_t>& v);
// An enum's printed name ("and_" prints as "and").
std::string enum_text(const char* name);
[[noreturn]] void bad_field(const char* op, const std::string& key, const std::string& why);

template <class T>
void append_bytes(std::string& key, const T& v) {
  key.append(reinterpret_cast<const char*>(&v), sizeof v);
}

// Visitors over one record; `op` names the kind in errors.
struct Printer {
  std::string out;
  template <class T>
  void operator()(const char* name, const T& v, int flags = kText) {
    if (flags & kNotInBraces) return;
    std::string text;
    if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
      if ((flags & kOmitEmpty) && v.empty()) return;
      text = ints_text(v);
    } else if constexpr (std::is_same_v<T, bool>) {
      if ((flags & kOmitEmpty) && !v) return;
      text = v ? "1" : "0";
    } else if constexpr (std::is_enum_v<T>) {
      text = std::to_string(int(v));
    } else if constexpr (is_optional<T>::value) {
      text = std::to_string(v ? int(*v) : -1);
    } else {
      static_assert(std::is_same_v<T, int64_t>, "unprintable attribute type");
      text = std::to_string(v);
    }
    out += (out.empty() ? "" : ", ") + std::string(name) + "=" + text;
  }
};

struct TextReader {
  const std::string& key;
  AttrReader& in;
  bool found = false;
  template <class T>
  void operator()(const char* name, T& v, int flags = kText) {
    if (found || key != name || (flags & kNotInBraces)) return;
    found = true;
    // Codes are checked here: an out-of-range one would index the kinds' name tables.
    if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
      v = in.int_list();
    } else if constexpr (std::is_same_v<T, bool>) {
      const int64_t b = in.integer();
      if (b != 0 && b != 1) in.reject("attribute '" + key + "' must be 0 or 1");
      v = b != 0;
    } else if constexpr (std::is_same_v<T, DType> || is_optional<T>::value) {
      const int64_t code = in.integer();
      if (code < (is_optional<T>::value ? -1 : 0) || code >= kNumDTypes)
        in.reject("attribute '" + key + "' has no dtype code " + std::to_string(code));
      if constexpr (is_optional<T>::value) v = code < 0 ? std::nullopt : std::optional<DType>(DType(code));
      else v = DType(code);
    } else if constexpr (std::is_enum_v<T>) {
      const int64_t code = in.integer();
      if (code < 0 || code >= EnumNames<T>::count)
        in.reject("attribute '" + key + "' has no value " + std::to_string(code));
      v = static_cast<T>(code);
    } else {
      v = in.integer();
    }
  }
};

struct ResultTaker {
  const std::vector<ValueType>& types;
  template <class T>
  void operator()(const char*, T& v, int flags = kText) {
    if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
      if (flags & kResultShape) v = types[0].shape;
    } else if constexpr (std::is_same_v<T, DType> || std::is_same_v<T, std::optional<DType>>) {
      if (flags & kResultDtype) v = types[0].dtype;
    }
  }
};

struct KeyWriter {
  std::string& key;
  template <class T>
  void operator()(const char*, const T& v, int = kText) {
    if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
      append_bytes(key, v.size());
      key.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(int64_t));
    } else if constexpr (is_optional<T>::value) {
      append_bytes(key, v ? int(*v) : -1);
    } else {
      append_bytes(key, v);
    }
  }
};

struct FieldWriter {
  AttrFields out;
  template <class T>
  void operator()(const char* name, const T& v, int = kText) {
    AttrValue value;
    if constexpr (std::is_same_v<T, std::vector<int64_t>>) value = v;
    else if constexpr (is_optional<T>::value) value = int64_t(v ? int(*v) : -1);
    else if constexpr (std::is_same_v<T, DType>) value = int64_t(v);
    else if constexpr (std::is_enum_v<T>) value = std::string(EnumNames<T>::name(int(v)));
    else value = int64_t(v);
    out.emplace_back(name, std::move(value));
  }
};

struct FieldReader {
  const char* op;
  const std::string& key;
  const AttrValue& value;
  bool found = false;
  int64_t integer(const char* name) const {
    if (auto* i = std::get_if<int64_t>(&value)) return *i;
    bad_field(op, name, "expects an integer");
  }
  template <class T>
  void operator()(const char* name, T& v, int = kText) {
    if (found || key != name) return;
    found = true;
    if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
      if (auto* l = std::get_if<std::vector<int64_t>>(&value)) v = *l;
      else bad_field(op, name, "expects a list of integers");
    } else if constexpr (std::is_same_v<T, DType> || is_optional<T>::value) {
      const int64_t code = integer(name);
      if (code < (is_optional<T>::value ? -1 : 0) || code >= kNumDTypes)
        bad_field(op, name, "has no dtype code " + std::to_string(code));
      if constexpr (is_optional<T>::value) v = code < 0 ? std::nullopt : std::optional<DType>(DType(code));
      else v = DType(code);
    } else if constexpr (std::is_enum_v<T>) {
      if (auto* s = std::get_if<std::string>(&value)) {
        for (int i = 0; i < EnumNames<T>::count; ++i)
          if (*s == EnumNames<T>::name(i) || *s == enum_text(EnumNames<T>::name(i))) {
            v = static_cast<T>(i);
            return;
          }
        bad_field(op, name, "has no value '" + *s + "'");
      }
      const int64_t code = integer(name);
      if (code < 0 || code >= EnumNames<T>::count)
        bad_field(op, name, "has no value " + std::to_string(code));
      v = static_cast<T>(code);
    } else if constexpr (std::is_same_v<T, bool>) {
      v = integer(name) != 0;
    } else {
      v = integer(name);
    }
  }
};

// The enum spelled in the op's name, if any, as (count, getter, setter) calls.
template <class A>
struct NameField {
  int count = 0;
  int value = -1;      // the record's value (reading)
  int assign = -1;     // the value to store (writing)
  template <class T>
  void operator()(const char*, T& v, int flags = kText) {
    if constexpr (std::is_enum_v<T> && !std::is_same_v<T, DType>) {
      if (!(flags & kInName)) return;
      count = EnumNames<T>::count;
      value = int(v);
      if (assign >= 0) v = static_cast<T>(assign);
      name_of = &EnumNames<T>::name;
    }
  }
  const char* (*name_of)(int) = nullptr;
};

}  // namespace detail

// An OpDef whose attributes are the record A: the attribute half is derived from
// A::visit. `prefix` spells a kInName enum into the op's name ("reduce_" + "sum").
template <class A>
class TypedOpDef : public OpDef {
 public:
  explicit TypedOpDef(OpKind kind, std::string prefix = "") : OpDef(kind), prefix_(std::move(prefix)) {}

  static const A& get(const std::any& attrs) { return *std::any_cast<A>(&attrs); }
  static A& get(std::any& attrs) { return *std::any_cast<A>(&attrs); }

  std::any default_attrs() const override { return A{}; }
  const std::type_info& attrs_type() const override { return typeid(A); }

  std::string spelling(const std::any& attrs) const override {
    detail::NameField<A> f;
    const_cast<A&>(get(attrs)).visit(f);
    if (!f.name_of) return name();
    return spell(f.value, f.name_of(f.value));
  }
  std::vector<std::pair<std::string, std::any>> spellings() const override {
    A probe{};
    detail::NameField<A> f;
    probe.visit(f);
    if (!f.name_of) return {{name(), A{}}};
    std::vector<std::pair<std::string, std::any>> out;
    for (int i = 0; i < f.count; ++i) {
      A a{};
      detail::NameField<A> set;
      set.assign = i;
      a.visit(set);
      out.emplace_back(spell(i, f.name_of(i)), std::move(a));
    }
    return out;
  }
  std::string print_attrs(const std::any& attrs) const override {
    detail::Printer p;
    const_cast<A&>(get(attrs)).visit(p);
    return p.out;
  }
  bool parse_attr(std::any& attrs, const std::string& key, AttrReader& in) const override {
    detail::TextReader r{key, in};
    get(attrs).visit(r);
    return r.found;
  }
  void take_result_types(std::any& attrs, const std::vector<ValueType>& types) const override {
    detail::ResultTaker t{types};
    get(attrs).visit(t);
  }
  void append_key(const std::any& attrs, std::string& key) const override {
    detail::KeyWriter w{key};
    const_cast<A&>(get(attrs)).visit(w);
  }
  AttrFields fields(const std::any& attrs) const override {
    detail::FieldWriter w;
    const_cast<A&>(get(attrs)).visit(w);
    return w.out;
  }
  std::any from_fields(const AttrFields& fields) const override {
    A a{};
    for (const auto& [key, value] : fields) {
      detail::FieldReader r{name(), key, value};
      a.visit(r);
      if (!r.found) detail::bad_field(name(), key, "is unknown");
    }
    return a;
  }

 protected:
  // The name of a node whose kInName enum has value `index` named `enum_name`.
  virtual std::string spell(int index, const char* enum_name) const {
    (void)index;
    return prefix_ + detail::enum_text(enum_name);
  }

 private:
  std::string prefix_;
};

// Defines the registry's accessor of kind `name` (listed in TINYXLA_GRAPH_OPS).
#define TINYXLA_REGISTER_OP(name, Def) \
  const OpDef& name##_def() {          \
    static const Def def;              \
    return def;                        \
  }

// A view of x's buffer with the type, strides and offset given.
inline Array view_of(const Array& x, const ValueType& type, Strides strides, int64_t offset) {
  return Array(type.shape, std::move(strides), offset, type.dtype, x.device(), x.buffer(), x.event());
}

// A record for kinds without attributes.
struct NoAttrs {
  template <class V> void visit(V&) {}
};

}  // namespace tinyxla::ops
