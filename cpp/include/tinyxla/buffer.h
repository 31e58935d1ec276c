// Immutable device memory: written once by the op that produces it, then read-only.
#pragma once
#include <cstddef>
#include <cstdint>
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
class Buffer {
 public:
  // Throws Error(ResourceExhausted) when the memory cannot be had.
  explicit Buffer(size_t nbytes);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  void* data() const { return data_; }
  size_t size() const { return size_; }
  // Swaps the memory of two buffers of one size. Only for a buffer not yet written (a
  // pending result taking over a donated argument's memory); `other` must be unseen.
  void exchange_storage(Buffer& other);

 private:
  void* data_;
  size_t size_;
  size_t capacity_;
};

MemoryStats memory_stats();
void reset_peak_memory();
// Drops all cached blocks (e.g. before measuring memory).
void trim_memory_cache();

}  // namespace tinyxla
