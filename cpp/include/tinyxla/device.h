// Devices: each is an in-order stream served by its own host thread.
#pragma once
#include <functional>
#include <memory>
#include <vector>

#include "tinyxla/future.h"

namespace tinyxla {

class Stream;

class Device {
 public:
  explicit Device(int id);
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  int id() const { return id_; }
  // Runs `task` on this device once every event in `deps` is set, in submission order.
  // A `small` task whose deps are all ready runs at once on the calling thread when the
  // stream is idle: a thread hand-off costs more than the work. The task must not throw;
  // it reports failure through the events it owns.
  void submit(std::vector<EventPtr> deps, std::function<void()> task, bool small);
  // Whether a small task whose deps are all ready would run at once on the calling thread
  // (see submit): the caller may then run it itself without building a task.
  bool runs_small_now();
  // Blocks until every task submitted so far has run.
  void synchronize();
  // Runs this device's queued tasks on the calling thread while `ev` is pending and the
  // stream is idle: a thread about to wait for a result does the work instead of waiting
  // for the stream thread to be scheduled (on a busy machine, a time slice later).
  void help(const Event& ev);

 private:
  int id_;
  std::unique_ptr<Stream> stream_;
};

// The CPU devices, created on first use. Their number is fixed from then on.
const std::vector<std::unique_ptr<Device>>& devices();
Device& device(int id);  // throws an InvalidArgument Error for an unknown id
int num_devices();
// Sets the device count; an Error once the devices exist with another count.
void set_num_devices(int n);

}  // namespace tinyxla
