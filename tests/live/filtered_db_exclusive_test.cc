// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// Exclusive operations of FilteredDB while single-key writers run flat
// out. Batches, DeleteRange, WaitForDeleteChecks, rebuilds,
// snapshots and drops take the writer lock exclusively; single-key writes
// take it shared. With a reader-preferring lock (glibc's default, hence
// std::shared_mutex) new shared holders overtake a waiting exclusive one,
// and with a few writers the exclusive operations wait forever. The tests
// fail within their deadline when that happens.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

#include "../../plugin/cuckoo/live/test_hooks.h"
#include "../../plugin/cuckoo/live/writer_lock.h"
#include "rocksdb/write_batch.h"
#include "test_util.h"

namespace rocksdb_cuckoo {
namespace {

using ROCKSDB_NAMESPACE::ColumnFamilyHandle;
using ROCKSDB_NAMESPACE::WriteBatch;
using ROCKSDB_NAMESPACE::WriteOptions;
using Clock = std::chrono::steady_clock;

// Deadline for all exclusive operations of one test; they take well under a
// second once the lock prefers them, forever when it does not.
constexpr std::chrono::milliseconds kDeadline{8000};

// Runs `work` on a thread while `threads` contenders loop on `contend`
// until `work` returns or the deadline passes; returns whether `work`
// finished in time (the contenders are stopped either way, which lets a
// starved `work` finish; `at_deadline` runs just before, if set).
bool FinishesWhileContended(int threads,
                            const std::function<void(int, uint64_t)>& contend,
                            const std::function<void()>& work,
                            const std::function<void()>& at_deadline = nullptr,
                            std::chrono::milliseconds deadline = kDeadline) {
  std::atomic<bool> stop{false};
  std::atomic<int> started{0};  // contenders past their first turn
  std::vector<std::thread> contenders;
  for (int t = 0; t < threads; ++t) {
    contenders.emplace_back([&, t] {
      for (uint64_t i = 0; !stop.load(std::memory_order_relaxed); ++i) {
        contend(t, i);
        if (i == 0) started.fetch_add(1);
      }
    });
  }
  // Let the contenders get going: every one has taken its first turn (a
  // busy machine may start a thread late; at most 10 s), then 50 ms more.
  const auto start_deadline = Clock::now() + std::chrono::seconds(10);
  while (started.load() < threads && Clock::now() < start_deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  std::thread worker([&] {
    work();
    std::lock_guard<std::mutex> lock(mu);
    done = true;
    cv.notify_all();
  });
  bool in_time;
  {
    std::unique_lock<std::mutex> lock(mu);
    in_time = cv.wait_for(lock, deadline, [&] { return done; });
  }
  if (!in_time && at_deadline) at_deadline();
  stop = true;
  for (auto& c : contenders) c.join();
  worker.join();
  return in_time;
}

// ---------------------------------------------------------------- the lock

// Shared holders that overlap (each holds the lock for a while and takes it
// again at once) must not keep an exclusive locker out.
template <typename Lock>
bool ExclusiveGetsInUnderSharedLoad(
    std::chrono::milliseconds deadline = kDeadline) {
  Lock lock;
  std::atomic<int> shared_holders{0};
  std::atomic<bool> overlap_seen{false};
  int exclusive_rounds = 0;
  const bool in_time = FinishesWhileContended(
      4,
      [&](int, uint64_t) {
        lock.lock_shared();
        if (shared_holders.fetch_add(1) > 0) overlap_seen = true;
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        shared_holders.fetch_sub(1);
        lock.unlock_shared();
      },
      [&] {
        for (int i = 0; i < 20; ++i) {
          lock.lock();
          EXPECT_EQ(shared_holders.load(), 0);  // mutual exclusion
          ++exclusive_rounds;
          lock.unlock();
        }
      },
      nullptr, deadline);
  EXPECT_TRUE(overlap_seen.load());
  EXPECT_EQ(exclusive_rounds, 20);  // once the shared lockers stopped
  return in_time;
}

TEST(WriterLock, ExclusiveLockerIsNotStarved) {
  EXPECT_TRUE(ExclusiveGetsInUnderSharedLoad<live::WriterLock>());
}

TEST(WriterLock, PortableFallbackIsNotStarved) {
  EXPECT_TRUE(ExclusiveGetsInUnderSharedLoad<live::PortableWriterLock>());
}

// The lock that FilteredDB used before: glibc lets new shared holders in
// while an exclusive locker waits. Not an assertion (other C libraries may
// prefer writers); it shows that the test above can fail.
TEST(WriterLock, StdSharedMutexMayStarveTheExclusiveLocker) {
  const bool in_time = ExclusiveGetsInUnderSharedLoad<std::shared_mutex>(
      std::chrono::milliseconds(1000));
  std::printf(
      "std::shared_mutex: exclusive locker %s under 4 shared "
      "lockers\n",
      in_time ? "got in" : "starved for 1 s");
}

// ------------------------------------------------------------ FilteredDB

// Four single-key writers (Put a new key, Delete an older one) flat out;
// meanwhile every kind of exclusive operation must complete.
TEST(FilteredDBExclusive, ExclusiveOperationsCompleteUnderSingleKeyWriters) {
  test::TempDir dir("exclusive");
  FilteredDBOptions fopts = test::SmallFilterOptions();
  fopts.filtered_column_families = {};
  fopts.snapshot_dir = dir.path() + "/snap";
  std::vector<ColumnFamilyHandle*> handles;
  std::unique_ptr<FilteredDB> db;
  ASSERT_TRUE(
      test::OpenFamilies(dir.path(), {"extra"}, fopts, &handles, &db).ok());
  // Each single-key write holds the shared lock a little longer (as a
  // slower disk or a busier machine would), so that the four writers' hold
  // times overlap: with a reader-preferring lock there is then hardly ever
  // an instant without a shared holder.
  live::SetTestHook([](const char* point) {
    if (std::strcmp(point, "WriteOneShared:BeforeWrite") == 0) {
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  });
  std::atomic<int> write_errors{0};
  std::atomic<int> done{0};  // exclusive operations completed
  int done_at_deadline = -1;
  auto record = [&](const char* what, bool ok) {
    EXPECT_TRUE(ok) << what;
    ++done;
  };
  const bool in_time = FinishesWhileContended(
      4,
      [&](int t, uint64_t i) {
        const std::string prefix = "w" + std::to_string(t) + "_";
        if (!db->Put(WriteOptions(), prefix + std::to_string(i), "v").ok())
          ++write_errors;
        if (i >= 100 &&
            !db->Delete(WriteOptions(), prefix + std::to_string(i - 100)).ok())
          ++write_errors;
      },
      [&] {
        for (int b = 0; b < 10; ++b) {
          WriteBatch batch;
          for (int k = 0; k < 20; ++k) {
            EXPECT_TRUE(batch.Put("b" + std::to_string(b * 100 + k), "v").ok());
          }
          EXPECT_TRUE(batch.Delete("b" + std::to_string(b * 100)).ok());
          record("Write(batch)", db->Write(WriteOptions(), &batch).ok());
          if (b % 3 == 0) {
            record("DeleteRange",
                   db->DeleteRange(WriteOptions(), db->DefaultColumnFamily(),
                                   "b", "c")
                       .ok());
            db->WaitForDeleteChecks();
            record("WaitForDeleteChecks", true);
          }
        }
        record("PersistFilterSnapshots", db->PersistFilterSnapshots().ok());
        record("RebuildFilter",
               db->RebuildFilter(db->DefaultColumnFamily()).ok());
        db->WaitForFilterRebuilds();
        record("WaitForFilterRebuilds", true);
        record("DropColumnFamily", db->DropColumnFamily(handles[1]).ok());
      },
      [&] { done_at_deadline = done.load(); });
  live::SetTestHook(nullptr);
  EXPECT_TRUE(in_time) << "exclusive operations starved: " << done_at_deadline
                       << " of 22 done within " << kDeadline.count() << " ms";
  EXPECT_EQ(done.load(), 22);
  EXPECT_EQ(write_errors.load(), 0);
  test::DestroyHandles(db.get(), &handles);
  ASSERT_TRUE(db->Close().ok());
}

}  // namespace
}  // namespace rocksdb_cuckoo
