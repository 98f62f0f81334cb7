// Philox4x64-10 known-answer test (Random123's published vectors) and the
// save/restore of a stream position.
#include <cstdio>
#include <cstdlib>

#include "check.hpp"
#include "seer/rng.hpp"

namespace {

}  // namespace

int main() {
  // Random123 kat_vectors: philox4x64 10 rounds, counter and key all ones.
  const std::uint64_t ones[4] = {~0ULL, ~0ULL, ~0ULL, ~0ULL};
  std::uint64_t out[4];
  seer::Philox4x64::block(ones, ~0ULL, ~0ULL, out);
  CHECK(out[0] == 0x87b092c3013fe90bULL && out[1] == 0x438c3c67be8d0224ULL &&
            out[2] == 0x9cc7d7c69cd777b6ULL && out[3] == 0xa09caebf594f0ba0ULL,
        "philox4x64-10 known answer (all ones)");

  seer::EntityRng a(42, 9);
  for (int i = 0; i < 6; ++i) a.next_u64();
  seer::EntityRng b;
  b.restore(42, 9, a.blocks(), a.used());
  bool same = true;
  for (int i = 0; i < 20; ++i) same = same && (a.next_u64() == b.next_u64());
  CHECK(same, "restore continues the stream");

  // The portable 128-bit product (what a compiler without __int128 uses)
  // gives __int128's bits: edges, then a stream of random pairs.
  bool wide_same = true;
  auto compare = [&](std::uint64_t x, std::uint64_t y) {
    std::uint64_t low = 0, portable_low = 0;
    const std::uint64_t high = seer::rng_detail::multiply_wide(x, y, &low);
    const std::uint64_t portable_high =
        seer::rng_detail::multiply_wide_portable(x, y, &portable_low);
    wide_same = wide_same && high == portable_high && low == portable_low;
  };
  const std::uint64_t edges[] = {0, 1, 0xFFFFFFFFULL, 0x100000000ULL, ~0ULL, ~0ULL - 1,
                                 0x8000000000000000ULL, 0xD2E7470EE14C6C93ULL};
  for (std::uint64_t x : edges) {
    for (std::uint64_t y : edges) compare(x, y);
  }
  seer::EntityRng draws(7, 3);
  for (int i = 0; i < 100000; ++i) compare(draws.next_u64(), draws.next_u64());
  CHECK(wide_same, "the portable 128-bit product equals __int128's");

  return check::report("test_rng");
}
