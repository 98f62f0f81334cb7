"""This process's OS threads (Linux /proc), for the tests that no thread outlives close()."""

import os
import time


def threads_of_this_process() -> int:
    return len(os.listdir("/proc/self/task"))


def settled_thread_count(expected: int, timeout: float = 5.0) -> int:
    """The thread count once it equals ``expected``, or whatever it is after ``timeout`` s.

    A joined thread can stay listed in /proc for a moment after the join
    returned (the kernel reaps it just after it wakes the joiner); on a busy
    machine that moment is long enough to be counted.
    """
    deadline = time.monotonic() + timeout
    while threads_of_this_process() != expected and time.monotonic() < deadline:
        time.sleep(0.01)
    return threads_of_this_process()
