// A per-case deadline for the C++ tests: a hung or livelocked case must fail
// the test, not hang ctest. start_watchdog() once, start_case() before each
// case, end_cases() after the last; past its deadline the process exits.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace seer_test {

inline std::atomic<double> case_deadline{0.0};  // steady-clock seconds; 0: none
inline std::atomic<const char*> current_case{""};

inline double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

inline void start_case(const char* name, double seconds) {
  current_case.store(name);
  case_deadline.store(now_s() + seconds);
}

inline void end_cases() { case_deadline.store(0.0); }

inline void start_watchdog() {
  std::thread([] {
    for (;;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      const double d = case_deadline.load();
      if (d != 0.0 && now_s() > d) {
        std::fprintf(stderr, "FAILED: case '%s' ran past its deadline (hang or livelock?)\n",
                     current_case.load());
        std::fflush(stderr);
        std::_Exit(EXIT_FAILURE);
      }
    }
  }).detach();
}

}  // namespace seer_test
