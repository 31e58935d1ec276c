// The tiled interpreter of fused bodies (see interpreter.h). A body compiles to a register
// program: loads (inputs and constants viewed over the iteration space), elementwise
// instructions calling dense tile functions, reduce-accumulate steps and stores. A run
// walks the flat iteration space in tiles of kTileBytes per register, so temporaries stay
// in L1; dense inputs are read in place, broadcast inputs whose pattern repeats every few
// tiles are gathered once per chunk, and others a run of the innermost dim at a time.
// Reductions split into fixed work items whose partial results combine in a fixed tree,
// so results do not depend on the number of threads.
#include "interpreter.h"

#include <emmintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <type_traits>

#include "../core/element_semantics.h"
#include "../ir/fused_body.h"
#include "../ops/elementwise.h"
#include "../ops/reductions.h"
#include "../core/thread_pool.h"
#include "../cpu/elementwise_ops.h"
#include "../cpu/kernels.h"
#include "../cpu/strided.h"
#include "tinyxla/error.h"

namespace tinyxla::cpu {
namespace {

constexpr int64_t kTileBytes = 2048;  // one register: 512 float32, kept in L1 with its peers
constexpr int64_t kPiece = 1 << 16;   // elements per reduction work item
constexpr int64_t kWide = 4096;       // kept inner extent from which columns split over items
constexpr int64_t kSerial = 1 << 15;  // element-ops below which a run stays on one thread
constexpr int64_t kCopyTransposed = 1 << 14;  // elements from which permuted inputs are copied
constexpr size_t kStreamBytes = size_t(16) << 20;  // outputs from which stores bypass the caches
constexpr size_t kAlign = 64;

using semantics::AccOf;
using semantics::AndOp;
using semantics::convert;
using semantics::MaxOp;
using semantics::MinOp;
using semantics::OrOp;
using semantics::ProdOp;
using semantics::SumOp;
using semantics::XorOp;

// ---- convert tiles: semantics::convert element by element ----

template <typename To, typename From>
void convert_tile(const void* in, void* out, int64_t n) {
  const From* x = static_cast<const From*>(in);
  To* y = static_cast<To*>(out);
  for (int64_t i = 0; i < n; ++i) y[i] = convert<To>(x[i]);
}

// ---- reductions: the identities and combiners of core/element_semantics.h over tiles ----

// Type-erased accumulation of one reduce op and dtype.
struct Reducer {
  size_t acc_size = 0;
  void (*init)(void* acc, int64_t n) = nullptr;
  // acc[j] = op(acc[j], v[r * width + j]) for every row r < rows.
  void (*rows)(void* acc, const void* v, int64_t rows, int64_t width) = nullptr;
  // acc[r] = op(acc[r], reduce(v[r * len .. r * len + len))) for every r < count.
  void (*runs)(void* acc, const void* v, int64_t count, int64_t len) = nullptr;
  void (*combine)(void* acc, const void* other, int64_t n) = nullptr;
  void (*finish)(const void* acc, void* out, int64_t n) = nullptr;
};

template <typename Op, typename T>
struct ReduceImpl {
  using A = AccOf<Op, T>;
  static constexpr int64_t kCols = std::max<int64_t>(1, 64 / int64_t(sizeof(A)));
  static void init(void* acc, int64_t n) {
    A* a = static_cast<A*>(acc);
    for (int64_t i = 0; i < n; ++i) a[i] = Op::template identity<A>();
  }
  static void rows(void* acc, const void* v, int64_t rows, int64_t width) {
    A* a = static_cast<A*>(acc);
    const T* x = static_cast<const T*>(v);
    int64_t j = 0;
    // Blocks of kCols columns keep their accumulators in registers over all rows.
    for (; j + kCols <= width; j += kCols) {
      A loc[kCols];
      for (int64_t k = 0; k < kCols; ++k) loc[k] = a[j + k];
      const T* p = x + j;
      for (int64_t r = 0; r < rows; ++r, p += width)
        for (int64_t k = 0; k < kCols; ++k) loc[k] = Op::apply(loc[k], A(semantics::widen(p[k])));
      for (int64_t k = 0; k < kCols; ++k) a[j + k] = loc[k];
    }
    for (; j < width; ++j) {
      const T* p = x + j;
      for (int64_t r = 0; r < rows; ++r, p += width) a[j] = Op::apply(a[j], A(semantics::widen(*p)));
    }
  }
  // Independent lanes (they vectorise), folded pairwise at the end; short runs (rows of a
  // few elements) use fewer lanes so the fold does not dominate.
  static A run(const T* x, int64_t n) {
    constexpr int64_t kLanes = std::max<int64_t>(4, 64 / int64_t(sizeof(A)));
    return n >= 4 * kLanes ? run_lanes<kLanes>(x, n) : run_lanes<4>(x, n);
  }
  template <int64_t L>
  static A run_lanes(const T* x, int64_t n) {
    A acc[L];
    for (int64_t j = 0; j < L; ++j) acc[j] = Op::template identity<A>();
    int64_t i = 0;
    for (; i + L <= n; i += L)
      for (int64_t j = 0; j < L; ++j) acc[j] = Op::apply(acc[j], A(semantics::widen(x[i + j])));
    for (int64_t j = 0; i + j < n; ++j) acc[j] = Op::apply(acc[j], A(semantics::widen(x[i + j])));
    for (int64_t w = L / 2; w > 0; w /= 2)
      for (int64_t j = 0; j < w; ++j) acc[j] = Op::apply(acc[j], acc[j + w]);
    return acc[0];
  }
  static void runs(void* acc, const void* v, int64_t count, int64_t len) {
    A* a = static_cast<A*>(acc);
    const T* x = static_cast<const T*>(v);
    for (int64_t r = 0; r < count; ++r) a[r] = Op::apply(a[r], run(x + r * len, len));
  }
  static void combine(void* acc, const void* other, int64_t n) {
    A* a = static_cast<A*>(acc);
    const A* b = static_cast<const A*>(other);
    for (int64_t i = 0; i < n; ++i) a[i] = Op::apply(a[i], b[i]);
  }
  static void finish(const void* acc, void* out, int64_t n) {
    const A* a = static_cast<const A*>(acc);
    T* y = static_cast<T*>(out);
    for (int64_t i = 0; i < n; ++i) y[i] = semantics::narrow<T>(a[i]);
  }
  static Reducer make() {
    return Reducer{sizeof(A), &init, &rows, &runs, &combine, &finish};
  }
};

// The reducer of (op, dtype); acc_size 0 when the op does not accept the dtype.
Reducer reducer(ReduceOp op, DType dtype) {
  return visit_dtype(dtype, [&](auto zero) -> Reducer {
    using T = decltype(zero);
    switch (op) {
      case ReduceOp::sum: return ReduceImpl<SumOp, T>::make();
      case ReduceOp::prod: return ReduceImpl<ProdOp, T>::make();
      case ReduceOp::max: return ReduceImpl<MaxOp, T>::make();
      case ReduceOp::min: return ReduceImpl<MinOp, T>::make();
      default: break;
    }
    if constexpr (std::is_integral_v<T>) {
      switch (op) {
        case ReduceOp::and_: return ReduceImpl<AndOp, T>::make();
        case ReduceOp::or_: return ReduceImpl<OrOp, T>::make();
        case ReduceOp::xor_: return ReduceImpl<XorOp, T>::make();
        default: break;
      }
    }
    return Reducer{};
  });
}

// Pairwise combination of `count` partial arrays of `n` accumulators into parts[0].
void combine_tree(const Reducer& f, char* parts, int64_t count, int64_t n) {
  const size_t stride = size_t(n) * f.acc_size;
  for (int64_t w = 1; w < count; w *= 2)
    for (int64_t i = 0; i + w < count; i += 2 * w)
      f.combine(parts + size_t(i) * stride, parts + size_t(i + w) * stride, n);
}

char* align_up(char* p) {
  return reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(p) + kAlign - 1) & ~uintptr_t(kAlign - 1));
}

}  // namespace

// ---- the program ----

enum class Code : uint8_t { Unary, Binary, Select, Clamp, Reduce };

struct Instr {
  Code code;
  UnaryTileFn unary = nullptr;
  BinaryTileFn binary = nullptr;
  SelectTileFn select = nullptr;
  ClampTileFn clamp = nullptr;
  int reduce = -1;
  // Operand and destination slots in mode 0 (an output is written by the instruction that
  // computes it) and mode 1 (computed in a register, stored at the end of the tile: the
  // mode when an output overwrites an input).
  std::vector<int> src[2];
  int dst[2] = {-1, -1};
};

struct LoadSpec {
  int param = -1;   // a body parameter, or -1 for `constant`
  Array constant;
  Shape target;     // the shape the source is broadcast to (it has `size` elements)
  DType dtype = DType::F32;
};

struct ReduceSpec {
  int output;
  DType dtype;
  Reducer fns;
};

struct Program {
  int64_t size = 0;
  int64_t k1 = 1, r = 1, k2 = 1;  // reduction layout
  int64_t tile = 0;               // elements per register
  size_t slot_bytes = 0;
  int num_inputs = 0;
  std::vector<LoadSpec> loads;
  int num_regs = 0;
  std::vector<Instr> code;
  std::vector<ReduceSpec> reduces;
  std::vector<DType> out_dtype;
  std::vector<char> out_reduced;
  std::vector<std::pair<int, int>> stores[2];  // (source slot, output slot) per mode
  std::vector<char> identity_input;            // read only element for element
  std::vector<DType> in_dtype;
  int cost = 1;

  int reg_slot(int reg) const { return int(loads.size()) + reg; }
  int out_slot(int o) const { return int(loads.size()) + num_regs + o; }
  int num_slots() const { return int(loads.size()) + num_regs + int(out_dtype.size()); }
};

namespace {

// Compiles the body into `p`.
void compile(const Graph& body, Program& p) {
  const FusedBodyInfo info = check_fused_body(body);
  p.size = info.size;
  p.num_inputs = int(body.parameters().size());
  if (info.has_reduce &&
      !reduce_layout(info.iter_shape, info.reduce_axes, &p.k1, &p.r, &p.k2))
    throw_error(ErrorKind::InvalidArgument, "fused", "the reduced dims are not contiguous");
  size_t widest = 1;
  for (int v = 0; v < body.num_values(); ++v) widest = std::max(widest, itemsize(body.type(v).dtype));
  p.tile = std::max<int64_t>(16, kTileBytes / int64_t(widest));
  p.slot_bytes = size_t(p.tile) * widest;

  const int nv = body.num_values();
  std::vector<ValueId> alias(static_cast<size_t>(nv));  // reshapes name their operand's value
  for (int v = 0; v < nv; ++v) alias[size_t(v)] = v;
  std::vector<int> param_of(static_cast<size_t>(nv), -1);
  for (size_t i = 0; i < body.parameters().size(); ++i) param_of[size_t(body.parameters()[i])] = int(i);
  auto is_source = [&](ValueId v) {
    OpKind k = body.node(body.defining_node(v)).kind;
    return k == OpKind::parameter || k == OpKind::constant;
  };

  // Loads, keyed by source value and target shape.
  std::vector<std::pair<std::pair<ValueId, Shape>, int>> load_keys;
  auto load = [&](ValueId v, const Shape& consumer) {
    const ValueType& t = body.type(v);
    Shape target = num_elements(t.shape) == p.size ? t.shape : consumer;
    for (auto& k : load_keys)
      if (k.first.first == v && k.first.second == target) return k.second;
    LoadSpec l;
    l.param = param_of[size_t(v)];
    if (l.param < 0) l.constant = body.node(body.defining_node(v)).constant;
    l.target = target;
    l.dtype = t.dtype;
    p.loads.push_back(l);
    load_keys.push_back({{v, target}, int(p.loads.size()) - 1});
    return int(p.loads.size()) - 1;
  };

  // First pass: loads, last uses and output roles of computed values.
  std::vector<int> last_use(static_cast<size_t>(nv), -1);
  std::vector<int> first_output(static_cast<size_t>(nv), -1);
  const auto& outs = body.outputs();
  p.out_dtype.resize(outs.size());
  p.out_reduced.assign(outs.size(), 0);
  std::vector<const Node*> ops;
  for (const Node& n : body.nodes()) {
    if (n.kind == OpKind::reshape) alias[size_t(n.first_result)] = alias[size_t(n.inputs[0])];
    if (n.kind == OpKind::parameter || n.kind == OpKind::constant || n.kind == OpKind::reshape) continue;
    const int at = int(ops.size());
    ops.push_back(&n);
    const Shape& consumer = n.kind == OpKind::reduce ? info.iter_shape : body.type(n.first_result).shape;
    for (ValueId v : n.inputs) {
      const ValueId a = alias[size_t(v)];
      last_use[size_t(a)] = at;
      if (is_source(a)) load(a, consumer);  // every load exists before registers get slots
    }
  }
  for (size_t o = 0; o < outs.size(); ++o) {
    const ValueId v = alias[size_t(outs[o])];
    p.out_dtype[o] = body.type(outs[o]).dtype;
    if (body.node(body.defining_node(outs[o])).kind == OpKind::reduce) {
      p.out_reduced[o] = 1;
      continue;
    }
    last_use[size_t(v)] = int(ops.size());  // stored at the end of the tile
    if (first_output[size_t(v)] < 0) first_output[size_t(v)] = int(o);
    if (is_source(v)) load(v, body.type(outs[o]).shape);  // copied out (a reshaped input)
  }

  // Second pass: instructions with registers allocated linearly.
  std::vector<int> reg(static_cast<size_t>(nv), -1), free_regs;
  auto slots_of = [&](const Node& n, const Shape& consumer, int mode) {
    std::vector<int> s;
    for (ValueId v : n.inputs) {
      ValueId a = alias[size_t(v)];
      if (is_source(a)) s.push_back(load(a, consumer));
      else if (mode == 0 && first_output[size_t(a)] >= 0) s.push_back(-1 - first_output[size_t(a)]);
      else s.push_back(p.reg_slot(reg[size_t(a)]));
    }
    return s;
  };
  std::vector<int> deferred_regs;
  for (size_t at = 0; at < ops.size(); ++at) {
    const Node& n = *ops[at];
    const ValueType& t = body.type(n.first_result);
    const DType in = n.inputs.empty() ? t.dtype : body.type(n.inputs[0]).dtype;
    Instr ins;
    const char* name = op_kind_name(n.kind);
    switch (n.kind) {
      case OpKind::unary:
        ins.code = Code::Unary;
        ins.unary = unary_tile_fn(n.attr<ops::UnaryAttrs>().op, in);
        name = op_name(n.attr<ops::UnaryAttrs>().op);
        p.cost += is_expensive(n.attr<ops::UnaryAttrs>().op) ? 10 : 1;
        break;
      case OpKind::convert:
        ins.code = Code::Unary;
        ins.unary = convert_tile_fn(in, t.dtype);
        p.cost += 1;
        break;
      case OpKind::binary:
        ins.code = Code::Binary;
        ins.binary = binary_tile_fn(n.attr<ops::BinaryAttrs>().op, in);
        name = op_name(n.attr<ops::BinaryAttrs>().op);
        p.cost += is_expensive(n.attr<ops::BinaryAttrs>().op) ? 10 : 1;
        break;
      case OpKind::select_n:
        ins.code = Code::Select;
        ins.select = select_tile_fn(in, t.dtype);
        p.cost += 1;
        break;
      case OpKind::clamp:
        ins.code = Code::Clamp;
        ins.clamp = clamp_tile_fn(t.dtype);
        p.cost += 1;
        break;
      case OpKind::reduce: {
        ins.code = Code::Reduce;
        ReduceSpec spec{-1, t.dtype, reducer(n.attr<ops::ReduceAttrs>().op, t.dtype)};
        for (size_t o = 0; o < outs.size(); ++o)
          if (outs[o] == n.first_result) spec.output = int(o);
        if (!spec.fns.acc_size)
          throw_error(ErrorKind::TypeError, std::string("reduce_") + op_name(n.attr<ops::ReduceAttrs>().op),
                      std::string("unsupported dtype ") + dtype_name(t.dtype));
        ins.reduce = int(p.reduces.size());
        p.reduces.push_back(spec);
        p.cost += 1;
        break;
      }
      default:
        throw_error(ErrorKind::InvalidArgument, "fused", std::string(name) + " cannot be fused");
    }
    if (ins.code != Code::Reduce && !ins.unary && !ins.binary && !ins.select && !ins.clamp)
      throw_error(ErrorKind::TypeError, name, std::string("unsupported dtype ") + dtype_name(in));
    const Shape& consumer = n.kind == OpKind::reduce ? info.iter_shape : t.shape;
    ins.src[0] = slots_of(n, consumer, 0);
    ins.src[1] = slots_of(n, consumer, 1);
    if (n.kind != OpKind::reduce) {
      // The destination is taken before operands are freed: tile functions may not alias.
      int r;
      if (!free_regs.empty()) {
        r = free_regs.back();
        free_regs.pop_back();
      } else {
        r = p.num_regs++;
      }
      reg[size_t(n.first_result)] = r;
      const int o = first_output[size_t(n.first_result)];
      ins.dst[0] = o >= 0 ? -1 - o : p.reg_slot(r);  // output slots are fixed up below
      ins.dst[1] = p.reg_slot(r);
      if (last_use[size_t(n.first_result)] < 0) deferred_regs.push_back(r);  // unused result
    }
    for (ValueId v : n.inputs) {
      ValueId a = alias[size_t(v)];
      if (!is_source(a) && last_use[size_t(a)] == int(at) && reg[size_t(a)] >= 0) {
        free_regs.push_back(reg[size_t(a)]);
        reg[size_t(a)] = -1;
      }
    }
    for (int r : deferred_regs) free_regs.push_back(r);
    deferred_regs.clear();
    p.code.push_back(std::move(ins));
  }
  // Outputs that are (reshaped) inputs are copies of their loads.
  for (size_t o = 0; o < outs.size(); ++o) {
    const ValueId v = alias[size_t(outs[o])];
    if (p.out_reduced[o] || !is_source(v) || first_output[size_t(v)] != int(o)) continue;
    Instr ins;
    ins.code = Code::Unary;
    ins.unary = convert_tile_fn(p.out_dtype[o], p.out_dtype[o]);
    ins.src[0] = ins.src[1] = {load(v, body.type(outs[o]).shape)};
    reg[size_t(v)] = p.num_regs++;
    ins.dst[0] = -1 - int(o);
    ins.dst[1] = p.reg_slot(reg[size_t(v)]);
    p.code.push_back(std::move(ins));
  }
  // Output slots come after the registers, known only now.
  for (Instr& ins : p.code) {
    if (ins.dst[0] <= -1 && ins.code != Code::Reduce) ins.dst[0] = p.out_slot(-1 - ins.dst[0]);
    for (int& s : ins.src[0])
      if (s < 0) s = p.out_slot(-1 - s);
  }
  // Stores: mode 0 copies only repeated outputs, mode 1 every output (output registers
  // live to the end of the tile, so they are never freed).
  for (size_t o = 0; o < outs.size(); ++o) {
    if (p.out_reduced[o]) continue;
    const ValueId v = alias[size_t(outs[o])];
    if (first_output[size_t(v)] != int(o))
      p.stores[0].push_back({p.out_slot(first_output[size_t(v)]), p.out_slot(int(o))});
    p.stores[1].push_back({p.reg_slot(reg[size_t(v)]), p.out_slot(int(o))});
  }
  p.identity_input.assign(size_t(p.num_inputs), 0);
  for (ValueId v : body.parameters()) p.in_dtype.push_back(body.type(v).dtype);
  for (int i = 0; i < p.num_inputs; ++i)
    p.identity_input[size_t(i)] = num_elements(body.type(body.parameters()[size_t(i)]).shape) == p.size;
}


// Per-run views of the loads and outputs, shared by all threads.
struct RunState {
  // Periodic: the elements repeat every `period` (only trailing dims move); a chunk keeps
  // tile + period of them, and a tile at b reads from b % period.
  enum Access : uint8_t { Dense, Periodic, Gather };
  struct View {
    const char* base;
    size_t item;
    Shape shape;
    Strides strides;
    Access access;
    int64_t period;
  };
  std::vector<View> loads;
  std::vector<char*> out;
  std::vector<size_t> out_item;
  int mode = 0;
  bool stream = false;   // outputs too large for the caches: stored without reading them
  size_t acc_elems = 0;  // accumulators per reduce that a work item needs
  bool local = false;    // two-level column accumulation
};

// One thread's registers, load buffers and accumulators.
struct Ctx {
  std::vector<char*> ptr;  // slot pointers
  std::vector<char*> buf, pattern, acc, tacc;
  int64_t o_base = 0;
  bool local = false;
};

// A T per thread, reused from run to run so that its vectors keep their memory (a small
// op's run then allocates nothing); a run nested in another on the same thread, were there
// one, would get a fresh T.
template <class T>
class Reused {
 public:
  Reused() : slot_(thread_slot()), own_(!slot_.second) { slot_.second = true; }
  ~Reused() {
    if (own_) slot_.second = false;
  }
  Reused(const Reused&) = delete;
  Reused& operator=(const Reused&) = delete;
  T& get() { return own_ ? slot_.first : fresh_; }

 private:
  static std::pair<T, bool>& thread_slot() {  // the object, and whether a run holds it
    thread_local std::pair<T, bool> slot{T(), false};
    return slot;
  }
  std::pair<T, bool>& slot_;
  const bool own_;
  T fresh_;
};

void setup(const Program& p, const RunState& s, Ctx& c) {
  thread_local std::vector<char> scratch;
  const size_t nl = p.loads.size();
  size_t acc_bytes = 0;
  for (const ReduceSpec& r : p.reduces)
    acc_bytes += (s.acc_elems + size_t(p.k2)) * r.fns.acc_size + kAlign;
  auto pattern_bytes = [&](const RunState::View& v) {
    return v.access == RunState::Periodic ? size_t(p.tile + v.period) * v.item : 0;
  };
  size_t need = (nl + size_t(p.num_regs)) * p.slot_bytes + acc_bytes + kAlign;
  for (const RunState::View& v : s.loads) need += pattern_bytes(v) + kAlign;
  if (scratch.size() < need) scratch.resize(need);
  char* at = align_up(scratch.data());
  c.ptr.assign(size_t(p.num_slots()), nullptr);
  c.buf.resize(nl);
  c.pattern.resize(nl);
  for (size_t l = 0; l < nl; ++l) {
    const RunState::View& v = s.loads[l];
    c.buf[l] = at;
    c.pattern[l] = at + p.slot_bytes;
    at = align_up(at + p.slot_bytes + pattern_bytes(v));
    if (v.access == RunState::Periodic && p.size > 0)
      gather_pattern(v.base, int64_t(v.item), int64_t(v.shape.size()), v.shape.data(),
                     v.strides.data(), v.period, p.tile + v.period, c.pattern[l]);
  }
  for (int r = 0; r < p.num_regs; ++r) {
    c.ptr[size_t(p.reg_slot(r))] = at;
    at += p.slot_bytes;
  }
  c.acc.resize(p.reduces.size());
  c.tacc.resize(p.reduces.size());
  for (size_t r = 0; r < p.reduces.size(); ++r) {
    c.acc[r] = at;
    at = align_up(at + s.acc_elems * p.reduces[r].fns.acc_size);
    c.tacc[r] = at;
    at = align_up(at + size_t(p.k2) * p.reduces[r].fns.acc_size);
  }
  c.local = s.local;
}

// Folds the values `v` of flat elements [b, b + n) into the accumulators of reduce `r`.
void accumulate(const Program& p, Ctx& c, int r, const char* v, int64_t b, int64_t n) {
  const Reducer& f = p.reduces[size_t(r)].fns;
  const size_t a = f.acc_size, item = itemsize(p.reduces[size_t(r)].dtype);
  const int64_t end = b + n;
  if (p.k2 == 1) {
    const int64_t R = p.r;
    for (int64_t i = b; i < end;) {
      const int64_t row = i / R, off = i - row * R;
      const int64_t count = off == 0 ? (end - i) / R : 0;
      char* dst = c.acc[size_t(r)] + size_t(row - c.o_base) * a;
      if (count > 0) {  // whole rows
        f.runs(dst, v + size_t(i - b) * item, count, R);
        i += count * R;
      } else {
        const int64_t len = std::min(end - i, R - off);
        f.runs(dst, v + size_t(i - b) * item, 1, len);
        i += len;
      }
    }
    return;
  }
  const int64_t K2 = p.k2, RK = p.r * p.k2;
  char* base = c.local ? c.tacc[size_t(r)] : c.acc[size_t(r)];
  if (c.local) f.init(base, K2);
  for (int64_t i = b; i < end;) {
    const int64_t k2 = i % K2;
    const int64_t idx = c.local ? k2 : (i / RK) * K2 + k2 - c.o_base;
    char* dst = base + size_t(idx) * a;
    const int64_t rows = k2 == 0 ? std::min((end - i) / K2, (RK - i % RK) / K2) : 0;
    if (rows > 0) {
      f.rows(dst, v + size_t(i - b) * item, rows, K2);
      i += rows * K2;
    } else {
      const int64_t len = std::min(end - i, K2 - k2);
      f.rows(dst, v + size_t(i - b) * item, 1, len);
      i += len;
    }
  }
  if (c.local) f.combine(c.acc[size_t(r)], base, K2);
}

// Runs the program over flat elements [b, b + n), n <= p.tile.
void run_tile(const Program& p, const RunState& s, Ctx& c, int64_t b, int64_t n) {
  for (size_t l = 0; l < s.loads.size(); ++l) {
    const RunState::View& v = s.loads[l];
    char*& ptr = c.ptr[l];
    if (v.access == RunState::Dense) {
      ptr = const_cast<char*>(v.base) + size_t(b) * v.item;
    } else if (v.access == RunState::Periodic) {
      ptr = c.pattern[l] + size_t(b % v.period) * v.item;
    } else {
      gather(v.base, v.item, v.shape, v.strides, b, b + n, c.buf[l]);
      ptr = c.buf[l];
    }
  }
  for (size_t o = 0; o < s.out.size(); ++o)
    if (s.out[o]) c.ptr[size_t(p.out_slot(int(o)))] = s.out[o] + size_t(b) * s.out_item[o];
  const int m = s.mode;
  for (const Instr& ins : p.code) {
    const std::vector<int>& src = ins.src[m];
    char* dst = ins.dst[m] >= 0 ? c.ptr[size_t(ins.dst[m])] : nullptr;
    switch (ins.code) {
      case Code::Unary:
        ins.unary(c.ptr[size_t(src[0])], dst, n);
        break;
      case Code::Binary:
        ins.binary(c.ptr[size_t(src[0])], c.ptr[size_t(src[1])], dst, n);
        break;
      case Code::Clamp:
        ins.clamp(c.ptr[size_t(src[0])], c.ptr[size_t(src[1])], c.ptr[size_t(src[2])], dst, n);
        break;
      case Code::Select: {
        const void* cases[64];
        const size_t k = std::min<size_t>(src.size() - 1, 64);
        for (size_t i = 0; i < k; ++i) cases[i] = c.ptr[size_t(src[i + 1])];
        ins.select(c.ptr[size_t(src[0])], cases, int64_t(k), dst, n);
        break;
      }
      case Code::Reduce:
        accumulate(p, c, ins.reduce, c.ptr[size_t(src[0])], b, n);
        break;
    }
  }
  for (const auto& st : p.stores[m]) {
    const int o = st.second - p.out_slot(0);
    const size_t bytes = size_t(n) * s.out_item[size_t(o)];
    if (s.stream) stream_copy(c.ptr[size_t(st.second)], c.ptr[size_t(st.first)], bytes);
    else std::memcpy(c.ptr[size_t(st.second)], c.ptr[size_t(st.first)], bytes);
  }
}

// Runs `items` work items, on the pool when the work is large enough.
void for_items(int64_t items, int64_t work, const std::function<void(int64_t, int64_t)>& fn) {
  if (work < kSerial || items == 1) fn(0, items);
  else parallel_for(items, 1, fn, work >= kLongOpWork);
}

}  // namespace

bool reduce_layout(const Shape& shape, const std::vector<int64_t>& axes, int64_t* k1, int64_t* r,
                   int64_t* k2) {
  *k1 = *r = *k2 = 1;
  std::vector<char> reduced(shape.size(), 0);
  for (int64_t a : axes) reduced[size_t(a)] = 1;
  if (num_elements(shape) == 0) {  // every output is the identity (or there is none)
    for (size_t d = 0; d < shape.size(); ++d)
      if (!reduced[d]) *k1 *= shape[d];
    *r = 0;
    return true;
  }
  int state = 0;  // 0: in K1, 1: in R, 2: in K2
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    if (reduced[d]) {
      if (state == 2) return false;
      state = 1;
      *r *= shape[d];
    } else if (state == 0) {
      *k1 *= shape[d];
    } else {
      state = 2;
      *k2 *= shape[d];
    }
  }
  return true;
}

UnaryTileFn convert_tile_fn(DType from, DType to) {
  return visit_dtype(from, [&](auto f) {
    return visit_dtype(to, [&](auto t) -> UnaryTileFn {
      return &convert_tile<decltype(t), decltype(f)>;
    });
  });
}

bool can_fuse_elementwise(const Node& n, const Graph& g) {
  const DType in = g.type(n.inputs[0]).dtype;
  switch (n.kind) {
    case OpKind::unary: return unary_tile_fn(n.attr<ops::UnaryAttrs>().op, in) != nullptr;
    case OpKind::binary: return binary_tile_fn(n.attr<ops::BinaryAttrs>().op, in) != nullptr;
    case OpKind::select_n:
      return n.inputs.size() <= 65 && select_tile_fn(in, g.type(n.first_result).dtype) != nullptr;
    case OpKind::clamp: return clamp_tile_fn(g.type(n.first_result).dtype) != nullptr;
    case OpKind::convert: return true;
    default: return false;
  }
}

bool can_fuse_reduce(ReduceOp op, DType dtype, const Shape& operand,
                     const std::vector<int64_t>& axes) {
  int64_t k1, r, k2;
  return reducer(op, dtype).acc_size > 0 && reduce_layout(operand, axes, &k1, &r, &k2);
}

FusedKernel::FusedKernel(const Graph& body) : p_(std::make_unique<Program>()) { compile(body, *p_); }
FusedKernel::~FusedKernel() = default;

int FusedKernel::cost() const { return p_->cost; }

bool FusedKernel::may_alias(int input, int output) const {
  const Program& p = *p_;
  return p.identity_input[size_t(input)] && !p.out_reduced[size_t(output)] &&
         itemsize(p.in_dtype[size_t(input)]) == itemsize(p.out_dtype[size_t(output)]);
}

namespace {

// The views of one run's inputs and outputs, written over `s` (a state reused from run to
// run keeps its vectors' memory: a small op's run allocates nothing); `copies` keeps dense
// copies of large transposed inputs alive.
void prepare(const Program& p, const std::vector<Array>& inputs, const std::vector<Array>& outputs,
             RunState& s, std::vector<Array>& copies) {
  s.loads.resize(p.loads.size());
  for (size_t i = 0; i < p.loads.size(); ++i) {
    const LoadSpec& l = p.loads[i];
    const Array& src = l.param >= 0 ? inputs[size_t(l.param)] : l.constant;
    RunState::View& v = s.loads[i];
    v.base = src.data();
    v.item = itemsize(l.dtype);
    v.shape = l.target;
    broadcast_strides_into(src, l.target, v.strides);
    v.access = RunState::Gather;
    v.period = 0;
    const bool permuted = std::none_of(v.strides.begin(), v.strides.end(), [](int64_t x) { return x == 0; }) &&
                          !v.strides.empty() && v.strides.back() != 1;
    if (permuted && p.size >= kCopyTransposed) {
      // Element-wise gathers across rows miss the cache; copy's tiled transpose does not.
      copies.emplace_back(l.target, l.dtype, src.device(), Event::ready());
      copy(Array(l.target, v.strides, src.offset(), l.dtype, src.device(), src.buffer(), src.event()),
           copies.back());
      v.base = copies.back().data();
      v.strides = row_major_strides(l.target);
    }
    if (is_dense(v.shape, v.strides)) {
      v.access = RunState::Dense;
    } else {
      // The pattern repeats every `period` elements when outer dims do not move.
      size_t k = v.shape.size();
      while (k > 0 && (v.strides[k - 1] != 0 || v.shape[k - 1] == 1)) --k;
      int64_t period = 1;
      for (size_t d = k; d < v.shape.size(); ++d) period *= v.shape[d];
      bool outer_fixed = true;
      for (size_t d = 0; d < k; ++d) outer_fixed = outer_fixed && (v.strides[d] == 0 || v.shape[d] == 1);
      if (outer_fixed && period <= kPeriodTiles * p.tile) {
        v.access = RunState::Periodic;
        v.period = std::max<int64_t>(period, 1);
      }
    }
  }
  s.mode = 0;
  s.stream = false;
  s.acc_elems = 0;
  s.local = false;
  s.out.assign(outputs.size(), nullptr);
  s.out_item.resize(outputs.size());
  for (size_t o = 0; o < outputs.size(); ++o) {
    s.out_item[o] = itemsize(p.out_dtype[o]);
    if (!p.out_reduced[o]) s.out[o] = outputs[o].mutable_data();
    for (const Array& in : inputs)
      if (!p.out_reduced[o] && in.buffer() == outputs[o].buffer()) s.mode = 1;
  }
  size_t out_bytes = 0;
  for (size_t o = 0; o < outputs.size(); ++o)
    if (!p.out_reduced[o]) out_bytes += size_t(p.size) * s.out_item[o];
  if (out_bytes >= kStreamBytes) s.mode = 1, s.stream = true;
}

// Elements [b, e) of a body without reduces, on this thread.
void run_range(const Program& p, const RunState& s, int64_t b, int64_t e) {
  Reused<Ctx> reused;
  Ctx& c = reused.get();
  c.o_base = 0;
  setup(p, s, c);
  for (int64_t i = b; i < e; i += p.tile) run_tile(p, s, c, i, std::min(p.tile, e - i));
  if (s.stream) _mm_sfence();  // streamed stores are visible before the range counts done
}

}  // namespace

struct FusedKernel::Bound::State {
  const Program* p = nullptr;
  RunState s;
  std::vector<Array> copies;
};

FusedKernel::Bound::Bound(std::unique_ptr<State> state) : state_(std::move(state)) {}
FusedKernel::Bound::~Bound() = default;
FusedKernel::Bound::Bound(Bound&&) noexcept = default;

void FusedKernel::Bound::run(int64_t begin, int64_t end) const {
  if (begin < end) run_range(*state_->p, state_->s, begin, end);
}

FusedKernel::Bound FusedKernel::bind(const std::vector<Array>& inputs,
                                     const std::vector<Array>& outputs) const {
  if (!p_->reduces.empty())
    throw_error(ErrorKind::Internal, "fused", "a body with reduces runs only as a whole");
  auto state = std::make_unique<Bound::State>();
  state->p = p_.get();
  prepare(*p_, inputs, outputs, state->s, state->copies);
  return Bound(std::move(state));
}

void FusedKernel::run(const std::vector<Array>& inputs, const std::vector<Array>& outputs) const {
  const Program& p = *p_;
  Reused<RunState> reused;
  RunState& s = reused.get();
  std::vector<Array> copies;
  prepare(p, inputs, outputs, s, copies);
  const int64_t N = p.size, T = p.tile;
  const int64_t work = N * p.cost;

  if (p.reduces.empty()) {
    const int64_t tiles = (N + T - 1) / T;
    const int64_t grain = std::max<int64_t>(1, std::clamp<int64_t>((1 << 16) / p.cost, 4096, 1 << 16) / T);
    auto chunk = [&](int64_t tb, int64_t te) { run_range(p, s, tb * T, std::min(N, te * T)); };
    if (work < kSerial) chunk(0, tiles);
    else parallel_for(tiles, grain, chunk, work >= kLongOpWork);
    return;
  }

  const int64_t K1 = p.k1, R = p.r, K2 = p.k2, M = K1 * K2;
  auto out_of = [&](size_t r) { return outputs[size_t(p.reduces[r].output)].mutable_data(); };
  auto item_of = [&](size_t r) { return itemsize(p.reduces[r].dtype); };
  if (N == 0 || R == 0) {  // reductions over nothing give the identity
    for (size_t r = 0; r < p.reduces.size(); ++r) {
      std::vector<char> acc(size_t(M) * p.reduces[r].fns.acc_size);
      p.reduces[r].fns.init(acc.data(), M);
      p.reduces[r].fns.finish(acc.data(), out_of(r), M);
    }
    return;
  }
  // Partial results of split items, combined in a fixed tree after the parallel part.
  std::vector<std::vector<char>> partial(p.reduces.size());
  auto alloc_partials = [&](int64_t count) {
    for (size_t r = 0; r < p.reduces.size(); ++r)
      partial[r].resize(size_t(count) * p.reduces[r].fns.acc_size);
  };
  auto finish_into = [&](Ctx& c, int64_t first_out, int64_t count) {
    for (size_t r = 0; r < p.reduces.size(); ++r)
      p.reduces[r].fns.finish(c.acc[r], out_of(r) + size_t(first_out) * item_of(r), count);
  };
  auto init_acc = [&](Ctx& c, int64_t count) {
    for (size_t r = 0; r < p.reduces.size(); ++r) p.reduces[r].fns.init(c.acc[r], count);
  };
  auto save_partial = [&](Ctx& c, int64_t slot, int64_t count) {
    for (size_t r = 0; r < p.reduces.size(); ++r) {
      const size_t a = p.reduces[r].fns.acc_size;
      std::memcpy(partial[r].data() + size_t(slot * count) * a, c.acc[r], size_t(count) * a);
    }
  };
  auto tiles = [&](Ctx& c, int64_t b, int64_t e, int64_t len) {
    for (int64_t i = b; i < e; i += len) run_tile(p, s, c, i, std::min(len, e - i));
    if (s.stream) _mm_sfence();
  };

  if (K2 == 1 && R <= kPiece) {  // rows, each within one item
    const int64_t rows = std::max<int64_t>(1, kPiece / R);
    const int64_t items = (M + rows - 1) / rows;
    const int64_t len = R <= T ? T / R * R : T;
    s.acc_elems = size_t(rows);
    for_items(items, work, [&](int64_t ib, int64_t ie) {
      Ctx c;
      setup(p, s, c);
      for (int64_t it = ib; it < ie; ++it) {
        const int64_t k0 = it * rows, k1 = std::min(M, k0 + rows);
        init_acc(c, k1 - k0);
        c.o_base = k0;
        tiles(c, k0 * R, k1 * R, len);
        finish_into(c, k0, k1 - k0);
      }
    });
  } else if (K2 == 1) {  // long rows split into pieces
    const int64_t pieces = (R + kPiece - 1) / kPiece;
    s.acc_elems = 1;
    alloc_partials(M * pieces);
    for_items(M * pieces, work, [&](int64_t ib, int64_t ie) {
      Ctx c;
      setup(p, s, c);
      for (int64_t it = ib; it < ie; ++it) {
        const int64_t k = it / pieces, j = it % pieces;
        init_acc(c, 1);
        c.o_base = k;
        tiles(c, k * R + j * kPiece, k * R + std::min(R, (j + 1) * kPiece), T);
        save_partial(c, it, 1);
      }
    });
    Ctx c;
    setup(p, s, c);
    for (int64_t k = 0; k < M; ++k)
      for (size_t r = 0; r < p.reduces.size(); ++r) {
        const size_t a = p.reduces[r].fns.acc_size;
        char* parts = partial[r].data() + size_t(k * pieces) * a;
        combine_tree(p.reduces[r].fns, parts, pieces, 1);
        p.reduces[r].fns.finish(parts, out_of(r) + size_t(k) * item_of(r), 1);
      }
  } else if (K2 < kWide) {  // narrow columns: blocks of rows, partial columns combined
    const int64_t rb = std::max<int64_t>(1, kPiece / K2), blocks = (R + rb - 1) / rb;
    s.local = K2 <= T;
    const int64_t len = s.local ? T / K2 * K2 : T;
    s.acc_elems = size_t(K2);
    if (blocks > 1) alloc_partials(K1 * blocks * K2);
    for_items(K1 * blocks, work, [&](int64_t ib, int64_t ie) {
      Ctx c;
      setup(p, s, c);
      for (int64_t it = ib; it < ie; ++it) {
        const int64_t k = it / blocks, j = it % blocks;
        init_acc(c, K2);
        c.o_base = k * K2;
        tiles(c, k * R * K2 + j * rb * K2, k * R * K2 + std::min(R, (j + 1) * rb) * K2, len);
        if (blocks == 1) finish_into(c, k * K2, K2);
        else save_partial(c, it, K2);
      }
    });
    if (blocks > 1)
      for (int64_t k = 0; k < K1; ++k)
        for (size_t r = 0; r < p.reduces.size(); ++r) {
          const size_t a = p.reduces[r].fns.acc_size;
          char* parts = partial[r].data() + size_t(k * blocks * K2) * a;
          combine_tree(p.reduces[r].fns, parts, blocks, K2);
          p.reduces[r].fns.finish(parts, out_of(r) + size_t(k * K2) * item_of(r), K2);
        }
  } else {  // wide columns: column blocks, each summing all its rows
    const int64_t cblocks = (K2 + kWide - 1) / kWide;
    s.acc_elems = size_t(kWide);
    for_items(K1 * cblocks, work, [&](int64_t ib, int64_t ie) {
      Ctx c;
      setup(p, s, c);
      for (int64_t it = ib; it < ie; ++it) {
        const int64_t k = it / cblocks, c0 = (it % cblocks) * kWide, c1 = std::min(K2, c0 + kWide);
        init_acc(c, c1 - c0);
        c.o_base = k * K2 + c0;
        for (int64_t row = 0; row < R; ++row) {
          const int64_t base = (k * R + row) * K2;
          tiles(c, base + c0, base + c1, T);
        }
        finish_into(c, k * K2 + c0, c1 - c0);
      }
    });
  }
}

}  // namespace tinyxla::cpu
