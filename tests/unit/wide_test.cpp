// ceil_div and floor_div: their 64-bit and divide-by-1 shortcuts give what
// the 128-bit division gives, on both sides of 2^64.
#include "wide.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace rl {
namespace {

int64_t ceil_div_128(int128 a, int64_t b) {
  return static_cast<int64_t>((a + b - 1) / b);
}
int64_t floor_div_128(int128 a, int64_t b) {
  return static_cast<int64_t>(a / b);
}

TEST(Wide, ShortcutsMatchTheWideDivision) {
  const int128 two64 = int128{1} << 64;
  const int128 dividends[] = {0,
                              1,
                              2,
                              5,
                              599999,
                              600000,
                              600001,
                              6000000000,
                              two64 - 2,
                              two64 - 1,
                              two64,
                              two64 + 1,
                              two64 * 3 + 7,
                              int128{INT64_MAX},
                              int128{INT64_MAX} + 1};
  const int64_t divisors[] = {1, 2, 3, 7, 600000, 1000000007, int64_t{1} << 40, INT64_MAX};
  for (const int128 a : dividends) {
    for (const int64_t b : divisors) {
      // Only quotients that fit int64, as the algorithms use them.
      if (a / b > INT64_MAX - 1) continue;
      EXPECT_EQ(ceil_div(a, b), ceil_div_128(a, b)) << static_cast<double>(a) << " / " << b;
      EXPECT_EQ(floor_div(a, b), floor_div_128(a, b)) << static_cast<double>(a) << " / " << b;
    }
  }
}

}  // namespace
}  // namespace rl
