// Immutable device memory: written once by the op that produces it, then read-only.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

namespace tinyxla {

struct MemoryStats {
  int64_t bytes_in_use = 0;
  int64_t peak_bytes_in_use = 0;
  int64_t num_allocs = 0;
  int64_t largest_alloc_size = 0;
  int64_t bytes_limit = 0;
  int64_t bytes_cached = 0;  // freed memory kept for reuse
};

// A 64-byte aligned allocation from the caching allocator; returned to it on destruction.
// Or borrowed memory (zero-copy DLPack imports): its owner's `release` runs on destruction,
// and the executor never reuses it for a result (its owner may still read it).
class Buffer {
 public:
  // Throws Error(ResourceExhausted) when the memory cannot be had.
  explicit Buffer(size_t nbytes);
  Buffer(void* borrowed, size_t nbytes, std::function<void()> release);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  void* data() const { return data_; }
  size_t size() const { return size_; }
  bool borrowed() const { return static_cast<bool>(release_); }
  // Swaps the memory of two buffers of one size. Only for a buffer not yet written (a
  // pending result taking over a donated argument's memory); `other` must be unseen.
  // Neither may be borrowed.
  void exchange_storage(Buffer& other);

 private:
  void* data_;
  size_t size_;
  size_t capacity_;
  std::function<void()> release_;
};

MemoryStats memory_stats();
void reset_peak_memory();
// Drops all cached blocks (e.g. before measuring memory).
void trim_memory_cache();

}  // namespace tinyxla
