// Ctrl-C during a GIL-released call: SigintScope.
//
// While a step runs without the GIL, Python cannot run its SIGINT handler, so
// a KeyboardInterrupt would wait for the whole step. For the duration of the
// call, SigintScope installs a C handler that asks the runtime to stop
// (`target.request_interrupt()`: one atomic store, async-signal-safe) and
// chains to the previous handler (Python's, which records the signal). The
// runtime then throws seer::Interrupted within one handler on every thread;
// the exception translator runs PyErr_CheckSignals(), so Python's own SIGINT
// handler raises (KeyboardInterrupt by default).
//
// Installed only on Python's main thread (where Python handles signals) and
// only when the current SIGINT handler is a function (not SIG_DFL/SIG_IGN).
// Re-entrant: a scope opened inside another (an env call made from a
// PythonModel handler during a step) only retargets the installed handler to
// the inner call and restores the outer target when it closes.
//
// On Win32 (no sigaction) a scope does nothing: Ctrl-C is handled when the
// call returns.
#pragma once

#include <pybind11/pybind11.h>

#if !defined(_WIN32)
#include <signal.h>
#endif

namespace seer::bindings {

class SigintScope {
 public:
  // Call with the GIL held, before releasing it. `target` must outlive the scope.
  template <class Target>
  explicit SigintScope(Target& target)
      : SigintScope([](void* t) { static_cast<Target*>(t)->request_interrupt(); }, &target) {}
  SigintScope(void (*request)(void*), void* target);
  ~SigintScope();
  SigintScope(const SigintScope&) = delete;
  SigintScope& operator=(const SigintScope&) = delete;

 private:
  bool installed_ = false;  // the outermost scope: restores previous_
  bool nested_ = false;     // inside another scope: restores the outer target
#if !defined(_WIN32)
  struct sigaction previous_ {};
#endif
  void (*outer_request_)(void*) = nullptr;
  void* outer_target_ = nullptr;
};

// Remembers Python's main thread (module init).
void init_interrupts();

}  // namespace seer::bindings
