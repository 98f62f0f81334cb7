// Threads the runtime starts never run asynchronous signal handlers: SIGINT
// and friends go to a thread that can act on them (Python's). A thread
// inherits its creator's mask, so the creator blocks them around the
// creation (no window) with this guard, which restores the previous mask on
// every exit path (a failed thread creation included).
#pragma once

#include <pthread.h>
#include <signal.h>

namespace seer {

class BlockAsyncSignals {
 public:
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
  BlockAsyncSignals(const BlockAsyncSignals&) = delete;
  BlockAsyncSignals& operator=(const BlockAsyncSignals&) = delete;

 private:
  sigset_t previous_;
};

}  // namespace seer
