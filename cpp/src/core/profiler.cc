// The profiler's recorder (see profiler.h). Each thread appends to its own chain of
// chunks; a chunk's count is published with a release store, so stop() reads a chain
// while its owner may still append. A buffer is emptied by its owner, on its first span
// of a new session, never by the reader.
#include "profiler.h"

#include <time.h>

#include <memory>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

namespace tinyxla::profiler {

std::atomic<bool> g_on{false};

namespace {

struct Raw {
  const char* name;
  const char* cat;
  const char* detail;
  uint64_t t0, t1;
};

struct Chunk {
  static constexpr int kSize = 1024;
  Raw ev[kSize];
  std::atomic<int> n{0};
  std::atomic<Chunk*> next{nullptr};
};

// A thread that records more than this many chunks in one session drops the rest.
constexpr int kMaxChunks = 4096;

void free_chain(Chunk* c) {
  while (c != nullptr) {
    Chunk* next = c->next.load(std::memory_order_relaxed);
    delete c;
    c = next;
  }
}

struct Buffer {
  int tid = 0;
  std::string name;  // guarded by registry_mu
  std::atomic<uint64_t> session{0};
  Chunk* head = new Chunk;
  Chunk* tail = head;  // owner only
  int chunks = 1;      // owner only
  ~Buffer() { free_chain(head); }
};

std::mutex registry_mu;
std::vector<std::shared_ptr<Buffer>>& registry() {
  static auto* r = new std::vector<std::shared_ptr<Buffer>>();  // threads may outlive statics
  return *r;
}
int next_tid = 1;

std::atomic<uint64_t> g_session{0};
std::mutex session_mu;  // start and stop
bool running = false;

std::mutex copied_mu;  // spans recorded from Python
std::vector<Event>& copied() {
  static auto* c = new std::vector<Event>();
  return *c;
}

thread_local std::shared_ptr<Buffer> t_buffer;
thread_local std::string t_name;

Buffer& my_buffer() {
  if (!t_buffer) {
    auto b = std::make_shared<Buffer>();
    std::lock_guard<std::mutex> lock(registry_mu);
    b->tid = next_tid++;
    b->name = t_name.empty() ? "host thread " + std::to_string(b->tid) : t_name;
    registry().push_back(b);
    t_buffer = std::move(b);
  }
  return *t_buffer;
}

int my_tid() { return my_buffer().tid; }

}  // namespace

uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

const char* intern(const std::string& s) {
  // Each thread remembers the names it has seen, so that eager ops recording spans do not
  // take the lock again for a name they interned before.
  thread_local std::unordered_map<std::string, const char*> seen;
  auto it = seen.find(s);
  if (it != seen.end()) return it->second;
  static std::mutex mu;
  static auto* names = new std::unordered_set<std::string>();
  const char* name;
  {
    std::lock_guard<std::mutex> lock(mu);
    name = names->insert(s).first->c_str();
  }
  seen.emplace(s, name);
  return name;
}

void record(const char* name, const char* cat, uint64_t t0, uint64_t t1, const char* detail) {
  Buffer& b = my_buffer();
  const uint64_t session = g_session.load(std::memory_order_acquire);
  if (b.session.load(std::memory_order_relaxed) != session) {
    free_chain(b.head->next.exchange(nullptr, std::memory_order_relaxed));
    b.head->n.store(0, std::memory_order_relaxed);
    b.tail = b.head;
    b.chunks = 1;
    b.session.store(session, std::memory_order_release);
  }
  Chunk* c = b.tail;
  int n = c->n.load(std::memory_order_relaxed);
  if (n == Chunk::kSize) {
    if (b.chunks == kMaxChunks) return;
    Chunk* fresh = new Chunk;
    c->next.store(fresh, std::memory_order_release);
    b.tail = c = fresh;
    ++b.chunks;
    n = 0;
  }
  c->ev[n] = Raw{name, cat, detail, t0, t1};
  c->n.store(n + 1, std::memory_order_release);
}

void record_copy(const std::string& name, const std::string& cat, uint64_t t0, uint64_t t1,
                 const std::string& detail) {
  const int tid = my_tid();
  std::lock_guard<std::mutex> lock(copied_mu);
  copied().push_back(Event{name, cat, detail, t0, t1, tid});
}

void set_thread_name(const std::string& name) {
  t_name = name;
  if (t_buffer) {
    std::lock_guard<std::mutex> lock(registry_mu);
    t_buffer->name = name;
  }
}

bool start() {
  std::lock_guard<std::mutex> lock(session_mu);
  if (running) return false;
  running = true;
  {
    std::lock_guard<std::mutex> c(copied_mu);
    copied().clear();
  }
  g_session.fetch_add(1, std::memory_order_acq_rel);
  g_on.store(true, std::memory_order_release);
  return true;
}

bool stop(Trace* trace) {
  std::lock_guard<std::mutex> lock(session_mu);
  if (!running) return false;
  running = false;
  g_on.store(false, std::memory_order_release);
  const uint64_t session = g_session.load(std::memory_order_acquire);
  std::vector<std::shared_ptr<Buffer>> buffers;
  {
    std::lock_guard<std::mutex> r(registry_mu);
    buffers = registry();
    for (const auto& b : buffers) trace->threads.push_back(Thread{b->tid, b->name});
  }
  for (const auto& b : buffers) {
    if (b->session.load(std::memory_order_acquire) != session) continue;
    for (Chunk* c = b->head; c != nullptr; c = c->next.load(std::memory_order_acquire)) {
      const int n = c->n.load(std::memory_order_acquire);
      for (int i = 0; i < n; ++i) {
        const Raw& r = c->ev[i];
        trace->events.push_back(Event{r.name, r.cat, r.detail ? r.detail : "", r.t0, r.t1, b->tid});
      }
    }
  }
  std::lock_guard<std::mutex> c(copied_mu);
  for (Event& e : copied()) trace->events.push_back(std::move(e));
  copied().clear();
  return true;
}

}  // namespace tinyxla::profiler
