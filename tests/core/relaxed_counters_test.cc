// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// plugin/core/util/relaxed_counters.h: the counters of the listed fields,
// and only those, reach the statistics struct; concurrent adds are exact.
#include "util/relaxed_counters.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <thread>
#include <vector>

namespace {

struct Stats {
  uint64_t first = 0;
  uint64_t not_counted = 0;
  uint64_t second = 0;
  bool flag = false;
};
using Counters =
    cuckoo::internal::RelaxedCounters<Stats, &Stats::first, &Stats::second>;
static_assert(sizeof(Counters) == 2 * sizeof(uint64_t),
              "one 8-byte atomic per listed field");

TEST(RelaxedCountersTest, StartAtZeroAndAdd) {
  Counters c;
  EXPECT_EQ(c.Load<&Stats::first>(), 0u);
  EXPECT_EQ(c.Load<&Stats::second>(), 0u);
  c.Add<&Stats::first>();
  c.Add<&Stats::second>(5);
  c.Add<&Stats::second>(2);
  EXPECT_EQ(c.Load<&Stats::first>(), 1u);
  EXPECT_EQ(c.Load<&Stats::second>(), 7u);
}

TEST(RelaxedCountersTest, SubLowersOnlyItsField) {
  Counters c;
  c.Add<&Stats::first>(5);
  c.Add<&Stats::second>(5);
  c.Sub<&Stats::first>();
  c.Sub<&Stats::first>(3);
  EXPECT_EQ(c.Load<&Stats::first>(), 1u);
  EXPECT_EQ(c.Load<&Stats::second>(), 5u);
}

TEST(RelaxedCountersTest, CopyToSetsOnlyTheListedFields) {
  Counters c;
  c.Add<&Stats::first>(3);
  Stats s;
  s.first = 100;  // overwritten
  s.not_counted = 42;
  s.second = 100;  // overwritten (with 0)
  s.flag = true;
  c.CopyTo(&s);
  EXPECT_EQ(s.first, 3u);
  EXPECT_EQ(s.second, 0u);
  EXPECT_EQ(s.not_counted, 42u);
  EXPECT_TRUE(s.flag);
}

TEST(RelaxedCountersTest, ConcurrentAddsAreExactAfterJoin) {
  constexpr int kThreads = 4;
  constexpr uint64_t kAdds = 100000;
  Counters c;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&c] {
      for (uint64_t i = 0; i < kAdds; ++i) {
        c.Add<&Stats::first>();
        c.Add<&Stats::second>(2);
      }
    });
  }
  for (auto& t : threads) t.join();
  Stats s;
  c.CopyTo(&s);
  EXPECT_EQ(s.first, kThreads * kAdds);
  EXPECT_EQ(s.second, 2 * kThreads * kAdds);
}

}  // namespace
