// The upper tier's modules (see module.h): generation, the background builder thread,
// loading and the kernels' run-time entry.
#include "module.h"

#include <dlfcn.h>
#include <emmintrin.h>
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <limits>
#include <thread>
#include <type_traits>
#include <utility>

#include "../cpu/kernels.h"
#include "../ops/control_flow.h"
#include "../ops/layout.h"
#include "../core/after_fork.h"
#include "../core/host_calls.h"
#include "../core/profiler.h"
#include "../core/thread_pool.h"
#include "toolchain.h"

namespace tinyxla::codegen {
namespace {

constexpr int kMaxKernels = 64;     // larger graphs keep their other nodes on the base tier
constexpr int kMaxOpsPerKernel = 256;
constexpr int kMaxLoopNodes = 4096;  // nodes of a loop body generated as one function
constexpr int64_t kSerial = 1 << 15;           // element-ops below which a run stays on one thread
constexpr size_t kStreamBytes = size_t(16) << 20;  // outputs from which stores bypass the caches

constexpr int64_t kPiece = 1 << 16;  // elements per reduction work item
constexpr int64_t kMaxPieces = 256;

// The element strides value `v` has at run time when it is made by view ops over a dense
// value (ops::ready_view's rule: a view that needs dense data copies a strided operand).
// A guess for the generated code: Module::run checks the actual strides.
Strides predicted_strides(const Graph& graph, ValueId v) {
  std::vector<int> views;  // the view nodes making v, last first
  ValueId source = v;
  for (;;) {
    const Node& d = graph.node(graph.defining_node(source));
    if (d.num_results != 1 || d.inputs.empty() || !ops::op_def(d.kind).is_view()) break;
    views.push_back(graph.defining_node(source));
    source = d.inputs[0];
  }
  const ValueType& s = graph.type(source);
  Array a(s.shape, row_major_strides(s.shape), 0, s.dtype, 0, nullptr, nullptr);
  for (auto it = views.rbegin(); it != views.rend(); ++it) {
    const Node& d = graph.node(*it);
    const ValueType& t = graph.type(d.first_result);
    const ops::OpDef& def = ops::op_def(d.kind);
    a = def.view_needs_dense() && !a.is_contiguous()
            ? Array(t.shape, row_major_strides(t.shape), 0, t.dtype, 0, nullptr, nullptr)
            : def.view(d.attrs, t, a);
  }
  return a.strides();
}

using KernelFn = void (*)(const char* const*, char* const*, int64_t, int64_t, int);
using ReduceFn = void (*)(const char* const*, char* const*, void* const*, int64_t, int64_t, int64_t);

template <typename T>
T reduce_identity(ReduceOp op) {
  if (op == ReduceOp::sum || op == ReduceOp::or_) return T(0);
  if (op == ReduceOp::and_) return T(1);
  const T inf = std::numeric_limits<T>::infinity();
  return op == ReduceOp::max ? -inf : inf;
}
template <typename T>
T reduce_fold(ReduceOp op, T x, T y) {  // a NaN wins, as in the base tier
  if constexpr (std::is_integral_v<T>) {
    if (op == ReduceOp::sum) return T(std::make_unsigned_t<T>(x) + std::make_unsigned_t<T>(y));  // wraps
    return op == ReduceOp::or_ ? T(x | y) : T(x & y);  // bools
  }
  if (op == ReduceOp::sum) return x + y;
  if (op == ReduceOp::max) return (y > x || y != y) ? y : x;
  return (y < x || y != y) ? y : x;
}

// Runs a reduce kernel: the range splits into pieces fixed by the size alone (results do
// not depend on the number of threads), each folding into its own accumulators over the
// outputs it touches; pieces then combine in order into the outputs.
template <typename T>
void run_reduce_typed(const KernelInfo& info, ReduceFn fn, const std::vector<const char*>& in,
                      const std::vector<Array>& outputs) {
  std::vector<char*> out;
  for (const Array& a : outputs) out.push_back(a.mutable_data());
  const int64_t N = info.size, RK = info.r * info.k2, K2 = info.k2, M = info.k1 * info.k2;
  const int64_t pieces = std::clamp<int64_t>((N + kPiece - 1) / kPiece, 1, kMaxPieces);
  const int64_t len = (N + pieces - 1) / pieces;
  const size_t nr = info.reduces.size();
  std::vector<int64_t> lo(static_cast<size_t>(pieces)), hi(static_cast<size_t>(pieces));
  std::vector<std::vector<T>> acc(size_t(pieces) * nr);
  auto piece = [&](int64_t pb, int64_t pe) {
    for (int64_t p = pb; p < pe; ++p) {
      const int64_t b = p * len, e = std::min(N, b + len);
      if (b >= e) continue;
      lo[size_t(p)] = (b / RK) * K2;
      hi[size_t(p)] = ((e - 1) / RK) * K2 + K2;
      std::vector<void*> ptrs;
      for (size_t r = 0; r < nr; ++r) {
        std::vector<T>& a = acc[size_t(p) * nr + r];
        a.assign(size_t(hi[size_t(p)] - lo[size_t(p)]), reduce_identity<T>(info.reduces[r].op));
        ptrs.push_back(a.data());
      }
      fn(in.data(), out.data(), ptrs.data(), b, e, lo[size_t(p)]);
    }
  };
  if (N * info.cost < kSerial) piece(0, pieces);
  else parallel_for(pieces, 1, piece, N * info.cost >= kLongOpWork);
  for (size_t r = 0; r < nr; ++r) {
    const ReduceOp op = info.reduces[r].op;
    T* out = reinterpret_cast<T*>(outputs[size_t(info.reduces[r].output)].mutable_data());
    std::fill(out, out + M, reduce_identity<T>(op));
    for (int64_t p = 0; p < pieces; ++p) {
      const std::vector<T>& a = acc[size_t(p) * nr + r];
      for (size_t j = 0; j < a.size(); ++j) out[lo[size_t(p)] + int64_t(j)] = reduce_fold(op, out[lo[size_t(p)] + int64_t(j)], a[j]);
    }
  }
}

}  // namespace

Mode mode_from_env() {
  const char* v = std::getenv("TINYXLA_CODEGEN");
  if (!v || !*v || std::strcmp(v, "auto") == 0) return Mode::Auto;
  if (std::strcmp(v, "0") == 0) return Mode::Off;
  return Mode::Eager;
}

namespace {

// The host calls of generated loops: their device (for the operands' Arrays) and the
// error of the call that stopped one, for run_loop to throw.
thread_local int host_call_device = 0;
thread_local std::exception_ptr host_call_error;

// A host call without results from a generated loop, on one-element values: left to the
// host-call thread when this thread may, else made now. Never throws into the C code.
int host_call(int64_t callable, int64_t n, const void* const* args, const int64_t* dtypes) {
  try {
    if (n <= DeferredHostCall::kMaxScalars && may_defer_host_calls()) {
      defer_host_call(callable, n, args, dtypes, host_call_device);
      return 0;
    }
    std::vector<Array> xs;
    xs.reserve(size_t(n));
    for (int64_t k = 0; k < n; ++k)
      xs.push_back(Array::from_host(args[k], Shape{}, DType(dtypes[k]), host_call_device));
    if (may_defer_host_calls())
      defer_host_call(callable, std::move(xs));
    else
      call_host(callable, xs, {});
    return 0;
  } catch (...) {
    host_call_error = std::current_exception();
    return 1;
  }
}

}  // namespace

// One thread builds modules in order: a build takes a core for a while, and on a small
// machine two at once would starve the running program.
class Builder {
 public:
  static Builder& get() {
    static Builder* b = [] {
      auto* made = new Builder();  // never destroyed: its thread may outlive statics
      // The queue's lock is held across fork(); the child's queue gets a new condition
      // variable (the parent's builder thread waits on the old one: after_fork.h).
      pthread_atfork([] { get().m_.lock(); }, [] { get().m_.unlock(); }, [] {
        remake_in_child(get().cv_);
        get().m_.unlock();
      });
      return made;
    }();
    return *b;
  }
  void push(std::weak_ptr<Module> m) {
    std::lock_guard<std::mutex> lock(m_);
    queue_.push_back(std::move(m));
    // (Again in a forked child, which has no copy of the thread.)
    if (thread_pid_ != getpid()) {
      thread_pid_ = getpid();
      std::thread([this] { loop(); }).detach();
    }
    cv_.notify_one();
  }

 private:
  void loop() {
    profiler::set_thread_name("codegen builder");
    for (;;) {
      std::weak_ptr<Module> next;
      {
        std::unique_lock<std::mutex> lock(m_);
        cv_.wait(lock, [&] { return !queue_.empty(); });
        next = std::move(queue_.front());
        queue_.pop_front();
      }
      if (auto m = next.lock()) m->build();
    }
  }
  std::mutex m_;
  std::condition_variable cv_;
  std::deque<std::weak_ptr<Module>> queue_;
  pid_t thread_pid_ = 0;  // the process whose builder thread is running
};

std::shared_ptr<Module> Module::generate(const Graph& graph) {
  std::shared_ptr<Module> m(new Module());
  m->table_.add(reinterpret_cast<void*>(&cpu::stream_copy));
  m->kernel_of_node_.assign(size_t(graph.num_nodes()), -1);
  std::string kernels;
  for (int i = 0; i < graph.num_nodes() && int(m->kernels_.size()) < kMaxKernels; ++i) {
    const Node& n = graph.node(i);
    if (n.kind == OpKind::while_loop) {
      KernelInfo info;
      info.symbol = "tx_loop" + std::to_string(i);
      info.loop = true;
      if (!emit_loop(*n.body, n.attr<ops::WhileLoopAttrs>().num_consts, info.symbol,
                     kMaxLoopNodes, &host_call, m->table_, kernels, info))
        continue;
      m->kernel_of_node_[size_t(i)] = int(m->kernels_.size());
      m->kernels_.push_back(std::move(info));
      continue;
    }
    if (n.kind != OpKind::fused) continue;
    KernelInfo info;
    // Inputs are read with the strides of views (broadcasts, slices, transposes) of dense
    // values; run() checks the arrays have them.
    for (ValueId v : n.inputs) info.param_strides.push_back(predicted_strides(graph, v));
    if (!emit_kernel(*n.body, info.param_strides, "tx_kernel" + std::to_string(i),
                     kMaxOpsPerKernel, m->table_, kernels, info))
      continue;
    m->kernel_of_node_[size_t(i)] = int(m->kernels_.size());
    m->kernels_.push_back(std::move(info));
  }
  if (m->kernels_.empty()) return nullptr;
  const std::string n = std::to_string(m->table_.fns.size());
  m->source_ = module_prelude() + "static void* tx_fn[" + n + "];\n" + kernels +
               "void tx_init(void* const* fns) { for (int i = 0; i < " + n +
               "; ++i) tx_fn[i] = fns[i]; }\n"
               // What module_matches finds in the file before loading it.
               "__attribute__((used)) const char tx_module_key[] = TX_MODULE_KEY;\n";
  m->fns_.reset(new std::atomic<void*>[m->kernels_.size()]);
  for (size_t k = 0; k < m->kernels_.size(); ++k) m->fns_[k].store(nullptr);
  return m;
}

Module::~Module() {
  if (handle_) dlclose(handle_);
}

void Module::start(Environment environment) {
  {
    std::lock_guard<std::mutex> lock(m_);
    if (state_ != State::Pending) return;
    environment_ = std::move(environment);
    state_ = State::Queued;
    status_ = "building";
    queued_by_ = getpid();
  }
  Builder::get().push(weak_from_this());
}

void Module::wait() const {
  bool requeue;
  {
    std::lock_guard<std::mutex> lock(m_);
    if (state_ != State::Queued) return;
    requeue = queued_by_ != getpid();
    if (requeue) {
      queued_by_ = getpid();
      remake_in_child(cv_);  // a thread of the parent may have waited on it
    }
  }
  // Queued in the parent of this forked process, whose builder thread stayed behind (and
  // may have been building it): queue it here.
  if (requeue) Builder::get().push(std::const_pointer_cast<Module>(shared_from_this()));
  std::unique_lock<std::mutex> lock(m_);
  cv_.wait(lock, [&] { return state_ != State::Queued; });
}

std::string Module::status() const {
  std::lock_guard<std::mutex> lock(m_);
  return status_;
}

void Module::build() {
  {
    std::lock_guard<std::mutex> lock(m_);
    if (state_ == State::Done) return;  // queued twice across a fork
  }
  profiler::Span span("codegen: build C module", "compile");
  UseEnvironment use(environment_);
  std::string outcome;
  const std::string compiler = find_compiler();
  if (compiler.empty()) {
    outcome = "failed: no C compiler found";
  } else {
    const std::string key = cache_key(source_, compiler), dir = cache_dir();
    const std::string so = dir + "/" + key + ".so";
    outcome = "cached";
    if (dir.empty()) {
      outcome = "failed: no private cache directory";
    } else if (!module_matches(so, key)) {  // absent, or a file that is not this module
      const std::string why = build_shared_library(compiler, source_, so, key);
      outcome = why.empty() ? "loaded" : "failed: " + why;
      if (why.empty() && !module_matches(so, key))
        outcome = "failed: the built module " + so + " does not carry its key";
    }
    if (outcome[0] != 'f') {
      void* h = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
      auto init = h ? reinterpret_cast<void (*)(void* const*)>(dlsym(h, "tx_init")) : nullptr;
      std::vector<void*> fns;
      for (const KernelInfo& k : kernels_)
        if (h) fns.push_back(dlsym(h, k.symbol.c_str()));
      if (!init || std::count(fns.begin(), fns.end(), nullptr)) {
        const char* err = dlerror();
        outcome = std::string("failed: cannot load ") + so + (err ? std::string(": ") + err : "");
        if (h) dlclose(h);
      } else {
        init(table_.fns.data());
        handle_ = h;
        trim_cache(dir, so);
        // Running executions finish on the kernel they started with.
        for (size_t k = 0; k < fns.size(); ++k) fns_[k].store(fns[k], std::memory_order_release);
        loaded_.store(true, std::memory_order_release);
      }
    }
  }
  if (outcome[0] == 'f') warn_fallback_once(outcome.substr(std::strlen("failed: ")));
  std::lock_guard<std::mutex> lock(m_);
  state_ = State::Done;
  status_ = outcome;
  cv_.notify_all();
}

bool Module::has_loop(int node) const {
  if (size_t(node) >= kernel_of_node_.size()) return false;
  const int k = kernel_of_node_[size_t(node)];
  return k >= 0 && kernels_[size_t(k)].loop && fns_[size_t(k)].load(std::memory_order_acquire);
}

bool Module::run_loop(int node, const std::vector<Array>& inputs, const std::vector<Array>& outputs) const {
  if (!has_loop(node)) return false;
  const KernelInfo& info = kernels_[size_t(kernel_of_node_[size_t(node)])];
  void* const sym = fns_[size_t(kernel_of_node_[size_t(node)])].load(std::memory_order_acquire);
  std::vector<const char*> in;
  in.reserve(inputs.size() + info.host_callables.size());
  for (const Array& a : inputs) in.push_back(a.data());  // one element each
  for (const int64_t& id : info.host_callables) in.push_back(reinterpret_cast<const char*>(&id));
  std::vector<char*> out;
  out.reserve(outputs.size());
  for (const Array& a : outputs) out.push_back(a.mutable_data());
  host_call_device = outputs.empty() ? 0 : outputs[0].device();
  const int failed = reinterpret_cast<int (*)(const char* const*, char* const*)>(sym)(in.data(), out.data());
  runs_.fetch_add(1, std::memory_order_relaxed);
  if (failed) std::rethrow_exception(std::exchange(host_call_error, nullptr));
  return true;
}

bool Module::run(int node, const std::vector<Array>& inputs, const std::vector<Array>& outputs) const {
  if (size_t(node) >= kernel_of_node_.size()) return false;
  const int k = kernel_of_node_[size_t(node)];
  if (k < 0 || kernels_[size_t(k)].loop) return false;
  void* const sym = fns_[size_t(k)].load(std::memory_order_acquire);
  if (!sym) return false;
  const KernelInfo& info = kernels_[size_t(k)];
  std::vector<const char*> in;
  in.reserve(inputs.size() + info.runtime_constants.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Array& a = inputs[i];
    for (size_t d = 0; d < a.shape().size(); ++d)
      if (a.shape()[d] != 1 && a.strides()[d] != info.param_strides[i][d]) return false;
    in.push_back(a.data());
  }
  for (const Array& a : info.runtime_constants) {
    if (!a.is_contiguous()) return false;
    in.push_back(a.data());
  }
  if (!info.reduces.empty()) {
    // The reduces of a kernel share one dtype (emit_kernel checks).
    const auto rfn = reinterpret_cast<ReduceFn>(sym);
    switch (info.reduces[0].dtype) {
      case DType::F32: run_reduce_typed<float>(info, rfn, in, outputs); break;
      case DType::F64: run_reduce_typed<double>(info, rfn, in, outputs); break;
      case DType::I32: case DType::U32: run_reduce_typed<uint32_t>(info, rfn, in, outputs); break;
      case DType::I64: case DType::U64: run_reduce_typed<uint64_t>(info, rfn, in, outputs); break;
      default: run_reduce_typed<uint8_t>(info, rfn, in, outputs); break;  // bool and/or
    }
    runs_.fetch_add(1, std::memory_order_relaxed);
    return true;
  }
  const auto fn = reinterpret_cast<KernelFn>(sym);
  std::vector<char*> out;
  out.reserve(outputs.size());
  size_t out_bytes = 0;
  for (const Array& a : outputs) {
    out.push_back(a.mutable_data());
    out_bytes += a.nbytes();
  }
  const int stream = out_bytes >= kStreamBytes;
  const int64_t N = info.size, T = info.tile, tiles = (N + T - 1) / T;
  auto chunk = [&](int64_t tb, int64_t te) {
    fn(in.data(), out.data(), tb * T, std::min(N, te * T), stream);
    if (stream) _mm_sfence();  // streamed stores are visible before the chunk counts done
  };
  if (N * info.cost < kSerial) {
    chunk(0, tiles);
  } else {
    const int64_t grain = std::max<int64_t>(1, std::clamp<int64_t>((1 << 16) / info.cost, 4096, 1 << 16) / T);
    parallel_for(tiles, grain, chunk, N * info.cost >= kLongOpWork);
  }
  runs_.fetch_add(1, std::memory_order_relaxed);
  return true;
}

}  // namespace tinyxla::codegen
