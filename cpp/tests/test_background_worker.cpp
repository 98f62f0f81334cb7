// BackgroundWorker: the async vector env's background thread.
//
//  1. Many submit()/wait() rounds: the job runs once per round, off the
//     caller's thread; the caller's writes before submit() are seen by the
//     job and the job's writes are seen after wait() (TSAN checks the
//     happens-before too).
//  2. submit() while a job is in flight throws CallOrderError; wait()
//     without a job returns at once.
//  3. stop() with a job in flight waits for it, then joins; the next
//     submit() starts a new thread. Destruction: never started, idle, and
//     with a job in flight (it finishes first).
#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

#include "background_worker.hpp"
#include "check.hpp"
#include "seer/errors.hpp"

namespace {

void rounds() {
  seer::BackgroundWorker worker;
  const auto caller = std::this_thread::get_id();
  long input = 0, output = 0;  // plain: ordered by submit()/wait()
  bool off_thread = true;
  for (int i = 0; i < 2000; ++i) {
    input = i;
    worker.submit([&] {
      output = input * 2;
      off_thread = off_thread && std::this_thread::get_id() != caller;
    });
    CHECK(worker.in_flight(), "in_flight after submit");
    worker.wait();
    CHECK(!worker.in_flight(), "not in_flight after wait");
    CHECK(output == 2L * i, "job's write seen after wait");
  }
  CHECK(off_thread, "jobs run off the caller's thread");
}

void call_order() {
  seer::BackgroundWorker worker;
  worker.wait();  // nothing in flight: returns
  std::atomic<bool> release{false};
  worker.submit([&] {
    while (!release.load()) std::this_thread::yield();
  });
  bool threw = false;
  try {
    worker.submit([] {});
  } catch (const seer::CallOrderError&) {
    threw = true;
  }
  CHECK(threw, "second submit while in flight throws CallOrderError");
  release.store(true);
  worker.wait();
}

void stop_and_destroy() {
  {
    seer::BackgroundWorker never_started;
  }
  {
    seer::BackgroundWorker worker;
    std::atomic<int> done{0};
    worker.submit([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      done.store(1);
    });
    worker.stop();  // waits for the job, joins
    CHECK(done.load() == 1, "stop() waits for the job in flight");
    CHECK(!worker.in_flight(), "not in_flight after stop");
    worker.submit([&] { done.store(2); });  // a new thread
    worker.wait();
    CHECK(done.load() == 2, "submit after stop runs");
  }
  std::atomic<int> done{0};
  {
    seer::BackgroundWorker worker;
    worker.submit([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      done.store(1);
    });
  }  // destructor with a job in flight
  CHECK(done.load() == 1, "destructor waits for the job in flight");
}

}  // namespace

int main() {
  rounds();
  call_order();
  stop_and_destroy();
  return check::report("test_background_worker");
}
