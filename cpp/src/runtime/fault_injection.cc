#include "fault_injection.h"

#include <atomic>
#include <mutex>

#include "tinyxla/error.h"

namespace tinyxla::runtime {
namespace {

std::atomic<int> armed{0};
std::mutex target_m;
std::string target;

}  // namespace

void arm_fault(const std::string& op, int count) {
  std::lock_guard<std::mutex> lock(target_m);
  target = op;
  armed.store(count);
}

void check_fault(const char* op) {
  if (armed.load(std::memory_order_relaxed) <= 0) return;
  std::lock_guard<std::mutex> lock(target_m);
  if (armed.load() <= 0 || target != op) return;
  armed.fetch_sub(1);
  throw_error(ErrorKind::Internal, op, "injected fault");
}

}  // namespace tinyxla::runtime
