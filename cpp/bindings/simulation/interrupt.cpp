#include "simulation/interrupt.hpp"

#include <pythread.h>

#include <atomic>

namespace py = pybind11;

namespace seer::bindings {

#if defined(_WIN32)
void init_interrupts() {}
SigintScope::SigintScope(void (*)(void*), void*) {}
SigintScope::~SigintScope() = default;
#else
namespace {

unsigned long g_main_thread = 0;  // Python's main thread ident (module init)

// The call in progress. `g_request` is written before `g_target` is published
// (release) and read after it is loaded (acquire).
void (*g_request)(void*) = nullptr;
std::atomic<void*> g_target{nullptr};
struct sigaction g_previous {};  // the handler we chain to
// Scopes alive on the main thread. A call nested inside another (an env call
// made by a PythonModel handler) must not install on_sigint over itself: the
// saved "previous" handler would be on_sigint, which then calls itself forever.
int g_depth = 0;

void on_sigint(int sig, siginfo_t* info, void* context) {
  // Only async-signal-safe work here: a lock-free load and store, then the
  // previous handler (Python's C handler is signal-safe by design).
  if (void* target = g_target.load(std::memory_order_acquire)) g_request(target);
  if (g_previous.sa_flags & SA_SIGINFO) {
    g_previous.sa_sigaction(sig, info, context);
  } else if (g_previous.sa_handler != SIG_DFL && g_previous.sa_handler != SIG_IGN) {
    g_previous.sa_handler(sig);
  }
}

}  // namespace

void init_interrupts() {
  g_main_thread = py::module_::import("threading").attr("main_thread")().attr("ident").cast<unsigned long>();
}

SigintScope::SigintScope(void (*request)(void*), void* target) {
  if (PyThread_get_thread_ident() != g_main_thread) return;  // Python handles signals there only
  if (g_depth > 0) {
    // Nested: on_sigint is already installed and chains to Python's handler.
    // Point it at the innermost call (the one running now) and restore the
    // outer target on exit.
    nested_ = true;
    outer_request_ = g_request;
    outer_target_ = g_target.exchange(nullptr, std::memory_order_acq_rel);
    g_request = request;
    g_target.store(target, std::memory_order_release);
    ++g_depth;
    return;
  }
  if (sigaction(SIGINT, nullptr, &previous_) != 0) return;
  const bool is_function = (previous_.sa_flags & SA_SIGINFO) != 0 ||
                           (previous_.sa_handler != SIG_DFL && previous_.sa_handler != SIG_IGN);
  if (!is_function) return;  // SIG_DFL kills, SIG_IGN ignores: as the user chose
  if ((previous_.sa_flags & SA_SIGINFO) != 0 && previous_.sa_sigaction == on_sigint) return;
  g_previous = previous_;
  g_request = request;
  g_target.store(target, std::memory_order_release);
  struct sigaction ours {};
  ours.sa_sigaction = on_sigint;
  ours.sa_flags = SA_SIGINFO | (previous_.sa_flags & SA_ONSTACK);
  sigemptyset(&ours.sa_mask);
  installed_ = sigaction(SIGINT, &ours, nullptr) == 0;
  if (installed_) {
    ++g_depth;
  } else {
    g_target.store(nullptr, std::memory_order_release);
  }
}

SigintScope::~SigintScope() {
  if (nested_) {
    // Unpublish the inner target before re-pointing (a signal in between
    // then reaches no target, only Python's handler, which records it).
    g_target.store(nullptr, std::memory_order_release);
    g_request = outer_request_;
    g_target.store(outer_target_, std::memory_order_release);
    --g_depth;
    return;
  }
  if (!installed_) return;
  sigaction(SIGINT, &previous_, nullptr);
  g_target.store(nullptr, std::memory_order_release);
  --g_depth;
}

#endif  // _WIN32

}  // namespace seer::bindings
