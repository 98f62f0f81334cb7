// One background thread that runs one job at a time: the async vector env
// runs a batch's step here while the caller (Python) computes the actions of
// another batch.
//
// - The thread starts lazily, on the first submit() (never in a constructor
//   that may run before a fork()); a forked child starts its own.
// - submit() hands the job over and returns; wait() blocks until it returned.
// - stop() (and the destructor) waits for the job in flight and joins the
//   thread: it never outlives its owner.
// - The thread blocks asynchronous signals (SIGINT goes to Python's thread).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <thread>

namespace seer {

class BackgroundWorker {
 public:
  BackgroundWorker() = default;
  ~BackgroundWorker();
  BackgroundWorker(const BackgroundWorker&) = delete;
  BackgroundWorker& operator=(const BackgroundWorker&) = delete;

  // Runs `job` on the background thread. `job` must not throw (catch inside)
  // and must outlive the next wait(). CallOrderError if a job is in flight.
  void submit(std::function<void()> job);

  // Blocks until the job in flight has returned; no-op when none is.
  void wait();

  // A job was submitted and not waited for.
  bool in_flight() const { return in_flight_; }

  // A job was submitted and had not returned yet. Reads the shared state
  // without its lock: only for a forked child's pthread_atfork handler, where
  // no other thread exists to change it.
  bool job_unfinished_at_fork() const;

  // wait(), then join the thread (the next submit() starts a new one).
  void stop();

 private:
  struct Shared;
  static void thread_main(std::shared_ptr<Shared> shared);
  void start();
  void abandon_if_forked();

  std::shared_ptr<Shared> shared_;
  std::thread thread_;
  std::int64_t owner_pid_ = 0;
  bool in_flight_ = false;
};

}  // namespace seer
