// sort_by_key (key_order.hpp) puts events in key_less order: checked
// against std::sort over random sets with many equal times (ties broken by
// source, then seq), 0.0 and -0.0 (equal in key_less), subnormal, huge and
// duplicate-looking times, and sizes around its radix passes (0, 1, 2, 255,
// 256, 257, 100k).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "check.hpp"
#include "key_order.hpp"

namespace {

void check_sorted(std::uint64_t seed, std::size_t n, int time_kinds) {
  std::mt19937_64 rng(seed);
  const double special[] = {0.0, -0.0, 5e-324, 1e-300, 1.0, 1.5, 3600.0, 1e300};
  std::vector<seer::Event> events(n);
  std::uint64_t seq = 0;
  for (seer::Event& e : events) {
    const std::uint64_t r = rng();
    e.time = time_kinds == 0 ? special[r % 8]
             : time_kinds == 1 ? static_cast<double>(r % 16) * 0.25
                               : std::uniform_real_distribution<double>(0.0, 1e6)(rng);
    e.source = static_cast<seer::EntityId>(rng() % 7);
    e.seq = seq++ % 5 + (rng() % 3) * 1000;  // equal (time, source) pairs, distinct seqs mostly
    e.target = static_cast<seer::EntityId>(rng() % 100);
  }
  std::vector<const seer::Event*> got;
  for (const seer::Event& e : events) got.push_back(&e);
  std::vector<const seer::Event*> want = got;
  std::stable_sort(want.begin(), want.end(),
                   [](const seer::Event* a, const seer::Event* b) { return seer::key_less(*a, *b); });
  seer::sort_by_key(got);
  const std::string where = "seed " + std::to_string(seed) + ", n " + std::to_string(n) +
                            ", times " + std::to_string(time_kinds);
  if (got.size() != want.size()) return FAIL(where + ": size changed");
  for (std::size_t i = 0; i < n; ++i) {
    // Equal keys (same time, source and seq) may come in either order.
    if (seer::key_less(*got[i], *want[i]) || seer::key_less(*want[i], *got[i])) {
      return FAIL(where + ": differs at " + std::to_string(i));
    }
  }
  std::vector<const seer::Event*> sorted_got = got, sorted_want = want;
  std::sort(sorted_got.begin(), sorted_got.end());
  std::sort(sorted_want.begin(), sorted_want.end());
  if (sorted_got != sorted_want) FAIL(where + ": not a permutation of the input");
}

}  // namespace

int main() {
  std::uint64_t seed = 1;
  for (std::size_t n : {0, 1, 2, 3, 255, 256, 257, 1000, 100000}) {
    for (int kinds = 0; kinds < 3; ++kinds) check_sorted(seed++, n, kinds);
  }
  return check::report("test_key_order");
}
