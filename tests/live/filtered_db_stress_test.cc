// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// Concurrent stress: writer threads (single ops, batches, DeleteRange,
// overwrites, merges) and reader threads (Get, MultiGet, direct filter
// probes) on one FilteredDB whose filter starts tiny and grows many times.
// A reader checks a key only when it is provably live during the whole read:
// its Put had returned before the read started and its deletion had not
// started when the read ended. Any miss is a false negative.
//
// Bounded in time: runs until the operation targets are met (at least 10^5
// operations in total) or kMaxSeconds passed. CUCKOO_STRESS_SECONDS=<n>
// makes it run at least n seconds.
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include "rocksdb/sst_file_writer.h"
#include "test_util.h"

namespace rocksdb_cuckoo {
namespace {

using ROCKSDB_NAMESPACE::PinnableSlice;
using ROCKSDB_NAMESPACE::ReadOptions;
using ROCKSDB_NAMESPACE::Slice;
using ROCKSDB_NAMESPACE::Status;
using ROCKSDB_NAMESPACE::WriteBatch;
using ROCKSDB_NAMESPACE::WriteOptions;

constexpr int kWriters = 3;
constexpr int kReaders = 3;
constexpr int64_t kWindow = 3000;  // live keys per writer, roughly
constexpr double kMaxSeconds = 90;
constexpr uint64_t kMinTotalOps = 300000;
constexpr uint64_t kMinWrites = 60000;

std::string WKey(int writer, int64_t index) {
  char buf[40];
  snprintf(buf, sizeof(buf), "w%d_%010lld", writer,
           static_cast<long long>(index));
  return buf;
}

struct alignas(64) WriterState {
  std::atomic<int64_t> created{0};  // keys [0, created) were Put (returned)
  std::atomic<int64_t> delete_started{0};  // keys < this may be (being) deleted
  std::atomic<uint64_t> ops{0};
};

std::string PreKey(int64_t i) {
  char buf[32];
  snprintf(buf, sizeof(buf), "pre_%08lld", static_cast<long long>(i));
  return buf;
}
std::string IngestedKey(int64_t i) {
  char buf[32];
  snprintf(buf, sizeof(buf), "ing_%08lld", static_cast<long long>(i));
  return buf;
}

// kPlain: an empty DB, the writers and readers alone. kTransitions: a DB of
// kPreKeys keys opened with the background build (reads start while it
// runs), and a thread that keeps the filter changing tables under the
// readers: RebuildFilter, PersistFilterSnapshots (freeze, stream, thaw),
// ingestions of new keys (not ready, rebuild, install), and the creation and
// drop of another column family.
enum class Stress { kPlain, kTransitions };
constexpr int64_t kPreKeys = 20000;

class FilteredDBStress : public ::testing::TestWithParam<Stress> {};
INSTANTIATE_TEST_SUITE_P(Modes, FilteredDBStress,
                         ::testing::Values(Stress::kPlain,
                                           Stress::kTransitions),
                         [](const ::testing::TestParamInfo<Stress>& info) {
                           return info.param == Stress::kPlain ? "Plain"
                                                               : "Transitions";
                         });

TEST_P(FilteredDBStress, ConcurrentWritersAndReadersNeverSeeAFalseNegative) {
  const bool transitions = GetParam() == Stress::kTransitions;
  test::TempDir dir;
  const std::string path = dir.path() + "/db";
  FilteredDBOptions fopts = test::SmallFilterOptions(256);
  if (transitions) {
    std::unique_ptr<FilteredDB> db;
    ASSERT_TRUE(FilteredDB::Open(test::TestOptions(), path, fopts, &db).ok());
    WriteBatch batch;
    for (int64_t i = 0; i < kPreKeys; ++i) batch.Put(PreKey(i), "p");
    ASSERT_TRUE(db->Write(WriteOptions(), &batch).ok());
    ASSERT_TRUE(db->Close().ok());
    fopts.background_open = true;
    fopts.snapshot_dir = dir.path() + "/snapshots";
  }
  std::unique_ptr<FilteredDB> db;
  ASSERT_TRUE(FilteredDB::Open(test::TestOptions(), path, fopts, &db).ok());
  const cuckoo::LiveKeyFilter* filter = db->GetLiveKeyFilter(nullptr);

  double min_seconds = 0;
  if (const char* env = getenv("CUCKOO_STRESS_SECONDS"))
    min_seconds = atof(env);

  WriterState writers[kWriters];
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> checked{0}, false_negatives{0}, reads{0}, errors{0};

  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      WriterState& st = writers[w];
      std::mt19937_64 rng(1000 + w);
      int64_t oldest = 0;
      int64_t next = 0;
      // Keys written more than once: SingleDelete is undefined for them.
      std::unordered_set<int64_t> rewritten;
      auto fail = [&](const Status& s) {
        if (!s.ok()) errors.fetch_add(1);
      };
      while (!stop.load(std::memory_order_relaxed)) {
        // Below the window: create and update; above it: delete.
        const bool must_delete = next - oldest > kWindow;
        const int choice = must_delete ? 70 + static_cast<int>(rng() % 30)
                                       : static_cast<int>(rng() % 70);
        if (!must_delete && choice < 40) {
          fail(db->Put(WriteOptions(), WKey(w, next), "v"));
          st.created.store(++next, std::memory_order_release);
          st.ops.fetch_add(1, std::memory_order_relaxed);
        } else if (!must_delete && choice < 55) {
          // A batch: puts of new keys, an overwrite and a merge of live keys,
          // and deletes of the oldest keys.
          WriteBatch batch;
          const int puts = 1 + static_cast<int>(rng() % 8);
          const int dels = static_cast<int>(rng() % 4);
          for (int j = 0; j < puts; ++j)
            fail(batch.Put(WKey(w, next + j), "b"));
          if (next > oldest + 10) {
            fail(batch.Put(WKey(w, next - 1), "overwrite"));
            fail(batch.Merge(WKey(w, next - 2), "+m"));
            rewritten.insert(next - 1);
            rewritten.insert(next - 2);
          }
          const int64_t del_end = std::min(oldest + dels, next - 2);
          if (del_end > oldest)
            st.delete_started.store(del_end, std::memory_order_release);
          for (int64_t k = oldest; k < del_end; ++k)
            fail(batch.Delete(WKey(w, k)));
          fail(db->Write(WriteOptions(), &batch));
          oldest = std::max(oldest, del_end);
          next += puts;
          st.created.store(next, std::memory_order_release);
          st.ops.fetch_add(batch.Count(), std::memory_order_relaxed);
        } else if (!must_delete && choice < 70) {
          if (next <= oldest + 5) continue;
          // Update a live key in place: it must stay in the filter.
          const int64_t k = next - 1 - static_cast<int64_t>(rng() % 5);
          rewritten.insert(k);
          if (rng() % 2) {
            fail(db->Put(WriteOptions(), WKey(w, k), "update"));
          } else {
            fail(db->Merge(WriteOptions(), WKey(w, k), "+u"));
          }
          st.ops.fetch_add(1, std::memory_order_relaxed);
        } else if (choice < 95 && oldest < next) {
          st.delete_started.store(oldest + 1, std::memory_order_release);
          if (rng() % 3 == 0 && rewritten.count(oldest) == 0) {
            fail(db->SingleDelete(WriteOptions(), WKey(w, oldest)));
          } else {
            fail(db->Delete(WriteOptions(), WKey(w, oldest)));
          }
          rewritten.erase(oldest);
          ++oldest;
          st.ops.fetch_add(1, std::memory_order_relaxed);
        } else if (oldest + 20 < next) {
          const int64_t end = oldest + 1 + static_cast<int64_t>(rng() % 20);
          st.delete_started.store(end, std::memory_order_release);
          fail(db->DeleteRange(WriteOptions(), db->DefaultColumnFamily(),
                               WKey(w, oldest), WKey(w, end)));
          st.ops.fetch_add(static_cast<uint64_t>(end - oldest),
                           std::memory_order_relaxed);
          oldest = end;
        }
      }
    });
  }
  // Keys ing_[0, ingested) were ingested (IngestExternalFile returned).
  std::atomic<int64_t> ingested{0};
  std::atomic<uint64_t> transitions_done{0};
  if (transitions) {
    threads.emplace_back([&] {
      std::mt19937_64 rng(3000);
      // The first split comes first, as a rule (the writers' new keys make
      // the table Open sized for the prefilled keys split), so that the
      // rebuilds below do not keep the table from ever splitting; at most a
      // few seconds (Open sizes from RocksDB's key estimate, which may run
      // high).
      const auto wait_start = std::chrono::steady_clock::now();
      while (!stop.load() && std::chrono::steady_clock::now() - wait_start <
                                 std::chrono::seconds(3)) {
        FilteredDBStats s;
        if (db->GetFilterStats(nullptr, &s).ok() && s.splits > 0) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      int round = 0;
      while (!stop.load(std::memory_order_relaxed)) {
        const int step = round++ % 8;
        switch (step == 7 ? 0 : 1 + step % 3) {
          case 0:
            if (!db->RebuildFilter(nullptr).ok()) errors.fetch_add(1);
            break;
          case 1:
            if (!db->PersistFilterSnapshots().ok()) errors.fetch_add(1);
            break;
          case 2: {
            const int64_t first = ingested.load();
            const std::string sst =
                dir.path() + "/ingest" + std::to_string(round) + ".sst";
            ROCKSDB_NAMESPACE::SstFileWriter writer(
                ROCKSDB_NAMESPACE::EnvOptions(), test::TestOptions());
            bool ok = writer.Open(sst).ok();
            for (int64_t i = first; ok && i < first + 50; ++i) {
              ok = writer.Put(IngestedKey(i), "i").ok();
            }
            ok = ok && writer.Finish().ok() &&
                 db->IngestExternalFile(
                       {sst}, ROCKSDB_NAMESPACE::IngestExternalFileOptions())
                     .ok();
            if (!ok) {
              errors.fetch_add(1);
            } else {
              ingested.store(first + 50, std::memory_order_release);
            }
            break;
          }
          case 3: {
            ROCKSDB_NAMESPACE::ColumnFamilyHandle* cf = nullptr;
            if (!db->CreateColumnFamily(test::TestOptions(),
                                        "tmp" + std::to_string(round), &cf)
                     .ok()) {
              errors.fetch_add(1);
              break;
            }
            db->Put(WriteOptions(), cf, "x", "y").PermitUncheckedError();
            if (!db->DropColumnFamily(cf).ok()) errors.fetch_add(1);
            db->DestroyColumnFamilyHandle(cf).PermitUncheckedError();
            break;
          }
        }
        transitions_done.fetch_add(1);
        std::this_thread::sleep_for(std::chrono::milliseconds(rng() % 20));
      }
    });
  }
  for (int r = 0; r < kReaders; ++r) {
    threads.emplace_back([&, r] {
      std::mt19937_64 rng(2000 + r);
      uint64_t local_checked = 0, local_fn = 0, local_reads = 0;
      std::vector<std::string> key_strings(8);
      std::vector<Slice> keys(8);
      std::vector<int64_t> index(8);
      std::vector<PinnableSlice> values(8);
      std::vector<Status> statuses(8);
      while (!stop.load(std::memory_order_relaxed)) {
        if (transitions && rng() % 4 == 0) {
          // A prefilled key (live throughout) or an ingested one.
          std::string key;
          if (rng() % 2 == 0) {
            key = PreKey(static_cast<int64_t>(rng() % kPreKeys));
          } else {
            const int64_t n = ingested.load(std::memory_order_acquire);
            if (n == 0) continue;
            key = IngestedKey(static_cast<int64_t>(rng() % uint64_t(n)));
          }
          std::string value;
          const Status s = db->Get(ReadOptions(), key, &value);
          ++local_reads;
          ++local_checked;
          if (!s.ok()) ++local_fn;
          continue;
        }
        const int w = static_cast<int>(rng() % kWriters);
        const int64_t created =
            writers[w].created.load(std::memory_order_acquire);
        if (created == 0) {
          std::this_thread::yield();
          continue;
        }
        const int64_t lo = std::max<int64_t>(0, created - kWindow - 50);
        const int mode = static_cast<int>(rng() % 10);
        if (mode < 5) {
          const int64_t k =
              lo + static_cast<int64_t>(rng() % uint64_t(created - lo));
          std::string value;
          const Status s = db->Get(ReadOptions(), WKey(w, k), &value);
          ++local_reads;
          if (k >= writers[w].delete_started.load(std::memory_order_acquire)) {
            ++local_checked;
            if (!s.ok()) ++local_fn;
          }
        } else if (mode < 8) {
          for (int j = 0; j < 8; ++j) {
            index[j] =
                lo + static_cast<int64_t>(rng() % uint64_t(created - lo));
            key_strings[j] = WKey(w, index[j]);
            keys[j] = key_strings[j];
          }
          db->MultiGet(ReadOptions(), db->DefaultColumnFamily(), 8, keys.data(),
                       values.data(), statuses.data());
          local_reads += 8;
          const int64_t deleting =
              writers[w].delete_started.load(std::memory_order_acquire);
          for (int j = 0; j < 8; ++j) {
            if (index[j] >= deleting) {
              ++local_checked;
              if (!statuses[j].ok()) ++local_fn;
            }
          }
        } else {
          const int64_t k =
              lo + static_cast<int64_t>(rng() % uint64_t(created - lo));
          const bool maybe = filter->MayContain(WKey(w, k));
          ++local_reads;
          if (k >= writers[w].delete_started.load(std::memory_order_acquire)) {
            ++local_checked;
            if (!maybe) ++local_fn;
          }
          // Never-written keys are NotFound.
          std::string value;
          if (!db->Get(ReadOptions(), "never_" + std::to_string(rng()), &value)
                   .IsNotFound()) {
            errors.fetch_add(1);
          }
        }
      }
      checked.fetch_add(local_checked);
      false_negatives.fetch_add(local_fn);
      reads.fetch_add(local_reads);
    });
  }

  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    uint64_t writes = 0;
    for (auto& w : writers) writes += w.ops.load();
    FilteredDBStats s;
    db->GetFilterStats(nullptr, &s);
    // Reads are only summed at the end; the filter's lookup counter is a
    // lower bound of them meanwhile.
    // With transitions, also the ones asserted on below: the transition
    // thread waits up to 3 s for the first split, and the writes alone may
    // reach their minimum before it starts.
    const bool enough =
        writes >= kMinWrites && writes + s.lookups >= kMinTotalOps &&
        (!transitions || (transitions_done.load() >= 8 && s.rebuilds >= 4));
    if ((enough && elapsed >= min_seconds) || elapsed >= kMaxSeconds) break;
  }
  stop = true;
  for (auto& t : threads) t.join();

  uint64_t writes = 0;
  for (auto& w : writers) writes += w.ops.load();
  db->WaitForFilterRebuilds();
  FilteredDBStats s;
  ASSERT_TRUE(db->GetFilterStats(nullptr, &s).ok());
  printf(
      "stress: %llu write ops, %llu reads, %llu checked, %llu splits, %llu "
      "rescans, %llu tables installed, %llu read retries\n",
      (unsigned long long)writes, (unsigned long long)reads.load(),
      (unsigned long long)checked.load(), (unsigned long long)s.splits,
      (unsigned long long)s.rescans, (unsigned long long)s.rebuilds,
      (unsigned long long)s.read_retries);
  EXPECT_EQ(errors.load(), 0u);
  EXPECT_EQ(false_negatives.load(), 0u);
  EXPECT_GE(writes + reads.load(), 100000u);
  EXPECT_GE(checked.load(), 20000u);
  // Doublings by splits, and rebuilds from the DB once splits made the
  // fingerprints narrow (with transitions: the rebuilds they install).
  if (!transitions) {
    EXPECT_GE(s.splits, 1u);
    EXPECT_GE(s.splits + s.rescans, 3u);
  } else {
    EXPECT_GE(s.rebuilds, 4u);
    printf("stress: %llu transitions, %lld keys ingested\n",
           (unsigned long long)transitions_done.load(),
           (long long)ingested.load());
    EXPECT_GE(transitions_done.load(), 8u);
  }

  // Afterwards the filter is exact: one fingerprint per live key.
  std::unique_ptr<ROCKSDB_NAMESPACE::Iterator> it(
      db->NewIterator(ReadOptions()));
  uint64_t live = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    ++live;
    ASSERT_TRUE(filter->MayContain(
        std::string_view(it->key().data(), it->key().size())));
  }
  ASSERT_TRUE(it->status().ok());
  EXPECT_EQ(filter->size(), live);
  EXPECT_EQ(s.check_errors, 0u);
}

}  // namespace
}  // namespace rocksdb_cuckoo
