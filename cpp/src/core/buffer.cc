// The caching allocator behind Buffer: freed blocks are kept by size class and reused,
// so repeated calls do not page-fault fresh memory. Small blocks are kept per thread first:
// a block freed by the thread that reuses it is still in that core's cache, and two devices
// running at once no longer share one lock, one free list and one counter (a 2-device
// sharded jit of a 64x64 chain had written outputs into blocks the other core had just
// freed: it reached 93% of what each device does alone, 95% with per-thread blocks).
#include "tinyxla/buffer.h"

#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>
#include <xmmintrin.h>

#include <algorithm>
#include <array>
#include <atomic>
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
// Blocks up to this size are kept per thread, at most kThreadDepth of a size class and
// kThreadBytes in all (a chain of ops needs two or three of a size at once).
constexpr size_t kThreadBlockMax = size_t(1) << 20;
constexpr int kThreadClasses = 15;  // 64 B .. 1 MiB
constexpr size_t kThreadDepth = 4;
constexpr size_t kThreadBytes = size_t(4) << 20;
constexpr int64_t kPublish = int64_t(512) << 10;  // see count_locked

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

int thread_class(size_t cap) {  // cap: a power of two, 64 B .. kThreadBlockMax
  return __builtin_ctzll(cap) - 6;
}

int64_t physical_memory() {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? int64_t(pages) * page : (int64_t(1) << 34);
}

// A lock taken with one atomic exchange: half a mutex's cost on the allocator's every call.
class SpinLock {
 public:
  void lock() {
    while (held_.exchange(true, std::memory_order_acquire))
      while (held_.load(std::memory_order_relaxed)) _mm_pause();
  }
  void unlock() { held_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> held_{false};
};

// One thread's blocks and counts. Its owner takes the lock on every use (uncontended, a
// line in its own cache); other threads only to read or drain it (stats, trim) and across
// fork.
struct ThreadCache {
  SpinLock mu;
  std::array<std::vector<void*>, kThreadClasses> blocks;
  int64_t cached = 0;     // bytes in `blocks`
  int64_t in_use = 0;     // bytes this thread allocated less those it freed (may be < 0)
  int64_t published = 0;  // the part of in_use added to the allocator's shared count
  int64_t allocs = 0;
};

ThreadCache* thread_cache();

class Allocator {
 public:
  Allocator() : bytes_limit_(physical_memory() / 10 * 9), cache_limit_(bytes_limit_ / 4) {}

  void* allocate(size_t nbytes, size_t* capacity) {
    const size_t cap = size_class(nbytes);
    *capacity = cap;
    raise_to(largest_, int64_t(cap));
    ThreadCache* tc = cap <= kThreadBlockMax ? thread_cache() : nullptr;
    if (tc) {
      std::lock_guard<SpinLock> lock(tc->mu);
      auto& v = tc->blocks[size_t(thread_class(cap))];
      if (!v.empty()) {
        void* p = v.back();
        v.pop_back();
        tc->cached -= int64_t(cap);
        count_locked(*tc, int64_t(cap));
        return p;
      }
    }
    if (int64_t(cap) > bytes_limit_ - in_use_.load(std::memory_order_relaxed)) {
      // Cached blocks count against the limit only while they are kept.
      trim();
      if (int64_t(cap) > bytes_limit_ - in_use_.load(std::memory_order_relaxed)) throw_oom(nbytes);
    }
    void* p = take_shared(cap);
    if (!p) {
      // madvise needs a page-aligned start: huge blocks start on a huge page.
      if (posix_memalign(&p, cap >= kHugePage ? kHugePage : kAlign, cap) != 0 || p == nullptr)
        throw_oom(nbytes);
      if (cap >= kHugePage) madvise(p, cap, MADV_HUGEPAGE);
    }
    if (tc) {
      std::lock_guard<SpinLock> lock(tc->mu);
      count_locked(*tc, int64_t(cap));
    } else {
      allocs_.fetch_add(1, std::memory_order_relaxed);
      publish(int64_t(cap));
    }
    return p;
  }

  void deallocate(void* p, size_t cap) {
    ThreadCache* tc = cap <= kThreadBlockMax ? thread_cache() : nullptr;
    if (tc) {
      std::lock_guard<SpinLock> lock(tc->mu);
      count_locked(*tc, -int64_t(cap));
      auto& v = tc->blocks[size_t(thread_class(cap))];
      if (v.size() < kThreadDepth && tc->cached + int64_t(cap) <= int64_t(kThreadBytes)) {
        v.push_back(p);
        tc->cached += int64_t(cap);
        return;
      }
    } else {
      publish(-int64_t(cap));
    }
    std::lock_guard<std::mutex> lock(mu_);
    if (cached_ + int64_t(cap) > cache_limit_) {
      std::free(p);
      return;
    }
    free_[cap].push_back(p);
    cached_ += int64_t(cap);
  }

  // Exact while no other thread allocates; the peak may miss a moment at which threads
  // held up to kPublish each beyond what they had published.
  MemoryStats stats() {
    MemoryStats s;
    std::lock_guard<std::mutex> reg(registry_mu_);
    s.bytes_in_use = in_use_.load(std::memory_order_relaxed);
    s.num_allocs = allocs_.load(std::memory_order_relaxed);
    {
      std::lock_guard<std::mutex> lock(mu_);
      s.bytes_cached = cached_;
    }
    for (ThreadCache* tc : caches_) {
      std::lock_guard<SpinLock> l(tc->mu);
      s.bytes_in_use += tc->in_use - tc->published;
      s.num_allocs += tc->allocs;
      s.bytes_cached += tc->cached;
    }
    raise_to(peak_, s.bytes_in_use);
    s.peak_bytes_in_use = peak_.load(std::memory_order_relaxed);
    s.largest_alloc_size = largest_.load(std::memory_order_relaxed);
    s.bytes_limit = bytes_limit_;
    return s;
  }
  void reset_peak() { peak_.store(stats().bytes_in_use, std::memory_order_relaxed); }

  // Frees every cached block: the shared lists' and every thread's.
  void trim() {
    std::lock_guard<std::mutex> reg(registry_mu_);
    std::lock_guard<std::mutex> lock(mu_);
    for (ThreadCache* tc : caches_) {
      std::lock_guard<SpinLock> l(tc->mu);
      for (auto& v : tc->blocks) {
        for (void* p : v) std::free(p);
        v.clear();
      }
      tc->cached = 0;
    }
    for (auto& kv : free_)
      for (void* p : kv.second) std::free(p);
    free_.clear();
    cached_ = 0;
  }

  ThreadCache* add_cache() {
    auto* tc = new ThreadCache();
    std::lock_guard<std::mutex> reg(registry_mu_);
    caches_.push_back(tc);
    return tc;
  }
  // A thread that exits gives its blocks to the shared lists and its counts to the shared
  // counts.
  void remove_cache(ThreadCache* tc) {
    {
      std::lock_guard<std::mutex> reg(registry_mu_);
      caches_.erase(std::find(caches_.begin(), caches_.end(), tc));
      publish(tc->in_use - tc->published);
      allocs_.fetch_add(tc->allocs, std::memory_order_relaxed);
      std::lock_guard<std::mutex> lock(mu_);
      for (int c = 0; c < kThreadClasses; ++c)
        for (void* p : tc->blocks[size_t(c)]) free_[size_t(64) << c].push_back(p);
      cached_ += tc->cached;
    }
    delete tc;
  }

  // fork(): every lock is held across it, so the child copies consistent lists. The
  // caches of threads the child does not have stay registered: their blocks are valid
  // memory there, reused by nobody until a trim frees them.
  void lock_for_fork() {
    registry_mu_.lock();
    mu_.lock();
    for (ThreadCache* tc : caches_) tc->mu.lock();
  }
  void unlock_after_fork() {
    for (ThreadCache* tc : caches_) tc->mu.unlock();
    mu_.unlock();
    registry_mu_.unlock();
  }

 private:
  // A thread's count moves the shared one (and the peak) only in steps of kPublish: a
  // chain of small ops allocates and frees a block per op, and two devices updating one
  // counter per op made its cache line travel between their cores.
  void count_locked(ThreadCache& tc, int64_t delta) {
    if (delta > 0) ++tc.allocs;
    tc.in_use += delta;
    const int64_t unpublished = tc.in_use - tc.published;
    if (unpublished > kPublish || unpublished < -kPublish) {
      publish(unpublished);
      tc.published = tc.in_use;
    }
  }
  void publish(int64_t delta) {
    raise_to(peak_, in_use_.fetch_add(delta, std::memory_order_relaxed) + delta);
  }
  void* take_shared(size_t cap) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = free_.find(cap);
    if (it == free_.end() || it->second.empty()) return nullptr;
    void* p = it->second.back();
    it->second.pop_back();
    cached_ -= int64_t(cap);
    return p;
  }
  static void raise_to(std::atomic<int64_t>& a, int64_t v) {
    int64_t cur = a.load(std::memory_order_relaxed);
    while (v > cur && !a.compare_exchange_weak(cur, v, std::memory_order_relaxed)) {
    }
  }
  [[noreturn]] static void throw_oom(size_t nbytes) {
    throw Error(ErrorKind::ResourceExhausted,
                "[allocate] RESOURCE_EXHAUSTED: Out of memory allocating " +
                    std::to_string(nbytes) + " bytes.");
  }

  const int64_t bytes_limit_;
  const int64_t cache_limit_;
  // Published counts: in use (threads' unpublished parts aside), the peak, the largest
  // block, allocations not counted by a live thread's cache.
  std::atomic<int64_t> in_use_{0}, peak_{0}, largest_{0}, allocs_{0};
  std::mutex mu_;  // free_, cached_
  std::unordered_map<size_t, std::vector<void*>> free_;
  int64_t cached_ = 0;
  std::mutex registry_mu_;  // caches_
  std::vector<ThreadCache*> caches_;
};

// Leaked on purpose: buffers may be freed by static destructors after it would die.
Allocator& allocator() {
  static Allocator* a = [] {
    auto* made = new Allocator();
    pthread_atfork([] { allocator().lock_for_fork(); }, [] { allocator().unlock_after_fork(); },
                   [] { allocator().unlock_after_fork(); });
    return made;
  }();
  return *a;
}

// The calling thread's cache, made at its first use; null once its thread began to exit
// (its blocks went to the shared lists, and so do its later frees). One trivially
// destructible record, readable while the thread exits; the owner's destructor empties it.
struct ThreadSlot {
  ThreadCache* cache = nullptr;
  bool gone = false;
};
thread_local ThreadSlot tl_slot;

struct CacheOwner {
  ~CacheOwner() {
    ThreadSlot& slot = tl_slot;
    slot.gone = true;
    if (slot.cache) allocator().remove_cache(slot.cache);
    slot.cache = nullptr;
  }
};

ThreadCache* thread_cache() {
  ThreadSlot& slot = tl_slot;
  if (!slot.cache && !slot.gone) {
    thread_local CacheOwner owner;
    slot.cache = allocator().add_cache();
  }
  return slot.cache;
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
