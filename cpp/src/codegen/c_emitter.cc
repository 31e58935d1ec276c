// C source for fused bodies (see c_emitter.h). A kernel walks its range in tiles of the
// base tier's size. Ops are scheduled in segments: a call segment runs one base-tier tile
// function over the tile, an inline segment is one loop computing a run of cheap ops
// element by element in registers. Values crossing segments live in tile arrays on the
// stack. At the end of each tile, reduces fold their operand into accumulators and
// outputs are stored, after every read of that tile, so an output may overwrite an input
// read element for element.
#include "c_emitter.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <sstream>

#include "../core/element_semantics.h"
#include "../cpu/elementwise_ops.h"
#include "../cpu/strided.h"
#include "../fused/interpreter.h"
#include "../ir/fused_body.h"
#include "../ops/elementwise.h"
#include "../ops/host_callback.h"
#include "../ops/reductions.h"
#include "../ops/structural.h"

namespace tinyxla::codegen {
namespace {

constexpr int64_t kTileBytes = 2048;         // as the base tier: registers stay in L1
constexpr size_t kMaxStackBytes = 192 << 10;  // tile arrays of one kernel
constexpr int64_t kBakedElements = 16;        // larger constants are passed at run time

const char* ctype(DType t) {
  switch (t) {
    case DType::Bool: return "uint8_t";
    case DType::I8: return "int8_t";
    case DType::I16: return "int16_t";
    case DType::I32: return "int32_t";
    case DType::I64: return "int64_t";
    case DType::U8: return "uint8_t";
    case DType::U16: return "uint16_t";
    case DType::U32: return "uint32_t";
    case DType::U64: return "uint64_t";
    case DType::F16: case DType::BF16: return "uint16_t";
    case DType::F32: return "float";
    case DType::F64: return "double";
    case DType::C64: return "tx_c64";
    case DType::C128: return "tx_c128";
  }
  return "uint8_t";
}

bool is_real_float(DType t) { return t == DType::F32 || t == DType::F64; }
bool is_int(DType t) {
  return t == DType::I8 || t == DType::I16 || t == DType::I32 || t == DType::I64 ||
         t == DType::U8 || t == DType::U16 || t == DType::U32 || t == DType::U64;
}
// Integer arithmetic wraps: computed in the unsigned type of the same width.
const char* unsigned_of(DType t) {
  switch (itemsize(t)) {
    case 1: return "uint8_t";
    case 2: return "uint16_t";
    case 4: return "uint32_t";
    default: return "uint64_t";
  }
}

std::string wrap(DType t, const std::string& a, const char* op, const std::string& b) {
  const std::string u = unsigned_of(t);
  return std::string("(") + ctype(t) + ")((" + u + ")" + a + " " + op + " (" + u + ")" + b + ")";
}

// The C expression of elementwise node `n` when it has the base tier's exact semantics
// as an expression; nullopt when it must call the tile function.
std::optional<std::string> inline_expr(const Node& n, const std::vector<std::string>& a,
                                       DType in, DType out) {
  const bool flt = is_real_float(in), integer = is_int(in), flt_out = is_real_float(out);
  const std::string fsuffix = in == DType::F32 ? "f" : "";
  switch (n.kind) {
    case OpKind::binary: {
      const auto op = n.attr<ops::BinaryAttrs>().op;
      auto infix = [&](const char* o) { return "(" + a[0] + " " + o + " " + a[1] + ")"; };
      switch (op) {
        case BinaryOp::add: case BinaryOp::sub: case BinaryOp::mul: {
          const char* o = op == BinaryOp::add ? "+" : op == BinaryOp::sub ? "-" : "*";
          if (flt) return infix(o);
          if (integer) return wrap(in, a[0], o, a[1]);
          return std::nullopt;
        }
        case BinaryOp::div:
          if (flt) return infix("/");
          return std::nullopt;
        case BinaryOp::max: case BinaryOp::min: {
          const bool mx = op == BinaryOp::max;
          if (integer) return "(" + a[0] + (mx ? " > " : " < ") + a[1] + " ? " + a[0] + " : " + a[1] + ")";
          if (!flt) return std::nullopt;
          // NaN wins; -0 < +0 (the base tier's Max/Min).
          return std::string("tx_") + (mx ? "max" : "min") + fsuffix + "(" + a[0] + ", " + a[1] + ")";
        }
        case BinaryOp::and_: case BinaryOp::or_: case BinaryOp::xor_: {
          if (!integer && in != DType::Bool) return std::nullopt;
          const char* o = op == BinaryOp::and_ ? "&" : op == BinaryOp::or_ ? "|" : "^";
          return std::string("(") + ctype(in) + ")" + infix(o);
        }
        case BinaryOp::shift_left: case BinaryOp::shift_right_logical:
        case BinaryOp::shift_right_arithmetic: {
          // element_semantics.inc's shifts: 64-bit, or 32-bit with the operand's width.
          if (!integer) return std::nullopt;
          const std::string bits = std::to_string(8 * itemsize(in));
          const bool arith = op == BinaryOp::shift_right_arithmetic, wide = bits == "64";
          const std::string f = std::string(op == BinaryOp::shift_left ? "tx_shl" : arith ? "tx_shra" : "tx_shrl") +
                                (wide ? "64" : "32");
          const std::string value = "(" + (arith ? "int" + bits + "_t" : std::string(unsigned_of(in))) + ")" + a[0];
          return std::string("(") + ctype(in) + ")" + f + "(" + value + ", (" + unsigned_of(in) + ")" + a[1] +
                 (wide ? "" : ", " + bits) + ")";
        }
        case BinaryOp::eq: case BinaryOp::ne: case BinaryOp::lt: case BinaryOp::le:
        case BinaryOp::gt: case BinaryOp::ge: {
          if (!flt && !integer && in != DType::Bool) return std::nullopt;
          const char* o = op == BinaryOp::eq ? "==" : op == BinaryOp::ne ? "!=" : op == BinaryOp::lt ? "<"
                        : op == BinaryOp::le ? "<=" : op == BinaryOp::gt ? ">" : ">=";
          return "(uint8_t)" + infix(o);
        }
        default:
          return std::nullopt;
      }
    }
    case OpKind::unary:
      switch (n.attr<ops::UnaryAttrs>().op) {
        case UnaryOp::neg:
          if (flt) return "(-" + a[0] + ")";
          if (integer) return wrap(in, "0", "-", a[0]);
          return std::nullopt;
        case UnaryOp::abs:
          if (flt) return "__builtin_fabs" + fsuffix + "(" + a[0] + ")";
          return std::nullopt;
        case UnaryOp::logical_not:
          if (in == DType::Bool) return "(uint8_t)!" + a[0];
          return std::nullopt;
        default:
          return std::nullopt;
      }
    case OpKind::select_n:
      if (in == DType::Bool && a.size() == 3 && out != DType::F16 && out != DType::BF16 &&
          out != DType::C64 && out != DType::C128)
        return "(" + a[0] + " ? " + a[2] + " : " + a[1] + ")";
      return std::nullopt;
    case OpKind::bitcast_convert:
      // The same bits read as another type of the same width (a union, not a cast).
      if (itemsize(in) != itemsize(out) || in == DType::C64 || in == DType::C128 ||
          out == DType::C64 || out == DType::C128)
        return std::nullopt;
      return std::string("((union { ") + ctype(in) + " a; " + ctype(out) + " b; }){ .a = " + a[0] + " }).b";
    case OpKind::convert:
      // semantics::convert as C: the casts it defines as C's, and to bool from real floats
      // and integers through the shared functions.
      if (semantics::convert_is_c_cast(in, out)) {
        // Through int32 from narrower integers to floats: the same value, and GCC 12 does not
        // vectorize a uint8 -> float conversion (a mask's convert kept eye's loop scalar).
        const bool widen = (in == DType::Bool || (integer && itemsize(in) < 4)) && flt_out;
        return std::string("(") + ctype(out) + ")" + (widen ? "(int32_t)" : "") + a[0];
      }
      if (out == DType::Bool && flt) return std::string("tx_f") + (in == DType::F32 ? "32" : "64") + "_to_bool(" + a[0] + ")";
      if (out == DType::Bool && integer) return "(uint8_t)(" + a[0] + " != 0)";
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

// The base tier's tile function of elementwise node `n`, or nullptr.
void* tile_fn(const Node& n, DType in, DType out) {
  switch (n.kind) {
    case OpKind::unary: return reinterpret_cast<void*>(cpu::unary_tile_fn(n.attr<ops::UnaryAttrs>().op, in));
    case OpKind::binary: return reinterpret_cast<void*>(cpu::binary_tile_fn(n.attr<ops::BinaryAttrs>().op, in));
    case OpKind::convert: return reinterpret_cast<void*>(cpu::convert_tile_fn(in, out));
    case OpKind::clamp: return reinterpret_cast<void*>(cpu::clamp_tile_fn(out));
    case OpKind::select_n:
      return n.inputs.size() <= 65 ? reinterpret_cast<void*>(cpu::select_tile_fn(in, out)) : nullptr;
    default: return nullptr;
  }
}

// The C statement computing elementwise node `n` into `dst` from operand variables
// `args` (locals of one element), through its expression or its tile function with n = 1.
std::optional<std::string> scalar_statement(const Node& n, const std::vector<std::string>& args,
                                            DType in, DType out, const std::string& dst,
                                            FunctionTable& table) {
  if (auto e = inline_expr(n, args, in, out)) return dst + " = " + *e + ";";
  void* fn = tile_fn(n, in, out);
  if (!fn) return std::nullopt;
  const std::string f = "tx_fn[" + std::to_string(table.add(fn)) + "]";
  switch (n.kind) {
    case OpKind::unary: case OpKind::convert:
      return "((tx_unary)" + f + ")(&" + args[0] + ", &" + dst + ", 1);";
    case OpKind::binary:
      return "((tx_binary)" + f + ")(&" + args[0] + ", &" + args[1] + ", &" + dst + ", 1);";
    case OpKind::clamp:
      return "((tx_clamp)" + f + ")(&" + args[0] + ", &" + args[1] + ", &" + args[2] + ", &" + dst + ", 1);";
    case OpKind::select_n: {
      std::string cases;
      for (size_t i = 1; i < args.size(); ++i) cases += (i > 1 ? ", &" : "&") + args[i];
      return "{ const void* cases[] = {" + cases + "}; ((tx_select)" + f + ")(&" + args[0] +
             ", cases, " + std::to_string(args.size() - 1) + ", &" + dst + ", 1); }";
    }
    default: return std::nullopt;
  }
}

// A load of a source (parameter or constant) viewed over a target shape.
struct Load {
  ValueId value;
  Shape target;
  DType dtype;
  // Periodic: the pattern repeats every `period` elements (only trailing dims move), kept
  // once per call in a buffer of tile + period elements read from offset b % period.
  // Gather: each tile's elements are read by cpu::gather_dims, a run of the innermost
  // dim at a time.
  enum Kind { Dense, Scalar, Periodic, Gather } kind = Dense;
  int64_t period = 0;
  std::string input;  // C expression of the source's first element
  std::vector<std::pair<int64_t, int64_t>> dims;  // collapsed (extent, stride) for gathers
  bool needs_buffer = false;  // a scalar read by a call: filled once per call
};

std::string num(int64_t v) { return std::to_string(v) + "LL"; }

// The functions of core/element_semantics.inc as text, pasted into every module.
#define TX_SEMANTICS(...) #__VA_ARGS__
constexpr const char kElementSemantics[] =
#include "../core/element_semantics.inc"
    ;
#undef TX_SEMANTICS

}  // namespace

int FunctionTable::add(void* fn) {
  for (size_t i = 0; i < fns.size(); ++i)
    if (fns[i] == fn) return int(i);
  fns.push_back(fn);
  return int(fns.size()) - 1;
}

std::string module_prelude() {
  return R"(#include <stdint.h>
#include <string.h>
typedef struct { float re, im; } tx_c64;
typedef struct { double re, im; } tx_c128;
typedef void (*tx_unary)(const void*, void*, int64_t);
typedef void (*tx_binary)(const void*, const void*, void*, int64_t);
typedef void (*tx_clamp)(const void*, const void*, const void*, void*, int64_t);
typedef void (*tx_select)(const void*, const void* const*, int64_t, void*, int64_t);
typedef void (*tx_stream)(void*, const void*, size_t);
typedef void (*tx_gather)(const char*, int64_t, int64_t, const int64_t*, const int64_t*, int64_t, int64_t, char*);
typedef void (*tx_pattern)(const char*, int64_t, int64_t, const int64_t*, const int64_t*, int64_t, int64_t, char*);
typedef int (*tx_host_call)(int64_t, int64_t, const void* const*, const int64_t*);
)" + std::string(kElementSemantics) + "\n";
}

bool emit_kernel(const Graph& body, const std::vector<Strides>& param_strides,
                 const std::string& symbol, int max_ops, FunctionTable& table, std::string& source,
                 KernelInfo& info) {
  const FusedBodyInfo shape = check_fused_body(body);
  // An anchored body runs as its anchor's kernel with the base tier's epilogue.
  if (shape.size == 0 || shape.anchor >= 0) return false;
  std::vector<const Node*> reduces;
  if (shape.has_reduce) {
    if (!cpu::reduce_layout(shape.iter_shape, shape.reduce_axes, &info.k1, &info.r, &info.k2))
      return false;
    for (const Node& n : body.nodes()) {
      if (n.kind != OpKind::reduce) continue;
      const DType t = body.type(n.first_result).dtype;
      const auto op = n.attr<ops::ReduceAttrs>().op;
      const bool real = is_real_float(t) && (op == ReduceOp::sum || op == ReduceOp::max || op == ReduceOp::min);
      const bool logical = t == DType::Bool && (op == ReduceOp::or_ || op == ReduceOp::and_);
      // Integer sums wrap, so any order of the additions gives the base tier's result.
      const bool count = is_int(t) && itemsize(t) >= 4 && op == ReduceOp::sum;
      if (!real && !logical && !count) return false;
      reduces.push_back(&n);
    }
    // One accumulator per output, in output order.
    std::vector<const Node*> by_output;
    for (size_t o = 0; o < body.outputs().size(); ++o)
      for (const Node* n : reduces)
        if (body.outputs()[o] == n->first_result) {
          info.reduces.push_back({int(o), n->attr<ops::ReduceAttrs>().op, body.type(n->first_result).dtype});
          by_output.push_back(n);
          break;
        }
    reduces = by_output;
    for (const ReduceInfo& r : info.reduces)
      if (r.dtype != info.reduces[0].dtype) return false;
  }
  const int nv = body.num_values();
  info.symbol = symbol;
  info.size = shape.size;
  size_t widest = 1;
  for (int v = 0; v < nv; ++v) widest = std::max(widest, itemsize(body.type(v).dtype));
  const int64_t T = std::max<int64_t>(16, kTileBytes / int64_t(widest));
  info.tile = T;

  std::vector<ValueId> alias(static_cast<size_t>(nv));
  for (int v = 0; v < nv; ++v) alias[size_t(v)] = v;
  std::vector<const Node*> ops;
  for (const Node& n : body.nodes()) {
    if (n.kind == OpKind::reshape) alias[size_t(n.first_result)] = alias[size_t(n.inputs[0])];
    else if (n.kind != OpKind::parameter && n.kind != OpKind::constant && n.kind != OpKind::reduce)
      ops.push_back(&n);
  }
  if (int(ops.size()) > max_ops) return false;
  auto is_source = [&](ValueId v) {
    const OpKind k = body.node(body.defining_node(v)).kind;
    return k == OpKind::parameter || k == OpKind::constant;
  };

  // Sources: parameters by index, constants baked when small and ready, else inputs.
  std::ostringstream pre;  // definitions before the function (baked constants)
  std::vector<std::string> source_expr(static_cast<size_t>(nv));
  int next_input = int(body.parameters().size());
  for (const Node& n : body.nodes()) {
    const ValueId v = n.first_result;
    if (n.kind == OpKind::parameter) {
      source_expr[size_t(v)] = "in[" + std::to_string(n.attr<ops::ParameterAttrs>().index) + "]";
    } else if (n.kind == OpKind::constant) {
      const Array& c = n.constant;
      if (c.is_ready() && !c.event()->has_error() && c.size() <= kBakedElements && c.is_contiguous()) {
        const std::string name = symbol + "_c" + std::to_string(v);
        pre << "static const unsigned char " << name << "[] __attribute__((aligned(16))) = {";
        const auto* bytes = reinterpret_cast<const unsigned char*>(c.data());
        for (size_t i = 0; i < c.nbytes(); ++i) pre << (i ? "," : "") << unsigned(bytes[i]);
        if (c.nbytes() == 0) pre << "0";
        pre << "};\n";
        source_expr[size_t(v)] = "(const char*)" + name;
      } else {
        info.runtime_constants.push_back(c);
        source_expr[size_t(v)] = "in[" + std::to_string(next_input++) + "]";
      }
    }
  }

  // Loads, keyed by source and target shape (as the base tier keys them).
  std::vector<Load> loads;
  auto load_of = [&](ValueId v, const Shape& consumer) {
    const ValueType& t = body.type(v);
    const Shape target = num_elements(t.shape) == info.size ? t.shape : consumer;
    for (size_t k = 0; k < loads.size(); ++k)
      if (loads[k].value == v && loads[k].target == target) return int(k);
    Load l;
    l.value = v;
    l.target = target;
    l.dtype = t.dtype;
    l.input = source_expr[size_t(v)];
    // The source's element strides: an input's as the executable lays it out, a
    // constant's row-major; read over the target (numpy-style right-aligned broadcast).
    const int param = body.node(body.defining_node(v)).kind == OpKind::parameter
                          ? int(body.node(body.defining_node(v)).attr<ops::ParameterAttrs>().index) : -1;
    const Strides src = param >= 0 ? param_strides[size_t(param)] : row_major_strides(t.shape);
    std::vector<int64_t> stride(target.size(), 0);
    const size_t lead = target.size() - t.shape.size();
    for (size_t i = 0; i < t.shape.size(); ++i) stride[lead + i] = t.shape[i] == 1 ? 0 : src[i];
    for (size_t d = 0; d < target.size(); ++d) {
      if (target[d] == 1) continue;
      if (!l.dims.empty() && l.dims.back().second == stride[d] * target[d])
        l.dims.back() = {l.dims.back().first * target[d], stride[d]};
      else l.dims.push_back({target[d], stride[d]});
    }
    size_t moving = l.dims.size();  // the first of the trailing dims with a stride
    while (moving > 0 && l.dims[moving - 1].second != 0) --moving;
    bool outer_fixed = true;
    for (size_t d = 0; d < moving; ++d) outer_fixed = outer_fixed && l.dims[d].second == 0;
    l.period = 1;
    for (size_t d = moving; d < l.dims.size(); ++d) l.period *= l.dims[d].first;
    bool all_zero = true;
    for (auto& d : l.dims) all_zero = all_zero && d.second == 0;
    if (l.dims.size() == 1 && l.dims[0].second == 1) l.kind = Load::Dense;
    else if (all_zero) l.kind = Load::Scalar;
    else l.kind = outer_fixed && l.period <= cpu::kPeriodTiles * T ? Load::Periodic : Load::Gather;
    loads.push_back(l);
    return int(loads.size()) - 1;
  };

  // Schedule: all ready calls, then all ready inline ops, repeatedly (calls first so that
  // cheap ops on their results gather into fewer loops).
  const size_t nops = ops.size();
  std::vector<char> is_inline(nops, 0), done(nops, 0);
  std::vector<std::string> call_of(nops);
  std::vector<int> op_of_value(static_cast<size_t>(nv), -1);
  for (size_t j = 0; j < nops; ++j) op_of_value[size_t(ops[j]->first_result)] = int(j);
  for (size_t j = 0; j < nops; ++j) {
    const Node& n = *ops[j];
    const DType in = n.inputs.empty() ? body.type(n.first_result).dtype : body.type(n.inputs[0]).dtype;
    const DType out = body.type(n.first_result).dtype;
    std::vector<std::string> dummy(n.inputs.size(), "x");
    is_inline[j] = inline_expr(n, dummy, in, out).has_value();
    if (is_inline[j]) continue;
    void* fn = tile_fn(n, in, out);
    if (!fn) return false;  // the base tier reports the unsupported op its way
    call_of[j] = "tx_fn[" + std::to_string(table.add(fn)) + "]";
  }
  auto ready = [&](size_t j) {
    for (ValueId v : ops[j]->inputs) {
      const int d = op_of_value[size_t(alias[size_t(v)])];
      if (d >= 0 && !done[size_t(d)]) return false;
    }
    return true;
  };
  std::vector<std::vector<int>> segments;  // a call: one op; an inline loop: several
  std::vector<int> segment_of(nops, -1);
  size_t scheduled = 0;
  while (scheduled < nops) {
    bool progress = false;
    for (size_t j = 0; j < nops; ++j) {
      if (done[j] || is_inline[j] || !ready(j)) continue;
      segment_of[j] = int(segments.size());
      segments.push_back({int(j)});
      done[j] = 1, ++scheduled, progress = true;
    }
    std::vector<int> group;
    for (bool more = true; more;) {
      more = false;
      for (size_t j = 0; j < nops; ++j) {
        if (done[j] || !is_inline[j] || !ready(j)) continue;
        segment_of[j] = int(segments.size());
        group.push_back(int(j));
        done[j] = 1, ++scheduled, more = progress = true;
      }
    }
    if (!group.empty()) segments.push_back(group);
    if (!progress) return false;  // unreachable for a valid body
  }

  // Values kept in tile arrays: used by another segment or a call, or an output.
  std::vector<char> needs_array(static_cast<size_t>(nv), 0);
  for (size_t j = 0; j < nops; ++j)
    for (ValueId v : ops[j]->inputs) {
      const int d = op_of_value[size_t(alias[size_t(v)])];
      if (d >= 0 && (!is_inline[j] || segment_of[size_t(d)] != segment_of[j]))
        needs_array[size_t(ops[size_t(d)]->first_result)] = 1;
    }
  for (size_t j = 0; j < nops; ++j)
    if (!is_inline[j]) needs_array[size_t(ops[j]->first_result)] = 1;
  auto is_reduced = [&](ValueId o) { return body.node(body.defining_node(o)).kind == OpKind::reduce; };
  for (ValueId o : body.outputs())
    if (!is_reduced(o) && !is_source(alias[size_t(o)])) needs_array[size_t(alias[size_t(o)])] = 1;
  // A reduce folds its operand's tile array (or load) at the end of each tile.
  std::vector<int> reduce_load(reduces.size(), -1);
  for (size_t q = 0; q < reduces.size(); ++q) {
    const ValueId a = alias[size_t(reduces[q]->inputs[0])];
    if (!is_source(a)) {
      needs_array[size_t(a)] = 1;
      continue;
    }
    reduce_load[q] = load_of(a, shape.iter_shape);
    if (loads[size_t(reduce_load[q])].kind == Load::Scalar) loads[size_t(reduce_load[q])].needs_buffer = true;
  }
  // Every load exists before the body is written (consumer shapes are known now).
  std::vector<std::vector<int>> load_ids(nops);
  for (size_t j = 0; j < nops; ++j) {
    const Node& n = *ops[j];
    for (ValueId v : n.inputs) {
      const ValueId a = alias[size_t(v)];
      const int k = is_source(a) ? load_of(a, body.type(n.first_result).shape) : -1;
      load_ids[j].push_back(k);
      if (k >= 0 && !is_inline[j] && loads[size_t(k)].kind == Load::Scalar) loads[size_t(k)].needs_buffer = true;
    }
  }
  std::vector<int> output_load(body.outputs().size(), -1);
  for (size_t o = 0; o < body.outputs().size(); ++o) {
    const ValueId a = alias[size_t(body.outputs()[o])];
    if (is_reduced(body.outputs()[o]) || !is_source(a)) continue;
    output_load[o] = load_of(a, body.type(body.outputs()[o]).shape);
    if (loads[size_t(output_load[o])].kind == Load::Scalar) loads[size_t(output_load[o])].needs_buffer = true;
  }
  size_t stack = 0;
  for (int v = 0; v < nv; ++v)
    if (needs_array[size_t(v)]) stack += size_t(T) * itemsize(body.type(v).dtype);
  for (const Load& l : loads)
    if (l.kind == Load::Gather || l.kind == Load::Periodic || l.needs_buffer)
      stack += size_t(T + (l.kind == Load::Periodic ? l.period : 0)) * itemsize(l.dtype);
  if (stack > kMaxStackBytes) return false;

  // ---- the function ----
  std::ostringstream c;
  // A two-dim gather with a stride-0 inner dim holds one value per row (a column
  // broadcast, x - mean[:, None]): the kernel fills it with its own vector stores, which
  // its loads then forward from (cpu::gather_dims's 16-byte stores they cannot).
  auto is_column = [](const Load& l) {
    return l.kind == Load::Gather && l.dims.size() == 2 && l.dims[1].second == 0;
  };
  auto reads_by_call = [&](const Load& l) {
    return (l.kind == Load::Gather && !is_column(l)) || l.kind == Load::Periodic;
  };
  // A call filling load k's buffer: cpu::gather_dims with its flat elements [x, y) (a
  // gather), or cpu::gather_pattern with y elements of its period x (a pattern).
  auto read_call = [&](size_t k, const std::string& x, const std::string& y) {
    const Load& l = loads[k];
    const bool pattern = l.kind == Load::Periodic;
    void* fn = pattern ? reinterpret_cast<void*>(&cpu::gather_pattern)
                       : reinterpret_cast<void*>(&cpu::gather_dims);
    const std::string g = "g" + std::to_string(k), nd = std::to_string(l.dims.size());
    return std::string("((") + (pattern ? "tx_pattern" : "tx_gather") + ")tx_fn[" +
           std::to_string(table.add(fn)) + "])((const char*)src" + std::to_string(k) + ", " +
           std::to_string(itemsize(l.dtype)) + ", " + nd + ", " + g + ", " + g + " + " + nd + ", " +
           x + ", " + y + ", (char*)b" + std::to_string(k) + ");\n";
  };
  c << pre.str();
  if (reduces.empty())
    c << "void " << symbol << "(const char* const* in, char* const* out, int64_t begin, int64_t end, int stream) {\n";
  else
    c << "void " << symbol << "(const char* const* in, char* const* out, void* const* acc, int64_t begin, int64_t end, int64_t acc_base) {\n"
      << "  const int stream = 0;\n";
  for (size_t k = 0; k < loads.size(); ++k) {
    const Load& l = loads[k];
    const char* t = ctype(l.dtype);
    c << "  const " << t << "* const src" << k << " = (const " << t << "*)" << l.input << ";\n";
    if (l.kind == Load::Scalar) {
      c << "  " << t << " s" << k << ";\n  memcpy(&s" << k << ", src" << k << ", sizeof s" << k << ");\n";
      if (l.needs_buffer)
        c << "  " << t << " b" << k << "[" << T << "] __attribute__((aligned(64)));\n"
          << "  for (int64_t i = 0; i < " << T << "; ++i) b" << k << "[i] = s" << k << ";\n";
    } else if (l.kind == Load::Gather || l.kind == Load::Periodic) {
      const int64_t len = T + (l.kind == Load::Periodic ? l.period : 0);
      c << "  " << t << " b" << k << "[" << len << "] __attribute__((aligned(64)));\n";
      if (reads_by_call(l)) {
        c << "  static const int64_t g" << k << "[] = {";
        for (const auto& d : l.dims) c << num(d.first) << ", ";
        for (size_t d = 0; d < l.dims.size(); ++d) c << num(l.dims[d].second) << (d + 1 < l.dims.size() ? ", " : "};\n");
      }
      if (l.kind == Load::Periodic) c << "  " << read_call(k, num(l.period), num(len));
    }
  }
  for (int v = 0; v < nv; ++v)
    if (needs_array[size_t(v)])
      c << "  " << ctype(body.type(v).dtype) << " t" << v << "[" << T << "] __attribute__((aligned(64)));\n";
  c << "  for (int64_t b = begin; b < end; b += " << T << ") {\n"
    << "    const int64_t n = end - b < " << T << " ? end - b : " << T << ";\n";
  for (size_t k = 0; k < loads.size(); ++k) {
    const Load& l = loads[k];
    if (l.kind == Load::Dense) {
      c << "    const " << ctype(l.dtype) << "* const L" << k << " = src" << k << " + b;\n";
    } else if (is_column(l)) {
      const std::string W = num(l.dims[1].first), K = std::to_string(k);
      c << "    for (int64_t i = 0, r = b / " << W << ", e = (r + 1) * " << W << " - b; i < n; ++r, e += " << W
        << ") {\n      const " << ctype(l.dtype) << " v = src" << K << "[r * " << num(l.dims[0].second)
        << "];\n      for (const int64_t stop = e < n ? e : n; i < stop; ++i) b" << K << "[i] = v;\n    }\n";
    } else if (l.kind == Load::Gather) {
      c << "    " << read_call(k, "b", "b + n");
    } else if (l.kind == Load::Periodic) {
      c << "    const " << ctype(l.dtype) << "* const L" << k << " = b" << k << " + b % " << num(l.period) << ";\n";
    }
  }
  // The element expression (inline) and the tile pointer (calls) of an operand.
  auto element = [&](size_t j, size_t i) -> std::string {
    const int k = load_ids[j][i];
    if (k >= 0) {
      const Load& l = loads[size_t(k)];
      if (l.kind == Load::Scalar) return "s" + std::to_string(k);
      return (l.kind == Load::Gather ? "b" : "L") + std::to_string(k) + "[i]";
    }
    const ValueId a = alias[size_t(ops[j]->inputs[i])];
    if (segment_of[size_t(op_of_value[size_t(a)])] == segment_of[j] && is_inline[j])
      return "v" + std::to_string(a);
    return "t" + std::to_string(a) + "[i]";
  };
  auto pointer_of_load = [&](int k) -> std::string {
    const Load& l = loads[size_t(k)];
    const bool buffered = l.kind == Load::Gather || l.kind == Load::Scalar;
    return (buffered ? "b" : "L") + std::to_string(k);
  };
  auto pointer = [&](size_t j, size_t i) -> std::string {
    const int k = load_ids[j][i];
    if (k >= 0) return pointer_of_load(k);
    return "t" + std::to_string(alias[size_t(ops[j]->inputs[i])]);
  };
  for (const auto& seg : segments) {
    const size_t j0 = size_t(seg[0]);
    if (!is_inline[j0]) {
      const Node& n = *ops[j0];
      const std::string dst = "t" + std::to_string(n.first_result);
      const std::string& f = call_of[j0];
      switch (n.kind) {
        case OpKind::unary: case OpKind::convert:
          c << "    ((tx_unary)" << f << ")(" << pointer(j0, 0) << ", " << dst << ", n);\n";
          break;
        case OpKind::binary:
          c << "    ((tx_binary)" << f << ")(" << pointer(j0, 0) << ", " << pointer(j0, 1) << ", " << dst << ", n);\n";
          break;
        case OpKind::clamp:
          c << "    ((tx_clamp)" << f << ")(" << pointer(j0, 0) << ", " << pointer(j0, 1) << ", "
            << pointer(j0, 2) << ", " << dst << ", n);\n";
          break;
        case OpKind::select_n: {
          c << "    { const void* cases[] = {";
          for (size_t i = 1; i < n.inputs.size(); ++i) c << (i > 1 ? ", " : "") << pointer(j0, i);
          c << "};\n      ((tx_select)" << f << ")(" << pointer(j0, 0) << ", cases, "
            << n.inputs.size() - 1 << ", " << dst << ", n); }\n";
          break;
        }
        default: return false;
      }
      continue;
    }
    c << "    for (int64_t i = 0; i < n; ++i) {\n";
    for (int j : seg) {
      const Node& n = *ops[size_t(j)];
      const ValueId v = n.first_result;
      const DType in = n.inputs.empty() ? body.type(v).dtype : body.type(n.inputs[0]).dtype;
      std::vector<std::string> args;
      for (size_t i = 0; i < n.inputs.size(); ++i) args.push_back(element(size_t(j), i));
      c << "      const " << ctype(body.type(v).dtype) << " v" << v << " = "
        << *inline_expr(n, args, in, body.type(v).dtype) << ";\n";
      if (needs_array[size_t(v)]) c << "      t" << v << "[i] = v" << v << ";\n";
    }
    c << "    }\n";
  }
  // Reduces: runs of the tile that fold into one accumulator (K2 == 1: along a row, in
  // independent lanes that vectorise) or into consecutive ones (K2 > 1: along a row of
  // kept columns).
  const int64_t K2 = info.k2, RK = info.r * info.k2;
  for (size_t q = 0; q < reduces.size(); ++q) {
    const ReduceInfo& ri = info.reduces[q];
    const char* t = ctype(ri.dtype);
    const std::string p = reduce_load[q] >= 0 ? pointer_of_load(reduce_load[q])
                                              : "t" + std::to_string(alias[size_t(reduces[q]->inputs[0])]);
    const std::string id = ri.op == ReduceOp::sum || ri.op == ReduceOp::or_ ? "0"
                         : ri.op == ReduceOp::and_ ? "1"
                         : ri.op == ReduceOp::max ? "-__builtin_inf()" : "__builtin_inf()";
    // x = op(x, y) with the combiners of core/element_semantics.h.
    const std::string suffix = ri.dtype == DType::F32 ? "f" : "";
    auto fold = [&](const std::string& x, const std::string& y) {
      if (ri.op == ReduceOp::sum && is_int(ri.dtype)) return x + " = " + wrap(ri.dtype, x, "+", y) + ";";
      if (ri.op == ReduceOp::sum) return x + " = " + x + " + " + y + ";";
      if (ri.op == ReduceOp::or_) return x + " = " + x + " | " + y + ";";
      if (ri.op == ReduceOp::and_) return x + " = " + x + " & " + y + ";";
      return x + " = tx_" + (ri.op == ReduceOp::max ? "max" : "min") + suffix + "(" + x + ", " + y + ");";
    };
    c << "    { " << t << "* const A = (" << t << "*)acc[" << q << "];\n"
      << "      for (int64_t i = 0; i < n;) {\n        const int64_t g = b + i;\n";
    if (K2 == 1) {
      c << "        const int64_t left = " << num(info.r) << " - g % " << num(info.r) << ";\n"
        << "        const int64_t len = n - i < left ? n - i : left;\n"
        << "        const " << t << "* const p = " << p << " + i;\n"
        << "        " << t << " lane[16];\n"
        << "        for (int k = 0; k < 16; ++k) lane[k] = " << id << ";\n"
        << "        int64_t j = 0;\n"
        << "        for (; j + 16 <= len; j += 16)\n"
        << "          for (int k = 0; k < 16; ++k) " << fold("lane[k]", "p[j + k]") << "\n"
        << "        for (; j < len; ++j) " << fold("lane[0]", "p[j]") << "\n"
        << "        for (int w = 8; w > 0; w /= 2)\n"
        << "          for (int k = 0; k < w; ++k) " << fold("lane[k]", "lane[k + w]") << "\n"
        << "        " << fold("A[g / " + num(info.r) + " - acc_base]", "lane[0]") << "\n"
        << "        i += len;\n";
    } else if (K2 <= 64) {
      // Whole rows of one K1 block fold into local accumulators (registers: K2 is a
      // constant), added to the block's at the end; partial rows go element by element.
      c << "        const int64_t col = g % " << num(K2) << ";\n"
        << "        const " << t << "* const p = " << p << " + i;\n"
        << "        if (col != 0 || n - i < " << num(K2) << ") {\n"
        << "          const int64_t left = " << num(K2) << " - col, len = n - i < left ? n - i : left;\n"
        << "          " << t << "* const a = A + (g / " << num(RK) << ") * " << num(K2) << " + col - acc_base;\n"
        << "          for (int64_t j = 0; j < len; ++j) " << fold("a[j]", "p[j]") << "\n"
        << "          i += len;\n          continue;\n        }\n"
        << "        int64_t rows = (n - i) / " << num(K2) << ";\n"
        << "        const int64_t block_rows = (" << num(RK) << " - g % " << num(RK) << ") / " << num(K2) << ";\n"
        << "        if (rows > block_rows) rows = block_rows;\n"
        << "        " << t << " loc[" << K2 << "];\n"
        << "        for (int c = 0; c < " << K2 << "; ++c) loc[c] = " << id << ";\n"
        << "        for (int64_t r = 0; r < rows; ++r)\n"
        << "          for (int c = 0; c < " << K2 << "; ++c) " << fold("loc[c]", "p[r * " + num(K2) + " + c]") << "\n"
        << "        " << t << "* const a = A + (g / " << num(RK) << ") * " << num(K2) << " - acc_base;\n"
        << "        for (int c = 0; c < " << K2 << "; ++c) " << fold("a[c]", "loc[c]") << "\n"
        << "        i += rows * " << num(K2) << ";\n";
    } else {
      c << "        const int64_t col = g % " << num(K2) << ", left = " << num(K2) << " - col;\n"
        << "        const int64_t len = n - i < left ? n - i : left;\n"
        << "        const " << t << "* const p = " << p << " + i;\n"
        << "        " << t << "* const a = A + (g / " << num(RK) << ") * " << num(K2) << " + col - acc_base;\n"
        << "        for (int64_t j = 0; j < len; ++j) " << fold("a[j]", "p[j]") << "\n"
        << "        i += len;\n";
    }
    c << "      }\n    }\n";
  }
  for (size_t o = 0; o < body.outputs().size(); ++o) {
    if (is_reduced(body.outputs()[o])) continue;
    const ValueId a = alias[size_t(body.outputs()[o])];
    const size_t item = itemsize(body.type(a).dtype);
    const std::string from = output_load[o] >= 0 ? pointer_of_load(output_load[o]) : "t" + std::to_string(a);
    const std::string dst = "out[" + std::to_string(o) + "] + b * " + std::to_string(item);
    c << "    if (stream) ((tx_stream)tx_fn[0])(" << dst << ", " << from << ", (size_t)n * " << item
      << ");\n    else memcpy(" << dst << ", " << from << ", (size_t)n * " << item << ");\n";
  }
  c << "  }\n}\n";
  source += c.str();

  info.cost = 1 + int(reduces.size());
  for (const Node* n : ops) {
    if (n->kind == OpKind::unary) info.cost += cpu::is_expensive(n->attr<ops::UnaryAttrs>().op) ? 10 : 1;
    else if (n->kind == OpKind::binary) info.cost += cpu::is_expensive(n->attr<ops::BinaryAttrs>().op) ? 10 : 1;
    else info.cost += 1;
  }
  return true;
}

bool emit_loop(const Graph& body, int64_t num_consts, const std::string& symbol, int max_ops,
               HostCallFn host_call, FunctionTable& table, std::string& source, KernelInfo& info) {
  const int nv = body.num_values();
  const size_t np = body.parameters().size();
  if (body.outputs().size() + size_t(num_consts) != np + 1) return false;
  // A host call's `done` value (bool[0]) is the only value that is not one element, and
  // nothing may read it.
  std::vector<char> done(size_t(nv), 0);
  for (const Node& n : body.nodes())
    if (n.kind == OpKind::host_callback && n.num_results == 1) done[size_t(n.first_result)] = 1;
  for (int v = 0; v < nv; ++v)
    if (!done[size_t(v)] && num_elements(body.type(v).shape) != 1) return false;
  for (const Node& n : body.nodes())
    for (ValueId v : n.inputs)
      if (done[size_t(v)]) return false;
  for (ValueId v : body.outputs())
    if (done[size_t(v)]) return false;
  if (int(body.nodes().size()) > max_ops) return false;
  auto var = [](ValueId v) { return "v" + std::to_string(v); };
  std::ostringstream pre, trip;
  std::vector<int64_t> callables;
  pre << "int " << symbol << "(const char* const* in, char* const* out) {\n"
      << "  uint8_t go = 1;\n";
  for (const Node& n : body.nodes()) {
    const ValueId v = n.first_result;
    const DType t = body.type(v).dtype;
    const char* ct = ctype(t);
    if (n.body || n.num_results != 1) return false;
    if (n.kind == OpKind::parameter) {
      pre << "  " << ct << " " << var(v) << ";\n  memcpy(&" << var(v) << ", in["
          << n.attr<ops::ParameterAttrs>().index << "], sizeof " << var(v) << ");\n";
    } else if (n.kind == OpKind::constant) {
      const Array& c = n.constant;
      if (!c.is_ready() || c.event()->has_error()) return false;
      const auto* bytes = reinterpret_cast<const unsigned char*>(c.data());
      pre << "  " << ct << " " << var(v) << ";\n  { static const unsigned char k[] = {";
      for (size_t i = 0; i < c.nbytes(); ++i) pre << (i ? "," : "") << unsigned(bytes[i]);
      pre << "}; memcpy(&" << var(v) << ", k, sizeof " << var(v) << "); }\n";
    } else if (n.kind == OpKind::reshape || n.kind == OpKind::broadcast_in_dim ||
               n.kind == OpKind::transpose) {
      trip << "    const " << ct << " " << var(v) << " = " << var(n.inputs[0]) << ";\n";
    } else if (n.kind == OpKind::host_callback) {
      const std::string id = "in[" + std::to_string(np + callables.size()) + "]";
      callables.push_back(n.attr<ops::HostCallbackAttrs>().callback);
      std::string args, dtypes;
      for (size_t k = 0; k < n.inputs.size(); ++k) {
        args += (k ? ", &" : "&") + var(n.inputs[k]);
        dtypes += (k ? ", " : "") + std::to_string(int(body.type(n.inputs[k]).dtype));
      }
      if (n.inputs.empty()) args = dtypes = "0";
      trip << "    { static const int64_t d[] = {" << dtypes << "}; const void* a[] = {" << args
           << "};\n      int64_t id; memcpy(&id, " << id << ", sizeof id);\n"
           << "      if (((tx_host_call)tx_fn[" << table.add(reinterpret_cast<void*>(host_call))
           << "])(id, " << n.inputs.size() << ", a, d)) return 1; }\n";
    } else if (is_elementwise(n.kind)) {
      const DType in = n.inputs.empty() ? t : body.type(n.inputs[0]).dtype;
      std::vector<std::string> args;
      for (ValueId a : n.inputs) args.push_back(var(a));
      const auto st = scalar_statement(n, args, in, t, var(v), table);
      if (!st) return false;
      trip << "    " << ct << " " << var(v) << ";\n    " << *st << "\n";
    } else {
      return false;
    }
  }
  // The next carry is read in full before it is written: an output may be a parameter.
  const std::vector<ValueId>& outs = body.outputs();
  const size_t carry = outs.size() - 1;
  for (size_t k = 0; k < carry; ++k)
    trip << "    const " << ctype(body.type(outs[k]).dtype) << " n" << k << " = " << var(outs[k]) << ";\n";
  trip << "    go = " << var(outs.back()) << ";\n";
  for (size_t k = 0; k < carry; ++k)
    trip << "    " << var(body.parameters()[size_t(num_consts) + k]) << " = n" << k << ";\n";
  source += pre.str() + "  while (go) {\n" + trip.str() + "  }\n";
  for (size_t k = 0; k < carry; ++k) {
    const std::string p = var(body.parameters()[size_t(num_consts) + k]);
    source += "  memcpy(out[" + std::to_string(k) + "], &" + p + ", sizeof " + p + ");\n";
  }
  source += "  return 0;\n}\n";
  info.host_callables = std::move(callables);
  return true;
}

}  // namespace tinyxla::codegen
