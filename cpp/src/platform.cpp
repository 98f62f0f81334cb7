// platform.hpp's calls: the Linux ones, and the portable fallbacks a build
// with SEER_PORTABLE (or any other system) uses.
#include "platform.hpp"

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>

#if defined(__linux__) && !defined(SEER_PORTABLE)
#define SEER_PLATFORM_LINUX 1
#include <fcntl.h>
#include <linux/futex.h>
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#elif defined(_WIN32)
#define NOMINMAX
#include <windows.h>
#else
#include <pthread.h>
#include <unistd.h>
#endif

namespace seer::platform {
namespace {

static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t),
              "a parked-on word is a plain 32-bit word");

#ifndef SEER_PLATFORM_LINUX
// The fallback's parking lot: a mutex and condition variable per bucket of
// word addresses. A waiter compares the word under the bucket's mutex and
// waits (releasing it in the same step); a waker takes the mutex after its
// store, so it either sees the waiter waiting or the waiter sees the store.
struct Bucket {
  std::mutex mutex;
  std::condition_variable parked;
};
constexpr std::size_t kBuckets = 64;  // a pool's barriers and workers: a few words each

Bucket& bucket_of(const void* word) {
  static Bucket buckets[kBuckets];
  const auto address = reinterpret_cast<std::uintptr_t>(word);
  return buckets[(address >> 6) % kBuckets];  // words a cache line apart land apart
}
#endif

#ifdef SEER_PLATFORM_LINUX
// The calling thread's /proc/thread-self/schedstat, open while the thread
// lives. Opened again in a forked child: the file names the thread that
// opened it, which the child does not have.
class SchedstatFile {
 public:
  SchedstatFile() = default;
  SchedstatFile(const SchedstatFile&) = delete;
  SchedstatFile& operator=(const SchedstatFile&) = delete;
  ~SchedstatFile() {
    if (fd_ >= 0) ::close(fd_);
  }
  // The open file, or -1 when it cannot be opened (not retried in this process).
  int fd() {
    const pid_t pid = ::getpid();
    if (pid == pid_) return fd_;
    if (fd_ >= 0) ::close(fd_);
    fd_ = ::open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
    pid_ = pid;
    return fd_;
  }

 private:
  int fd_ = -1;
  pid_t pid_ = 0;  // the process that opened fd_ (0: none yet)
};

// The first unsigned integer in `path`, or kUnknownBytes ("max", missing file).
std::uint64_t read_number(const char* path) {
  std::ifstream in(path);
  std::string word;
  if (!(in >> word) || word.empty() || word[0] < '0' || word[0] > '9') return kUnknownBytes;
  return std::strtoull(word.c_str(), nullptr, 10);
}

std::uint64_t mem_available() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  std::uint64_t kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit) {
    if (key == "MemAvailable:") {
      return kib > kUnknownBytes / 1024 ? kUnknownBytes : kib * 1024;
    }
  }
  return kUnknownBytes;
}
#endif

// The physical memory the system reports, or kUnknownBytes.
std::uint64_t physical_memory() {
#if defined(_WIN32)
  MEMORYSTATUSEX status{};
  status.dwLength = sizeof(status);
  if (GlobalMemoryStatusEx(&status)) return status.ullAvailPhys;
  return kUnknownBytes;
#elif defined(_SC_PHYS_PAGES) && defined(_SC_PAGESIZE)
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_size <= 0) return kUnknownBytes;
  const auto p = static_cast<std::uint64_t>(pages);
  const auto s = static_cast<std::uint64_t>(page_size);
  return p > kUnknownBytes / s ? kUnknownBytes : p * s;
#else
  return kUnknownBytes;
#endif
}

}  // namespace

bool portable() {
#ifdef SEER_PLATFORM_LINUX
  return false;
#else
  return true;
#endif
}

void park(const std::atomic<std::uint32_t>& word, std::uint32_t expected,
          std::chrono::nanoseconds timeout) {
#ifdef SEER_PLATFORM_LINUX
  const auto ns = timeout.count();
  struct timespec ts {};
  ts.tv_sec = static_cast<time_t>(ns / 1000000000);
  ts.tv_nsec = static_cast<long>(ns % 1000000000);
  syscall(SYS_futex, reinterpret_cast<const std::uint32_t*>(&word), FUTEX_WAIT_PRIVATE,
          expected, &ts, nullptr, 0);
#else
  Bucket& b = bucket_of(&word);
  std::unique_lock<std::mutex> lock(b.mutex);
  // seq_cst: the same order as the futex's compare (the caller's Dekker pair).
  if (word.load(std::memory_order_seq_cst) != expected) return;
  b.parked.wait_for(lock, timeout);
#endif
}

void wake_all(std::atomic<std::uint32_t>& word) {
#ifdef SEER_PLATFORM_LINUX
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAKE_PRIVATE, INT32_MAX,
          nullptr, nullptr, 0);
#else
  Bucket& b = bucket_of(&word);
  // Taking the mutex orders this wake after any waiter's compare-and-wait.
  { std::lock_guard<std::mutex> lock(b.mutex); }
  b.parked.notify_all();
#endif
}

unsigned usable_cpus() {
#ifdef SEER_PLATFORM_LINUX
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  if (sched_getaffinity(0, sizeof(cpus), &cpus) == 0) {
    return static_cast<unsigned>(std::max(CPU_COUNT(&cpus), 1));
  }
  return 1;
#else
  return std::max(std::thread::hardware_concurrency(), 1u);
#endif
}

std::uint64_t available_memory_bytes() {
#ifdef SEER_PLATFORM_LINUX
  std::uint64_t available = mem_available();
  if (available == kUnknownBytes) available = physical_memory();  // no /proc/meminfo
  const std::uint64_t cgroup_max = read_number("/sys/fs/cgroup/memory.max");
  if (cgroup_max != kUnknownBytes) {
    const std::uint64_t used = read_number("/sys/fs/cgroup/memory.current");
    const std::uint64_t left = used == kUnknownBytes || used > cgroup_max ? 0 : cgroup_max - used;
    if (used != kUnknownBytes && left < available) available = left;
  }
  return available;
#else
  return physical_memory();
#endif
}

void return_free_memory() {
#if defined(SEER_PLATFORM_LINUX) && defined(__GLIBC__)
  malloc_trim(0);
#endif
}

void discard_pages(void* begin, std::size_t bytes) {
#ifdef SEER_PLATFORM_LINUX
  const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto first = reinterpret_cast<std::uintptr_t>(begin);
  const std::uintptr_t from = (first + page - 1) / page * page;
  const std::uintptr_t to = (first + bytes) / page * page;
  if (to > from) ::madvise(reinterpret_cast<void*>(from), to - from, MADV_DONTNEED);
#else
  (void)begin;
  (void)bytes;
#endif
}

bool thread_run_delay(std::uint64_t& nanos) {
#ifdef SEER_PLATFORM_LINUX
  thread_local SchedstatFile file;
  const int fd = file.fd();
  if (fd < 0) return false;
  char text[96];
  const ssize_t n = ::pread(fd, text, sizeof text - 1, 0);
  if (n <= 0) return false;
  text[n] = '\0';
  // "<ns on a CPU> <ns waiting for one> <times run>"; "0 0 0" when the
  // kernel keeps no scheduler statistics.
  char* end = text;
  std::strtoull(end, &end, 10);
  const unsigned long long delay = std::strtoull(end, &end, 10);
  const unsigned long long runs = std::strtoull(end, &end, 10);
  if (runs == 0) return false;
  nanos = delay;
  return true;
#else
  (void)nanos;
  return false;
#endif
}

std::int64_t process_id() {
#if defined(_WIN32)
  return static_cast<std::int64_t>(GetCurrentProcessId());
#else
  return static_cast<std::int64_t>(::getpid());
#endif
}

bool on_fork_in_child(void (*handler)()) {
#if defined(_WIN32)
  (void)handler;
  return true;
#else
  return pthread_atfork(nullptr, nullptr, handler) == 0;
#endif
}

}  // namespace seer::platform
