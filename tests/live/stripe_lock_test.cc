// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// StripeLock (plugin/cuckoo/live/stripe_lock.h): mutual exclusion under
// contention, many held at once by one thread, try_lock.
#include <gtest/gtest.h>

#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "../../plugin/cuckoo/live/stripe_lock.h"

namespace rocksdb_cuckoo {
namespace {

using live::StripeLock;

TEST(StripeLock, MutualExclusionUnderContention) {
  StripeLock lock;
  uint64_t counter = 0;  // plain: a lost update shows a broken lock
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 200000; ++i) {
        std::lock_guard<StripeLock> guard(lock);
        ++counter;
        if (i % 1000 == 0) std::this_thread::yield();  // a long hold
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(counter, 800000u);
}

TEST(StripeLock, TryLockAndManyHeldAtOnce) {
  std::unique_ptr<StripeLock[]> locks(new StripeLock[1024]);
  EXPECT_TRUE(locks[0].try_lock());
  EXPECT_FALSE(locks[0].try_lock());
  locks[0].unlock();
  // One thread holds all of them (a batch writing 1024 stripes) while
  // others wait for some.
  for (int i = 0; i < 1024; ++i) locks[i].lock();
  uint64_t done = 0;
  std::thread waiter([&] {
    for (int i = 0; i < 1024; i += 37) {
      std::lock_guard<StripeLock> guard(locks[i]);
      ++done;
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  for (int i = 1023; i >= 0; --i) locks[i].unlock();
  waiter.join();
  EXPECT_EQ(done, 28u);
}

}  // namespace
}  // namespace rocksdb_cuckoo
