// The caching allocator behind Buffer: freed blocks are kept by size class and reused,
// so repeated calls do not page-fault fresh memory.
#include "tinyxla/buffer.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "tinyxla/error.h"

namespace tinyxla {
namespace {

constexpr size_t kAlign = 64;
constexpr size_t kHugePage = size_t(2) << 20;

// Power-of-two classes up to 1 MiB, then whole MiBs: bounded waste, few classes.
size_t size_class(size_t n) {
  if (n <= kAlign) return kAlign;
  if (n <= (size_t(1) << 20)) {
    size_t c = kAlign;
    while (c < n) c <<= 1;
    return c;
  }
  return (n + (size_t(1) << 20) - 1) & ~((size_t(1) << 20) - 1);
}

int64_t physical_memory() {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? int64_t(pages) * page : (int64_t(1) << 34);
}

class Allocator {
 public:
  Allocator() {
    stats_.bytes_limit = physical_memory() / 10 * 9;
    cache_limit_ = stats_.bytes_limit / 4;
  }

  void* allocate(size_t nbytes, size_t* capacity) {
    size_t cap = size_class(nbytes);
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (int64_t(cap) > stats_.bytes_limit - stats_.bytes_in_use) {
        // Cached blocks count against the limit only while they are kept.
        release_cache_locked();
        if (int64_t(cap) > stats_.bytes_limit - stats_.bytes_in_use) throw_oom(nbytes);
      }
      auto it = free_.find(cap);
      if (it != free_.end() && !it->second.empty()) {
        void* p = it->second.back();
        it->second.pop_back();
        stats_.bytes_cached -= int64_t(cap);
        account_locked(cap);
        *capacity = cap;
        return p;
      }
      account_locked(cap);
    }
    void* p = nullptr;
    // madvise needs a page-aligned start: huge blocks start on a huge page.
    if (posix_memalign(&p, cap >= kHugePage ? kHugePage : kAlign, cap) != 0 || p == nullptr) {
      std::lock_guard<std::mutex> lock(mu_);
      stats_.bytes_in_use -= int64_t(cap);
      throw_oom(nbytes);
    }
    if (cap >= kHugePage) madvise(p, cap, MADV_HUGEPAGE);
    *capacity = cap;
    return p;
  }

  void deallocate(void* p, size_t cap) {
    std::lock_guard<std::mutex> lock(mu_);
    stats_.bytes_in_use -= int64_t(cap);
    if (stats_.bytes_cached + int64_t(cap) > cache_limit_) {
      std::free(p);
      return;
    }
    free_[cap].push_back(p);
    stats_.bytes_cached += int64_t(cap);
  }

  MemoryStats stats() {
    std::lock_guard<std::mutex> lock(mu_);
    return stats_;
  }
  void reset_peak() {
    std::lock_guard<std::mutex> lock(mu_);
    stats_.peak_bytes_in_use = stats_.bytes_in_use;
  }
  void trim() {
    std::lock_guard<std::mutex> lock(mu_);
    release_cache_locked();
  }

 private:
  void account_locked(size_t cap) {
    stats_.bytes_in_use += int64_t(cap);
    stats_.num_allocs += 1;
    if (stats_.bytes_in_use > stats_.peak_bytes_in_use)
      stats_.peak_bytes_in_use = stats_.bytes_in_use;
    if (int64_t(cap) > stats_.largest_alloc_size) stats_.largest_alloc_size = int64_t(cap);
  }
  void release_cache_locked() {
    for (auto& kv : free_)
      for (void* p : kv.second) std::free(p);
    free_.clear();
    stats_.bytes_cached = 0;
  }
  [[noreturn]] static void throw_oom(size_t nbytes) {
    throw Error(ErrorKind::ResourceExhausted,
                "[allocate] RESOURCE_EXHAUSTED: Out of memory allocating " +
                    std::to_string(nbytes) + " bytes.");
  }

  std::mutex mu_;
  std::unordered_map<size_t, std::vector<void*>> free_;
  MemoryStats stats_;
  int64_t cache_limit_;
};

// Leaked on purpose: buffers may be freed by static destructors after it would die.
Allocator& allocator() {
  static Allocator* a = new Allocator();
  return *a;
}

}  // namespace

Buffer::Buffer(size_t nbytes) : size_(nbytes) { data_ = allocator().allocate(nbytes, &capacity_); }
Buffer::Buffer(void* borrowed, size_t nbytes, std::function<void()> release)
    : data_(borrowed), size_(nbytes), capacity_(0), release_(std::move(release)) {}

Buffer::~Buffer() {
  if (release_) {
    release_();
  } else {
    allocator().deallocate(data_, capacity_);
  }
}

void Buffer::exchange_storage(Buffer& other) {
  if (borrowed() || other.borrowed())
    throw Error(ErrorKind::Internal, "[exchange_storage] a borrowed buffer's memory cannot move");
  std::swap(data_, other.data_);
  std::swap(size_, other.size_);
  std::swap(capacity_, other.capacity_);
}

MemoryStats memory_stats() { return allocator().stats(); }
void reset_peak_memory() { allocator().reset_peak(); }
void trim_memory_cache() { allocator().trim(); }

}  // namespace tinyxla
