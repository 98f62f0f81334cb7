// The operating-system calls the runtime makes, in one place. Each has a
// Linux implementation and a portable fallback (C++17 and POSIX or Win32
// only); a build with SEER_PORTABLE defined (CMake -DSEER_PORTABLE=ON) uses
// the fallbacks on Linux too, so that they are tested where the runtime is.
//
//  - parking a thread on a 32-bit word: the futex system call; fallback, a
//    condition variable per address bucket;
//  - the CPUs this process may use: sched_getaffinity; fallback,
//    std::thread::hardware_concurrency();
//  - memory this process may still allocate: /proc/meminfo's MemAvailable
//    capped by a cgroup v2 limit, each only when its file exists; fallback,
//    the physical memory the system reports (sysconf, GlobalMemoryStatusEx);
//  - how long the calling thread has waited, runnable, for a CPU: the run
//    delay in /proc/thread-self/schedstat; fallback, unknown;
//  - this process's id (a pool notices a fork by it): getpid; Win32,
//    GetCurrentProcessId;
//  - a handler run in the child after fork(): pthread_atfork; Win32 has no
//    fork, so nothing to register;
//  - giving freed heap memory back to the system: glibc's malloc_trim (the
//    freed nodes and heaps of a layout are many small blocks, which free()
//    keeps); fallback, nothing.
//  - giving the pages of a live buffer's unused part back to the system:
//    madvise(MADV_DONTNEED); fallback, nothing.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>

namespace seer::platform {

// Whether this build uses the portable fallbacks (not the Linux calls).
bool portable();

// Sleeps while `word` holds `expected`, at most `timeout` (spurious returns
// happen: callers loop on their condition). Comparing the word and going to
// sleep are one step with respect to wake_all(), so a store plus wake_all()
// before it cannot be missed. Thread-safe; blocks; does not allocate.
void park(const std::atomic<std::uint32_t>& word, std::uint32_t expected,
          std::chrono::nanoseconds timeout);

// Wakes every thread in park() on `word` (and, in the fallback, possibly
// others parked on a word in the same bucket: they re-check). Thread-safe;
// does not block for long (a system call or a mutex); does not allocate.
void wake_all(std::atomic<std::uint32_t>& word);

// CPUs this process may run on, at least 1. Thread-safe.
unsigned usable_cpus();

// What available_memory_bytes() answers when it knows nothing.
inline constexpr std::uint64_t kUnknownBytes = std::numeric_limits<std::uint64_t>::max();

// Bytes this process may still allocate, or kUnknownBytes. Thread-safe; may
// read files.
std::uint64_t available_memory_bytes();

// Returns the allocator's free memory to the system where it can (after a
// large structure made of small blocks was freed). Thread-safe; may take a
// few milliseconds; allocates nothing.
void return_free_memory();

// Gives the whole pages inside [begin, begin + bytes) back to the system:
// the memory stays allocated and usable, and reads as zeros until written
// again (a buffer whose contents moved elsewhere, freed as they go). The
// caller owns the range and needs none of its contents. Thread-safe;
// allocates nothing.
void discard_pages(void* begin, std::size_t bytes);

// The calling thread's run delay: the nanoseconds it has spent runnable but
// waiting for a CPU since it started (taken by other threads or processes).
// False when the system does not say. Not the thread's CPU clock: reading
// that makes the kernel charge the running thread up to now, and one whose
// time slice is used up is switched out right there (EEVDF), inside what the
// caller is timing. Thread-safe; two system calls (~1.5 us); allocates nothing.
bool thread_run_delay(std::uint64_t& nanos);

// This process's id. Thread-safe; cheap (a system call at most).
std::int64_t process_id();

// Registers `handler` to run in the child process after fork(); false when
// it could not be registered. Thread-safe.
bool on_fork_in_child(void (*handler)());

}  // namespace seer::platform
