// Threads the runtime starts never run asynchronous signal handlers: SIGINT
// and friends go to a thread that can act on them (Python's). A thread
// inherits its creator's mask, so the creator blocks them around the
// creation (no window) with this guard, which restores the previous mask on
// every exit path (a failed thread creation included). Win32 has no signal
// masks (its console events go to a thread of their own): nothing to do.
#pragma once

#if !defined(_WIN32)
#include <pthread.h>
#include <signal.h>
#endif

namespace seer {

class BlockAsyncSignals {
 public:
#if defined(_WIN32)
  BlockAsyncSignals() = default;
#else
  BlockAsyncSignals() {
    sigset_t blocked;
    sigemptyset(&blocked);
    for (int sig :
         {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGALRM, SIGUSR1, SIGUSR2, SIGCHLD, SIGPIPE}) {
      sigaddset(&blocked, sig);
    }
    pthread_sigmask(SIG_BLOCK, &blocked, &previous_);
  }
  ~BlockAsyncSignals() { pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }
#endif
  BlockAsyncSignals(const BlockAsyncSignals&) = delete;
  BlockAsyncSignals& operator=(const BlockAsyncSignals&) = delete;

#if !defined(_WIN32)
 private:
  sigset_t previous_;
#endif
};

}  // namespace seer
