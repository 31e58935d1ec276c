// The OpDef defaults and the registry: one definition per kind of TINYXLA_GRAPH_OPS.
#include "op_def.h"

#include <algorithm>
#include <unordered_map>

#include "../cpu/kernels.h"

namespace tinyxla {

const char* op_kind_name(OpKind kind) {
#define TINYXLA_NAME_CASE(name) \
  case OpKind::name:            \
    return #name;
  switch (kind) { TINYXLA_GRAPH_OPS(TINYXLA_NAME_CASE) }
#undef TINYXLA_NAME_CASE
  return "?";
}

}  // namespace tinyxla

namespace tinyxla::ops {

// Each kind's definition, defined in its family's file.
#define TINYXLA_DECLARE_DEF(name) const OpDef& name##_def();
TINYXLA_GRAPH_OPS(TINYXLA_DECLARE_DEF)
#undef TINYXLA_DECLARE_DEF

const OpDef& op_def(OpKind kind) {
  static const OpDef* const defs[] = {
#define TINYXLA_DEF_ITEM(name) &name##_def(),
      TINYXLA_GRAPH_OPS(TINYXLA_DEF_ITEM)
#undef TINYXLA_DEF_ITEM
  };
  return *defs[size_t(kind)];
}

std::optional<OpKind> op_kind_named(const std::string& name) {
  static const std::unordered_map<std::string, OpKind> kinds = [] {
    std::unordered_map<std::string, OpKind> m;
#define TINYXLA_KIND_ITEM(name) m.emplace(#name, OpKind::name);
    TINYXLA_GRAPH_OPS(TINYXLA_KIND_ITEM)
#undef TINYXLA_KIND_ITEM
    return m;
  }();
  auto it = kinds.find(name);
  if (it == kinds.end()) return std::nullopt;
  return it->second;
}

namespace infer {

void invalid(const std::string& op, const std::string& msg) {
  throw_error(ErrorKind::InvalidArgument, op, msg);
}

std::string ints_str(const std::vector<int64_t>& v) { return shape_str(v); }

void check_same_dtypes(const std::string& op, const std::vector<DType>& dtypes) {
  if (std::all_of(dtypes.begin(), dtypes.end(), [&](DType t) { return t == dtypes[0]; })) return;
  std::string names;
  for (DType t : dtypes) names += (names.empty() ? "" : ", ") + std::string(dtype_name(t));
  throw_error(ErrorKind::TypeError, op,
              "lax." + op + " requires arguments to have the same dtypes, got " + names + ".");
}

std::string shapes_str(const std::vector<TypeRef>& xs, const char* sep) {
  std::string out;
  for (const TypeRef& x : xs) out += (out.empty() ? "" : sep) + shape_str(*x.shape);
  return out;
}

}  // namespace infer

void OpDef::need(const std::vector<infer::TypeRef>& ins, size_t count) const {
  if (ins.size() != count)
    invalid(std::string(name()) + " takes " + std::to_string(count) + " operands, got " +
            std::to_string(ins.size()));
}

Array OpDef::view(const std::any&, const ValueType&, const Array&) const {
  throw_error(ErrorKind::Internal, name(), "not a layout op");
}

void OpDef::run(const std::any&, const std::vector<Array>&, const std::vector<Array>&) const {
  throw_error(ErrorKind::Internal, name(), "has no kernel");
}

void OpDef::run_with_epilogue(const std::any& attrs, const std::vector<Array>& ins,
                              const std::vector<Array>& outs,
                              const std::function<void(int64_t, int64_t)>& epilogue) const {
  run(attrs, ins, outs);
  epilogue(0, outs[0].size());
}

double OpDef::cost(const std::any&, const std::vector<Array>&,
                   const std::vector<ValueType>& outs) const {
  double c = 0;
  for (const ValueType& t : outs) c += double(num_elements(t.shape));
  return c;
}

Array dense_copy(const Array& x) {
  Array out(x.shape(), x.dtype(), x.device(), Event::ready());
  if (x.size()) cpu::copy(x, out);
  return out;
}

Array ready_view(const Node& n, const ValueType& type, const Array& x) {
  const OpDef& def = op_def(n.kind);
  return def.view(n.attrs, type, def.view_needs_dense() && !x.is_contiguous() ? dense_copy(x) : x);
}

namespace detail {

std::string ints_text(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(v[i]);
  }
  return s + "]";
}

std::string enum_text(const char* name) {
  std::string s = name;
  if (!s.empty() && s.back() == '_') s.pop_back();
  return s;
}

void bad_field(const char* op, const std::string& key, const std::string& why) {
  throw_error(ErrorKind::InvalidArgument, op, "attribute '" + key + "' " + why);
}

}  // namespace detail
}  // namespace tinyxla::ops
