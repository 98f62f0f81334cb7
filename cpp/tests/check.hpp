// The C++ tests' one harness: CHECK(condition, what) records a failed check
// with its file:line and the test goes on, so one run reports every broken
// case; FAIL(what) records one unconditionally. main ends with
// `return check::report("test_name");`. Checks may run on any thread.
//
// `what` is a message (a string literal or a std::string), optionally followed
// by one or two integers the failure prints beside it (what the test saw). It
// is evaluated only when the check fails. A `const char*` message is recorded
// without allocating (the allocation-failure tests check while allocations
// are made to fail). A condition with a comma outside parentheses (braces, a
// template's arguments) needs parentheses of its own.
#pragma once

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace check {

// Failed checks so far.
inline std::atomic<int> failures{0};
// Failures printed in full; the count at the end says how many there were.
constexpr int kPrinted = 20;
// Above this many failures the test stops at once (0: never). A test whose
// later checks could crash on a broken structure sets it.
inline int stop_after = 0;

inline void fail(const char* file, int line, const char* what) {
  const int n = failures.fetch_add(1, std::memory_order_relaxed) + 1;
  const char* slash = std::strrchr(file, '/');
  if (n <= kPrinted) {
    std::fprintf(stderr, "%s:%d: FAILED: %s\n", slash != nullptr ? slash + 1 : file, line, what);
  }
  if (stop_after > 0 && n > stop_after) {
    std::fprintf(stderr, "stopping after %d failures\n", n);
    std::exit(EXIT_FAILURE);
  }
}

inline void fail(const char* file, int line, const std::string& what) {
  fail(file, line, what.c_str());
}

inline void fail(const char* file, int line, const char* what, unsigned long long a) {
  char text[512];
  std::snprintf(text, sizeof text, "%s (%llu)", what, a);
  fail(file, line, text);
}

inline void fail(const char* file, int line, const char* what, unsigned long long a,
                 unsigned long long b) {
  char text[512];
  std::snprintf(text, sizeof text, "%s (%llu, %llu)", what, a, b);
  fail(file, line, text);
}

inline void fail(const char* file, int line, const std::string& what, unsigned long long a) {
  fail(file, line, what.c_str(), a);
}

inline void fail(const char* file, int line, const std::string& what, unsigned long long a,
                 unsigned long long b) {
  fail(file, line, what.c_str(), a, b);
}

// The test's exit status, after a line saying how it went.
inline int report(const char* name) {
  const int n = failures.load();
  if (n == 0) {
    std::printf("%s: all passed\n", name);
    return EXIT_SUCCESS;
  }
  std::fprintf(stderr, "%s: %d failure(s)\n", name, n);
  return EXIT_FAILURE;
}

}  // namespace check

#define CHECK(ok, ...)                                                          \
  do {                                                                          \
    if (!static_cast<bool>(ok)) ::check::fail(__FILE__, __LINE__, __VA_ARGS__); \
  } while (false)
#define FAIL(...) ::check::fail(__FILE__, __LINE__, __VA_ARGS__)
