#include "background_worker.hpp"

#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>

#include "block_async_signals.hpp"
#include "platform.hpp"
#include "seer/errors.hpp"

namespace seer {

// Held by shared_ptr so that a worker abandoned after fork() never frees
// memory its (nonexistent) thread uses.
struct BackgroundWorker::Shared {
  std::mutex mutex;
  std::condition_variable wake;  // a job or stop arrived
  std::condition_variable done;  // the job returned
  std::function<void()> job;
  bool has_job = false;
  bool stop = false;
};

BackgroundWorker::~BackgroundWorker() { stop(); }

void BackgroundWorker::thread_main(std::shared_ptr<Shared> shared) {
  std::unique_lock<std::mutex> lock(shared->mutex);
  while (true) {
    shared->wake.wait(lock, [&] { return shared->has_job || shared->stop; });
    if (shared->has_job) {
      std::function<void()> job = std::move(shared->job);
      lock.unlock();
      job();
      lock.lock();
      shared->has_job = false;
      shared->done.notify_all();
      continue;
    }
    return;  // stop and nothing left to run
  }
}

void BackgroundWorker::abandon_if_forked() {
  if (!shared_ || owner_pid_ == platform::process_id()) return;
  // A forked child: the parent's thread does not exist here; joining or
  // detaching its handle is undefined, so leak it with the shared state
  // (whose mutex the parent's thread may have held at the fork).
  new std::thread(std::move(thread_));
  new std::shared_ptr<Shared>(std::move(shared_));
  in_flight_ = false;
}

void BackgroundWorker::start() {
  abandon_if_forked();
  if (shared_) return;
  // Set only once the thread runs: a failed start leaves the worker as it
  // was (not started), so a later submit() tries again.
  auto shared = std::make_shared<Shared>();
  {
    BlockAsyncSignals blocked;  // restored on every exit path, a throw included
    try {
      thread_ = std::thread(thread_main, shared);
    } catch (const std::exception& e) {
      throw std::runtime_error(std::string("could not start the background step thread (") +
                               e.what() +
                               "); raise the process's thread/memory limits and try again");
    }
  }
  shared_ = std::move(shared);
  owner_pid_ = platform::process_id();
}

void BackgroundWorker::submit(std::function<void()> job) {
  abandon_if_forked();
  if (in_flight_) {
    throw CallOrderError("a background step is already in flight; wait for it first");
  }
  start();
  {
    std::lock_guard<std::mutex> lock(shared_->mutex);
    shared_->job = std::move(job);
    shared_->has_job = true;
  }
  shared_->wake.notify_one();
  in_flight_ = true;
}

bool BackgroundWorker::job_unfinished_at_fork() const {
  return in_flight_ && shared_ && shared_->has_job;
}

void BackgroundWorker::wait() {
  abandon_if_forked();  // a forked child has no job of its parent to wait for
  if (!in_flight_) return;
  std::unique_lock<std::mutex> lock(shared_->mutex);
  shared_->done.wait(lock, [&] { return !shared_->has_job; });
  in_flight_ = false;
}

void BackgroundWorker::stop() {
  abandon_if_forked();
  if (!shared_) return;  // never started
  wait();
  {
    std::lock_guard<std::mutex> lock(shared_->mutex);
    shared_->stop = true;
  }
  shared_->wake.notify_one();
  thread_.join();
  shared_.reset();
}

}  // namespace seer
