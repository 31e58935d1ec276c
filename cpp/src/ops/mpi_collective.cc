// Definition of mpi_collective: a non-blocking MPI all-reduce or all-gather started from the
// operand's buffer into the result's and polled to completion with a deadline, so that a
// process that left makes this one fail instead of hang. Handles are passed as intptr_t:
// the width of a pointer handle (Open MPI) and, in a register, the int of MPICH's.
#include "mpi_collective.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>
#include <chrono>
#include <mutex>
#include <thread>

#include "../cpu/kernels.h"

namespace tinyxla::ops {
namespace {

using Iallreduce = int (*)(const void*, void*, int, intptr_t, intptr_t, intptr_t, void*);
using Iallgather = int (*)(const void*, int, intptr_t, void*, int, intptr_t, intptr_t, void*);
using Test = int (*)(void*, int*, void*);

struct MpiFunctions {
  Iallreduce iallreduce = nullptr;
  Iallgather iallgather = nullptr;
  Test test = nullptr;
};

std::atomic<const MpiFunctions*> functions{nullptr};

// Buffers of collectives abandoned at their deadline: MPI may still write them, so they
// live until the process ends (which the caller's error soon brings).
std::mutex abandoned_mutex;
std::vector<Array>& abandoned() {
  static auto* kept = new std::vector<Array>();
  return *kept;
}

class MpiCollectiveDef final : public TypedOpDef<MpiCollectiveAttrs> {
 public:
  MpiCollectiveDef() : TypedOpDef(OpKind::mpi_collective) {}
  std::vector<ValueType> infer(std::any& a, const Types& ins) const override {
    need(ins, 1);
    const MpiCollectiveAttrs& at = get(a);
    if (at.processes < 1) invalid("processes must be positive, got " + std::to_string(at.processes));
    if (at.collective == 0) return {{*ins[0].shape, ins[0].dtype}};
    if (at.collective != 1) invalid("no collective " + std::to_string(at.collective));
    Shape shape{at.processes};
    shape.insert(shape.end(), ins[0].shape->begin(), ins[0].shape->end());
    return {{shape, ins[0].dtype}};
  }
  bool has_side_effects() const override { return true; }
  bool stream_only() const override { return true; }
  void run(const std::any& a, const Arrays& ins, const Arrays& outs) const override {
    const MpiCollectiveAttrs& at = get(a);
    const MpiFunctions* fns = functions.load();
    if (fns == nullptr)
      throw_error(ErrorKind::Internal, name(), "MPI is not initialized (jax.distributed.initialize)");
    Array x = ins[0];
    // MPI reads a dense buffer that is not the result's (no MPI_IN_PLACE here).
    if (!x.is_contiguous() || (x.nbytes() && x.data() == outs[0].data())) {
      Array dense(x.shape(), x.dtype(), x.device(), Event::ready());
      if (x.size()) cpu::copy(x, dense);
      x = dense;
    }
    if (x.size() > int64_t(INT32_MAX))
      invalid("operand of " + std::to_string(x.size()) + " elements is over MPI's int count");
    const int count = int(x.size());
    alignas(16) char request[64] = {};
    int rc = at.collective == 0
                 ? fns->iallreduce(x.data(), outs[0].mutable_data(), count, intptr_t(at.datatype),
                                   intptr_t(at.reduce_op), intptr_t(at.comm), request)
                 : fns->iallgather(x.data(), count, intptr_t(at.datatype), outs[0].mutable_data(),
                                   count, intptr_t(at.datatype), intptr_t(at.comm), request);
    if (rc != 0) throw_error(ErrorKind::Internal, name(), "MPI error code " + std::to_string(rc));
    wait(fns, request, at, x, outs[0]);
  }

 private:
  // Polls the request (MPI progresses only inside its calls): yielding between polls for
  // about as long as the transfer takes in shared memory (200 us plus 1 ns a byte), so
  // that a waiting process gives the cores to threads that have work but otherwise answers
  // at once, then sleeping between them (the peer may be computing); fails at the deadline.
  void wait(const MpiFunctions* fns, char* request, const MpiCollectiveAttrs& at, const Array& x,
            const Array& out) const {
    using clock = std::chrono::steady_clock;
    const auto start = clock::now();
    const auto patient = start + std::chrono::microseconds(200) +
                         std::chrono::nanoseconds(int64_t(out.nbytes()));
    const auto deadline = start + std::chrono::milliseconds(at.timeout_ms);
    alignas(16) char status[256];
    int done = 0;
    for (int64_t polls = 1;; ++polls) {
      int rc = fns->test(request, &done, status);
      if (rc != 0) throw_error(ErrorKind::Internal, name(), "MPI error code " + std::to_string(rc));
      if (done) return;
      if (polls % 64) {
        std::this_thread::yield();
        continue;
      }
      const auto now = clock::now();
      if (now > deadline) {
        {
          std::lock_guard<std::mutex> lock(abandoned_mutex);
          abandoned().push_back(x);
          abandoned().push_back(out);
        }
        throw_error(ErrorKind::Internal, name(),
                    "no answer from the other processes within " +
                        std::to_string(at.timeout_ms / 1000) +
                        " s (TINYXLA_MPI_TIMEOUT); a process may have exited");
      }
      if (now > patient) std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }
};

}  // namespace

void set_mpi_functions(intptr_t iallreduce, intptr_t iallgather, intptr_t test) {
  static std::mutex m;
  static std::vector<std::unique_ptr<MpiFunctions>> tables;  // a table lives while any run reads it
  std::lock_guard<std::mutex> lock(m);
  if (!iallreduce || !iallgather || !test) {
    functions.store(nullptr);
    return;
  }
  auto fns = std::make_unique<MpiFunctions>();
  fns->iallreduce = reinterpret_cast<Iallreduce>(iallreduce);
  fns->iallgather = reinterpret_cast<Iallgather>(iallgather);
  fns->test = reinterpret_cast<Test>(test);
  functions.store(fns.get());
  tables.push_back(std::move(fns));
}

TINYXLA_REGISTER_OP(mpi_collective, MpiCollectiveDef)

}  // namespace tinyxla::ops
