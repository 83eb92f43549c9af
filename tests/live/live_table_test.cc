// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// The live-key filter without a database: placement and splits
// (LiveLayout), the concurrent table (LiveTable), the filter's growth,
// rebuild, not-ready and checkpoint protocols (LiveKeyFilter), the reader
// gate, and snapshot format version 2.
#include <gtest/gtest.h>
#include <pthread.h>

#include <xxhash.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "cuckoo/live_key_filter.h"
#include "live/live_layout.h"
#include "live/live_snapshot.h"
#include "live/live_table.h"
#include "live/reader_gate.h"
#include "live/test_hooks.h"

namespace cuckoo {
namespace {

using internal::LiveLayout;
using internal::LivePlace;
using internal::LiveTable;

std::vector<KeyHash> RandomHashes(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<KeyHash> out(n);
  for (auto& h : out) h = KeyHash(rng());
  return out;
}

int Slots(int f) { return internal::LiveSlotsPerBucket(f); }
int MaxLevel(int f) { return internal::LiveMaxLevel(f); }

// Every fingerprint width the filter supports.
class PerWidth : public ::testing::TestWithParam<int> {};
INSTANTIATE_TEST_SUITE_P(Widths, PerWidth, ::testing::Range(8, 17),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return "f" + std::to_string(info.param);
                         });

// ------------------------------------------------------------ LiveLayout

// Both buckets are in range and distinct, each is the other's alternate
// (from the stored slot alone), and a stored slot is never 0 (empty), at
// every level.
TEST_P(PerWidth, PlacesArePairsAndSlotsAreNeverEmpty) {
  const int f = GetParam();
  for (int d = 0; d <= MaxLevel(f); ++d) {
    const LiveLayout layout(f, 38, d, 7);
    std::mt19937_64 rng(f * 100 + d);
    for (int k = 0; k < 20000; ++k) {
      // Include hashes whose top f bits are all ones (the reserved value).
      const uint64_t h =
          (k % 16 == 0) ? (rng() | (~uint64_t{0} << (64 - f))) : rng();
      const LivePlace p = layout.Place(h);
      ASSERT_NE(p.pattern, 0u);
      ASSERT_LT(p.pattern, 1u << f);
      ASSERT_LT(p.i1, layout.num_buckets());
      ASSERT_LT(p.i2, layout.num_buckets());
      ASSERT_NE(p.i1, p.i2);
      ASSERT_EQ(layout.AltOf(p.i1, p.pattern), p.i2);
      ASSERT_EQ(layout.AltOf(p.i2, p.pattern), p.i1);
      // Both buckets share the low part l.
      ASSERT_EQ(p.i1 / 38, p.i2 / 38);
      // The slot matches only its own pattern.
      const uint64_t word = layout.WithSlot(0, Slots(f) - 1, p.pattern);
      ASSERT_TRUE(layout.Match(word, p.pattern));
      const uint32_t top = 1u << (f - 1);
      const uint32_t other = p.pattern == top ? top | 1 : p.pattern ^ top;
      ASSERT_FALSE(layout.Match(word, other));
    }
  }
}

// The split of a bucket word puts every entry exactly where the next level
// places its item, with the next level's stored value: the pair moves
// together, nothing is lost or invented.
TEST_P(PerWidth, SplitWordPlacesEntriesAsTheNextLevel) {
  const int f = GetParam();
  const uint64_t c = 10;
  for (int d = 0; d < MaxLevel(f); ++d) {
    const LiveLayout now(f, c, d, 3);
    const LiveLayout next = now.Split();
    ASSERT_EQ(next.level(), d + 1);
    ASSERT_EQ(next.num_buckets(), 2 * now.num_buckets());
    std::mt19937_64 rng(f * 1000 + d);
    for (int k = 0; k < 5000; ++k) {
      const uint64_t h = rng();
      const LivePlace p = now.Place(h);
      const LivePlace q = next.Place(h);
      for (int which = 0; which < 2; ++which) {
        const uint64_t i = which == 0 ? p.i1 : p.i2;
        const uint64_t target = which == 0 ? q.i1 : q.i2;
        ASSERT_TRUE(target == i || target == i + now.num_buckets());
        // A word with this item and another random one.
        const uint64_t other = now.Place(rng()).pattern;
        const uint64_t word =
            now.WithSlot(now.WithSlot(0, 0, other), 1, p.pattern);
        uint64_t low = 0, high = 0;
        now.SplitWord(word, &low, &high);
        const uint64_t moved = target == i ? low : high;
        ASSERT_TRUE(next.Match(moved, q.pattern)) << "f " << f << " d " << d;
        ASSERT_EQ(now.CountEntries(low) + now.CountEntries(high), 2);
        ASSERT_TRUE(next.ValidWord(low) && next.ValidWord(high));
      }
    }
  }
}

TEST(LiveLayout, SlotsPerBucketAndLevels) {
  EXPECT_EQ(Slots(8), 8);
  EXPECT_EQ(Slots(9), 7);
  EXPECT_EQ(Slots(10), 6);
  EXPECT_EQ(Slots(11), 5);
  EXPECT_EQ(Slots(12), 5);
  EXPECT_EQ(Slots(13), 4);
  EXPECT_EQ(Slots(16), 4);
  EXPECT_EQ(MaxLevel(12), 8);
  EXPECT_TRUE(LiveLayout(12, 2, 7, 0).can_split());
  EXPECT_FALSE(LiveLayout(12, 2, 8, 0).can_split());
}

// ------------------------------------------------------------ LiveTable

TEST(LiveTable, InsertContainsErase) {
  LiveTable table(
      LiveLayout(12, LiveTable::BaseBucketsFor(10000, 12, 0.9), 0, 7));
  const auto hashes = RandomHashes(10000, 1);
  uint64_t retries = 0;
  for (KeyHash h : hashes) ASSERT_TRUE(table.Insert(h.value));
  EXPECT_EQ(table.size(), hashes.size());
  for (KeyHash h : hashes) ASSERT_TRUE(table.Contains(h.value, &retries));
  for (size_t i = 0; i < hashes.size(); i += 2)
    ASSERT_TRUE(table.Erase(hashes[i].value));
  EXPECT_EQ(table.size(), hashes.size() / 2);
  for (size_t i = 1; i < hashes.size(); i += 2)
    ASSERT_TRUE(table.Contains(hashes[i].value, &retries));
  size_t still = 0;
  for (size_t i = 0; i < hashes.size(); i += 2)
    still += table.Contains(hashes[i].value, &retries);
  // Erased items only remain visible through false positives (~0.1%).
  EXPECT_LE(still, 25u);
  EXPECT_EQ(retries, 0u);
}

TEST(LiveTable, BaseBucketsForIsEvenAndSized) {
  EXPECT_EQ(LiveTable::BaseBucketsFor(0, 12, 0.93), 2u);
  for (int f : {8, 12, 16}) {
    for (uint64_t keys : {1ull, 7ull, 1000ull, 123457ull}) {
      const uint64_t c = LiveTable::BaseBucketsFor(keys, f, 0.93);
      EXPECT_EQ(c % 2, 0u);
      EXPECT_GE(double(c) * Slots(f) * 0.93, double(keys));
      EXPECT_LE(double(c - 2) * Slots(f) * 0.93, double(keys) + Slots(f));
    }
  }
}

// Breadth-first inserts reach the documented load limit of every bucket
// size before the first failure; a failed insert changes nothing.
TEST_P(PerWidth, FillsBeyondTheMaxLoadLimitAndFailsCleanly) {
  const int f = GetParam();
  const int b = Slots(f);
  for (uint64_t c : {2000ull, 40000ull}) {
    LiveTable table(LiveLayout(f, c, 0, 3));
    const auto hashes = RandomHashes(c * b, c + f);
    size_t n = 0;
    while (n < hashes.size() && table.Insert(hashes[n].value)) ++n;
    const double load = double(n) / double(table.capacity());
    EXPECT_GE(load, LiveMaxLoadLimit(b)) << "c " << c;
    ASSERT_LT(n, hashes.size());
    // The failed insert left the table as it was.
    EXPECT_EQ(table.size(), n);
    uint64_t retries = 0;
    for (size_t i = 0; i < n; ++i)
      ASSERT_TRUE(table.Contains(hashes[i].value, &retries)) << i;
    uint64_t entries = 0;
    for (uint64_t i = 0; i < table.num_buckets(); ++i)
      entries += table.layout().CountEntries(table.LoadBucket(i));
    EXPECT_EQ(entries, n);
  }
}

TEST(LiveTable, DuplicatesUpToTwoBucketsOfCopies) {
  LiveTable table(LiveLayout(12, 1000, 0, 0));
  const uint64_t h = 0x123456789abcdefULL;
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(table.Insert(h)) << i;
  // Both buckets are full of copies whose alternate is each other.
  EXPECT_FALSE(table.Insert(h));
  uint64_t retries = 0;
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(table.Contains(h, &retries));
    ASSERT_TRUE(table.Erase(h));
  }
  EXPECT_FALSE(table.Contains(h, &retries));
  EXPECT_FALSE(table.Erase(h));
  EXPECT_EQ(table.size(), 0u);
}

TEST(LiveTable, BatchedLookupsEqualSingle) {
  LiveTable table(
      LiveLayout(12, LiveTable::BaseBucketsFor(5000, 12, 0.9), 0, 5));
  const auto in = RandomHashes(5000, 3);
  for (KeyHash h : in) ASSERT_TRUE(table.Insert(h.value));
  auto queries = RandomHashes(3000, 4);
  queries.insert(queries.end(), in.begin(), in.begin() + 3000);
  std::unique_ptr<bool[]> out(new bool[queries.size()]);
  uint64_t retries = 0;
  table.ContainsBatch(queries.data(), queries.size(), out.get(), &retries);
  for (size_t i = 0; i < queries.size(); ++i) {
    ASSERT_EQ(out[i], table.Contains(queries[i].value, &retries)) << i;
  }
}

// One writer inserts and erases near full load (many relocations) while
// readers look up items that stay present all the time: no reader may ever
// see one of them absent.
TEST(LiveTable, ConcurrentReadersNeverMissStableItems) {
  const uint64_t buckets = 4096;  // small: relocations everywhere
  LiveTable table(LiveLayout(12, buckets, 0, 9));
  const auto stable = RandomHashes(buckets * 5 / 2, 21);  // 50% load
  for (KeyHash h : stable) ASSERT_TRUE(table.Insert(h.value));
  const auto churn = RandomHashes(buckets * 5 / 2, 22);  // up to +45%
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> misses{0};
  std::atomic<uint64_t> lookups{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < 3; ++r) {
    readers.emplace_back([&, r] {
      std::mt19937_64 rng(r);
      uint64_t local = 0, retries = 0;
      while (!stop.load(std::memory_order_relaxed)) {
        const uint64_t h = stable[rng() % stable.size()].value;
        if (!table.Contains(h, &retries)) misses.fetch_add(1);
        ++local;
      }
      lookups.fetch_add(local);
    });
  }
  const uint64_t before = table.relocations();
  std::mt19937_64 rng(5);
  size_t inserted = 0;
  std::vector<uint64_t> present;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(2);
  for (int round = 0;
       round < 200 && std::chrono::steady_clock::now() < deadline; ++round) {
    // Fill to ~95%, then erase back to ~55%.
    while (table.load_factor() < 0.95 && inserted < churn.size()) {
      if (table.Insert(churn[inserted].value))
        present.push_back(churn[inserted].value);
      ++inserted;
      if (inserted == churn.size()) inserted = 0;
    }
    while (table.load_factor() > 0.55 && !present.empty()) {
      const size_t i = rng() % present.size();
      ASSERT_TRUE(table.Erase(present[i]));
      present[i] = present.back();
      present.pop_back();
    }
  }
  stop = true;
  for (auto& t : readers) t.join();
  EXPECT_EQ(misses.load(), 0u);
  EXPECT_GT(table.relocations() - before, 1000u);
  EXPECT_GT(lookups.load(), 10000u);
  uint64_t retries = 0;
  for (KeyHash h : stable) ASSERT_TRUE(table.Contains(h.value, &retries));
}

#ifdef ROCKSDB_CUCKOO_LIVE_TABLE_RACE_WINDOW
namespace {
// A 2-bucket table: every item's pair is {0, 1}. Bucket = top bit of the low
// 32 bits; fingerprint (top 12 bits) from fp_seed.
uint64_t HashFor(uint32_t bucket, uint32_t fp_seed) {
  return (uint64_t{0x9e3779b9u * (fp_seed + 1)} << 32) |
         (bucket ? 0x80000000u : 0u);
}
// What a reader's Contains(key) saw when `write` ran once between its two
// bucket loads (the race window's hook, on the reader's thread).
struct RaceOutcome {
  bool found = false;
  uint64_t retries = 0;
  int hook_runs = 0;  // 2: the reader retried once
};
struct OnceBetweenLoads {
  std::function<void()> write;
  int runs = 0;
};
void RunOnceBetweenLoads(void* arg) {
  auto* w = static_cast<OnceBetweenLoads*>(arg);
  if (w->runs++ == 0) w->write();
}
RaceOutcome ContainsWithWriteBetweenLoads(const LiveTable& table, uint64_t key,
                                          std::function<void()> write) {
  OnceBetweenLoads w{std::move(write)};
  detail::live_test_between_loads_arg = &w;
  detail::live_test_between_loads = &RunOnceBetweenLoads;
  RaceOutcome r;
  r.found = table.Contains(key, &r.retries);
  detail::live_test_between_loads = nullptr;
  detail::live_test_between_loads_arg = nullptr;
  r.hook_runs = w.runs;
  return r;
}
}  // namespace

// K is live in its alternate bucket A. K2 (primary A) and K3
// (primary P = K's primary) share K's fingerprint and bucket pair. A reader of
// K loads P, then (in the hook, i.e. between its two loads) the writer inserts
// K3 (lands in P) and erases K2 (removes the copy in A that stood for K), then
// the reader loads A. Neither load sees the fingerprint although K is live
// throughout; the reader must notice the erase and retry. Deterministic: the
// hook runs the writer's operations inline, once.
TEST(LiveTable, ReaderSeesFingerprintMovedByInsertAndEraseOfTwins) {
  LiveTable table(LiveLayout(12, 2, 0, 0));
  const uint32_t P = 0, A = 1;
  const uint64_t k = HashFor(P, 0);
  const uint64_t k2 = HashFor(A, 0);
  const uint64_t k3 = HashFor(P, 0);
  // Fillers with other fingerprints. Insert puts an item into the less
  // loaded bucket of its pair, the primary on a tie.
  ASSERT_TRUE(table.Insert(HashFor(P, 1)));  // P: f1
  ASSERT_TRUE(table.Insert(k));              // A: K (A less loaded)
  ASSERT_TRUE(table.Insert(HashFor(P, 2)));  // P: f1 f2 (tie -> primary)
  ASSERT_TRUE(table.Insert(HashFor(A, 3)));  // A: K f3
  ASSERT_TRUE(table.Insert(HashFor(P, 4)));  // P: f1 f2 f4
  ASSERT_TRUE(table.Insert(HashFor(A, 5)));  // A: K f3 f5
  const uint32_t pattern = table.layout().Place(k).pattern;
  auto holds = [&](uint32_t b) {
    return table.layout().Match(table.LoadBucket(b), pattern);
  };
  ASSERT_FALSE(holds(P));
  ASSERT_TRUE(holds(A));

  const RaceOutcome r = ContainsWithWriteBetweenLoads(table, k, [&] {
    ASSERT_TRUE(table.Insert(k3));
    ASSERT_TRUE(table.Erase(k2));
  });
  // The fingerprint moved A -> P while the reader was between P and A.
  EXPECT_TRUE(holds(P));
  EXPECT_FALSE(holds(A));
  EXPECT_TRUE(r.found) << "false negative: live item K not found";
  EXPECT_GE(r.retries, 1u);
  EXPECT_EQ(r.hook_runs, 2) << "one retry after the interleaved writes";
}

namespace {
// A hash whose place in `layout` is buckets (i1, i2), with a fingerprint
// not in *used (added to it).
uint64_t HashAt(const LiveLayout& layout, uint64_t i1, uint64_t i2,
                std::mt19937_64* rng, std::vector<uint32_t>* used) {
  for (;;) {
    const uint64_t h = (*rng)();
    const LivePlace p = layout.Place(h);
    if (p.i1 != i1 || p.i2 != i2) continue;
    if (std::find(used->begin(), used->end(), p.pattern) != used->end())
      continue;
    used->push_back(p.pattern);
    return h;
  }
}

// Inserts F0 into bucket 0 (pair {0, 3}, tie: primary) and then K, whose
// buckets are P = 0 and A = 1, so that K goes to the less loaded A (slot 0).
// Returns K's hash.
uint64_t InsertKIntoItsAlternate(LiveTable* table, const LiveLayout& layout,
                                 std::mt19937_64* rng,
                                 std::vector<uint32_t>* used) {
  EXPECT_TRUE(table->Insert(HashAt(layout, 0, 3, rng, used)));
  const uint64_t k = HashAt(layout, 0, 1, rng, used);
  EXPECT_TRUE(table->Insert(k));
  return k;
}
}  // namespace

// K (buckets P = 0, A = 1) is stored in A. A reader of K loads P, then (in
// the hook, between its two loads) the writer inserts X, whose buckets 1 and
// 2 are full: its cuckoo path moves K from A to P (bucket 0 has room) and
// puts X where K was. The reader then loads A: neither load sees K. The
// move must invalidate the reader through the version stripe of K's pair
// {0, 1} (a stripe of the other buckets on the path would not). 4 buckets,
// deterministic.
TEST(LiveTable, ReaderSeesFingerprintRelocatedBetweenItsLoads) {
  const LiveLayout layout(12, 4, 0, 0);
  LiveTable table(layout);
  std::mt19937_64 rng(3);
  std::vector<uint32_t> used;
  const uint64_t k = InsertKIntoItsAlternate(&table, layout, &rng, &used);
  // Buckets 2 and 3 full (pair {2, 3}), then bucket 1 full (pair {1, 2}).
  for (int i = 0; i < 10; ++i)
    ASSERT_TRUE(table.Insert(HashAt(layout, 2, 3, &rng, &used)));
  for (int i = 0; i < 4; ++i)
    ASSERT_TRUE(table.Insert(HashAt(layout, 1, 2, &rng, &used)));
  const uint32_t pattern = layout.Place(k).pattern;
  auto holds = [&](uint32_t b) {
    return layout.Match(table.LoadBucket(b), pattern);
  };
  ASSERT_FALSE(holds(0));
  ASSERT_EQ(layout.Slot(table.LoadBucket(1), 0), pattern);
  ASSERT_EQ(layout.EmptySlot(table.LoadBucket(1)), -1);
  ASSERT_EQ(layout.EmptySlot(table.LoadBucket(2)), -1);

  const uint64_t x = HashAt(layout, 1, 2, &rng, &used);
  const uint64_t relocations = table.relocations();
  const RaceOutcome r = ContainsWithWriteBetweenLoads(
      table, k, [&] { ASSERT_TRUE(table.Insert(x)); });
  // K moved 1 -> 0 while the reader was between 0 and 1.
  EXPECT_EQ(table.relocations(), relocations + 1);
  EXPECT_TRUE(holds(0));
  EXPECT_FALSE(holds(1));
  EXPECT_TRUE(r.found) << "false negative: live item K not found";
  EXPECT_GE(r.retries, 1u);
  EXPECT_EQ(r.hook_runs, 2) << "one retry after the interleaved insert";
}

// A writer is in the middle of moving K from A = 1 to P = 0 (its stripe is
// odd: BeginWrite done, EndWrite not yet) when a reader of K starts: the
// reader loads the odd version and bucket P (K not there yet); then, between
// the reader's two loads, the writer stores K into P and removes it from A;
// the reader loads A. Neither load saw K and the version did not change
// (the write is still running): the reader must not validate a version it
// first read odd (LiveTryContains clears that bit of its first read). It
// retries, and the writer ends its move during the retry. The same read
// path is LiveKeyFilter::Probe's (detail::LiveTryContains). 4 buckets,
// deterministic.
TEST(LiveTable, ReaderThatStartedDuringAMoveDoesNotValidate) {
  const LiveLayout layout(12, 4, 0, 0);
  LiveTable table(layout);
  std::mt19937_64 rng(5);
  std::vector<uint32_t> used;
  const uint64_t k = InsertKIntoItsAlternate(&table, layout, &rng, &used);
  const uint32_t pattern = layout.Place(k).pattern;
  auto holds = [&](uint32_t b) {
    return layout.Match(table.LoadBucket(b), pattern);
  };
  ASSERT_FALSE(holds(0));
  ASSERT_EQ(layout.Slot(table.LoadBucket(1), 0), pattern);  // K alone in A

  struct Steps {
    std::function<void()> step[2];
    int runs = 0;
  } steps;
  steps.step[0] = [&] {  // the move's two stores, inside the write
    const uint64_t p0 = table.LoadBucket(0);
    table.TestStoreBucket(0,
                          layout.WithSlot(p0, layout.EmptySlot(p0), pattern));
    table.TestStoreBucket(1, layout.WithSlot(table.LoadBucket(1), 0, 0));
  };
  steps.step[1] = [&] { table.TestEndWrite(0, 1); };
  table.TestBeginWrite(0, 1);  // the move started before the reader
  detail::live_test_between_loads_arg = &steps;
  detail::live_test_between_loads = [](void* arg) {
    auto* s = static_cast<Steps*>(arg);
    if (s->runs < 2) s->step[s->runs]();
    ++s->runs;
  };
  uint64_t retries = 0;
  const bool found = table.Contains(k, &retries);
  detail::live_test_between_loads = nullptr;
  detail::live_test_between_loads_arg = nullptr;
  EXPECT_TRUE(holds(0));
  EXPECT_FALSE(holds(1));
  EXPECT_TRUE(found) << "false negative: a read begun during a move "
                        "validated against the running write's version";
  EXPECT_GE(retries, 1u);
  EXPECT_EQ(steps.runs, 2) << "one retry (K in P from the retry's first load)";
}

namespace {
// Inside a reader's read section (between its two bucket loads), another
// thread replaces the filter's table. Replace must not return (free the old
// table) before the reader left its section.
struct ReplaceDuringRead {
  LiveKeyFilter* filter;
  std::unique_ptr<LiveKeyFilter::Builder> builder;
  std::atomic<bool> replaced{false};
  bool returned_early = false;
  int runs = 0;
  std::thread writer;
};
void ReplaceBetweenLoads(void* arg) {
  auto* r = static_cast<ReplaceDuringRead*>(arg);
  if (r->runs++ != 0) return;
  r->writer = std::thread([r] {
    ASSERT_TRUE(r->filter->Replace(std::move(r->builder)));
    r->replaced = true;
  });
  // Long enough for a Replace that does not wait to return (it takes
  // microseconds); the reader still holds the old table.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  r->returned_early = r->replaced.load();
}
}  // namespace

TEST(ReaderGate, RetiredTableOutlivesTheReadSectionsThatLoadedIt) {
  for (bool membarrier : {true, false}) {
    SCOPED_TRACE(membarrier ? "membarrier" : "fenced readers");
    internal::SetReaderFencesForTesting(membarrier);
    LiveKeyFilterOptions o;
    o.initial_capacity = 1000;
    LiveKeyFilter filter(o, 1000);
    ReplaceDuringRead r;
    r.filter = &filter;
    r.builder = filter.BeginRebuild(2000);
    detail::live_test_between_loads_arg = &r;
    detail::live_test_between_loads = &ReplaceBetweenLoads;
    filter.MayContain(KeyHash(0x1234));
    detail::live_test_between_loads = nullptr;
    detail::live_test_between_loads_arg = nullptr;
    r.writer.join();
    EXPECT_EQ(r.runs, 1);
    EXPECT_TRUE(r.replaced);
    EXPECT_FALSE(r.returned_early)
        << "the old table was released while a reader used it";
  }
  internal::SetReaderFencesForTesting(true);
}
#endif  // ROCKSDB_CUCKOO_LIVE_TABLE_RACE_WINDOW

// ------------------------------------------------------------ LiveKeyFilter

LiveKeyFilterOptions SmallOptions(int f = 12, bool background = true) {
  LiveKeyFilterOptions o;
  o.fingerprint_bits = f;
  o.initial_capacity = 1000;
  o.background_splits = background;
  return o;
}

namespace {
// Reads once from its destructor. As a thread_local constructed before the
// thread's first read, it is destroyed after whatever thread_local the
// reader gate constructs at that read.
struct ReadOnThreadExit {
  LiveKeyFilter* filter = nullptr;
  ~ReadOnThreadExit() {
    if (filter != nullptr) filter->MayContain(KeyHash(7));
  }
};
uint32_t SlotIndexOfANewThread() {
  uint32_t index = 0;
  std::thread([&] { index = internal::ThisThreadReaderSlot()->index; }).join();
  return index;
}
}  // namespace

// Threads that read from their thread_local destructors return their reader
// slots too: the registry does not grow with them, and a later thread gets
// a low index (its own one of the filter's 64 counter stripes, which keeps
// GetStats().lookups exact). Hostile review 7 (F4, F5): each such thread
// kept a slot forever, so after 63 of them two live threads shared a stripe.
TEST(ReaderGate, ReadsFromThreadLocalDestructorsReturnTheirSlots) {
  LiveKeyFilter filter(SmallOptions(), 1000);
  ASSERT_TRUE(filter.Insert(KeyHash(7)));
  const uint32_t before = SlotIndexOfANewThread();
  for (uint64_t i = 0; i < 100; ++i) {
    std::thread([&filter, i] {
      static thread_local ReadOnThreadExit reader;
      reader.filter = &filter;
      EXPECT_TRUE(filter.MayContain(KeyHash(7)));  // the thread's first read
      filter.MayContain(KeyHash(i));
    }).join();
  }
  EXPECT_LE(SlotIndexOfANewThread(), before + 1);
  EXPECT_EQ(filter.GetStats().lookups, 300u);
}

// Reads from pthread key destructors, in every round glibc runs (the key
// sets itself again each time): the gate registers the thread again after
// its own key's destructor ran, and in the last round takes a slot it never
// returns. Lookups stay right and later writers (which wait for readers)
// and fence switches (which write each registered thread's fast pointer)
// still work.
namespace {
pthread_key_t reading_key;
LiveKeyFilter* key_filter = nullptr;
std::atomic<int> key_reads{0};
void ReadFromKeyDestructor(void* value) {
  if (!key_filter->MayContain(KeyHash(7))) ADD_FAILURE() << "false negative";
  key_reads.fetch_add(1);
  pthread_setspecific(reading_key, value);  // once more, next round
}
}  // namespace

TEST(ReaderGate, ReadsFromPthreadKeyDestructorsInEveryRound) {
#if defined(__SANITIZE_THREAD__)
  // TSan finishes a thread from its own key destructor in the last round;
  // instrumented code that runs after it in that round (this test's reads)
  // crashes inside TSan's runtime. Release and ASan builds run it.
  GTEST_SKIP() << "reads after TSan's thread finish";
#endif
  LiveKeyFilter filter(SmallOptions(), 1000);
  ASSERT_TRUE(filter.Insert(KeyHash(7)));
  key_filter = &filter;
  ASSERT_EQ(pthread_key_create(&reading_key, &ReadFromKeyDestructor), 0);
  const uint32_t before = SlotIndexOfANewThread();
  for (int i = 0; i < 20; ++i) {
    std::thread([&filter] {
      EXPECT_TRUE(filter.MayContain(KeyHash(7)));
      pthread_setspecific(reading_key, &filter);
    }).join();
  }
  EXPECT_GE(key_reads.load(), 20 * 2);
  // At most one slot per thread is kept (the last round's).
  EXPECT_LE(SlotIndexOfANewThread(), before + 21);
  internal::SetReaderFencesForTesting(false);
  internal::SetReaderFencesForTesting(true);
  auto builder = filter.BeginRebuild(2000);
  ASSERT_TRUE(builder->Add(KeyHash(7)));
  ASSERT_TRUE(filter.Replace(std::move(builder)));
  EXPECT_TRUE(filter.MayContain(KeyHash(7)));
  pthread_key_delete(reading_key);
  key_filter = nullptr;
}

TEST(LiveKeyFilter, ValidatesOptions) {
  EXPECT_EQ(ValidateLiveKeyFilterOptions(LiveKeyFilterOptions()), "");
  for (int f = 8; f <= 16; ++f) {
    LiveKeyFilterOptions o;
    o.fingerprint_bits = f;
    EXPECT_EQ(ValidateLiveKeyFilterOptions(o), "") << f;
  }
  auto bad = [](auto change) {
    LiveKeyFilterOptions o;
    change(o);
    return ValidateLiveKeyFilterOptions(o);
  };
  EXPECT_NE(bad([](auto& o) { o.fingerprint_bits = 7; }), "");
  EXPECT_NE(bad([](auto& o) { o.fingerprint_bits = 17; }), "");
  EXPECT_NE(bad([](auto& o) { o.max_load = 0.99; }), "");
  EXPECT_NE(bad([](auto& o) {
              o.fingerprint_bits = 16;  // b = 4: lower limit
              o.max_load = 0.96;
            }),
            "");
  EXPECT_NE(bad([](auto& o) { o.max_load = 0.975; }), "");
  EXPECT_NE(bad([](auto& o) { o.target_load = 0.96; }), "");
  EXPECT_NE(bad([](auto& o) {
              o.target_load = 0.9;
              o.max_load = 0.9;
            }),
            "");
  EXPECT_NE(bad([](auto& o) { o.rescan_below_bits = -1; }), "");
  EXPECT_NE(bad([](auto& o) { o.rescan_below_bits = 17; }), "");
  EXPECT_NE(bad([](auto& o) { o.initial_capacity = uint64_t{1} << 40; }), "");
}

// With default options a table built from keys stores at most 14 bits per
// key at its target load, and its expected FPR is at most 0.25%.
TEST(LiveKeyFilter, DefaultTableIsSmallAndAccurate) {
  const uint64_t n = 100000;
  LiveKeyFilter filter(LiveKeyFilterOptions(), n);
  for (KeyHash h : RandomHashes(n, 1)) ASSERT_TRUE(filter.Insert(h));
  const LiveKeyFilterStats s = filter.GetStats();
  EXPECT_EQ(s.splits, 0u);
  EXPECT_EQ(s.fingerprint_bits, 12);
  EXPECT_EQ(s.width, 12);
  EXPECT_LE(s.bits_per_key, 14.0);
  EXPECT_LE(s.expected_fpr, 0.0025);
}

// Random inserts (with duplicates), erases of present keys and lookups
// against an exact multiset model, through several splits, at every width:
// no false negative, exact count, every key found right after every split.
TEST_P(PerWidth, MatchesAMultisetModelAcrossSplits) {
  const int f = GetParam();
  for (bool background : {false, true}) {
    SCOPED_TRACE(background ? "background splits" : "synchronous splits");
    // Small tables, so that ~10^4 keys take several splits; f < 10 has
    // fewer levels (f - 4), so it starts larger.
    LiveKeyFilterOptions o = SmallOptions(f, background);
    o.initial_capacity = f < 10 ? 1000 : 300;
    LiveKeyFilter filter(o, o.initial_capacity);
    std::unordered_map<uint64_t, int> model;  // hash -> copies
    std::vector<uint64_t> keys;               // distinct hashes ever added
    uint64_t total = 0, splits_checked = 0;
    std::mt19937_64 rng(f * 7 + background);
    auto check_all = [&] {
      for (const auto& [h, copies] : model) {
        if (copies > 0) {
          ASSERT_TRUE(filter.MayContain(KeyHash(h))) << h;
        }
      }
      ASSERT_EQ(filter.size(), total);
    };
    for (int op = 0; op < 30000; ++op) {
      const uint64_t r = rng() % 100;
      if (r < 60 || keys.empty()) {
        // A new key, or (1 in 10) another copy of a known one.
        const uint64_t h =
            (r % 10 == 0 && !keys.empty()) ? keys[rng() % keys.size()] : rng();
        if (model[h] >= 2) continue;  // keep duplicates well below 2b
        ASSERT_TRUE(filter.Insert(KeyHash(h)));
        if (model[h]++ == 0) keys.push_back(h);
        ++total;
      } else if (r < 85) {
        const uint64_t h = keys[rng() % keys.size()];
        if (model[h] == 0) continue;
        ASSERT_TRUE(filter.Erase(KeyHash(h)));
        --model[h];
        --total;
      } else {
        const uint64_t h = keys[rng() % keys.size()];
        if (model[h] > 0) {
          ASSERT_TRUE(filter.MayContain(KeyHash(h)));
        }
      }
      const uint64_t splits = filter.GetStats().splits;
      if (splits != splits_checked) {
        filter.WaitForSplit();
        ASSERT_NO_FATAL_FAILURE(check_all());
        splits_checked = filter.GetStats().splits;
      }
    }
    filter.WaitForSplit();
    ASSERT_NO_FATAL_FAILURE(check_all());
    const LiveKeyFilterStats s = filter.GetStats();
    EXPECT_GE(s.splits, 3u) << "level " << s.level;
    EXPECT_EQ(s.level, int(s.splits));
    EXPECT_EQ(s.width, f - s.level);
    EXPECT_EQ(s.num_keys, total);
    EXPECT_EQ(s.insert_failures, 0u);
    EXPECT_EQ(s.erase_misses, 0u);
    EXPECT_LE(s.load_factor, LiveMaxLoadLimit(Slots(f)) + 0.01);
  }
}

// The measured false positive rate at level d and load a matches
// 1 - (1 - 1/V)^(2 b a) (V = 2^(f-d); 2^f - 1 at level 0): each split
// doubles it at equal load.
TEST_P(PerWidth, FalsePositiveRatePerLevel) {
#ifdef ROCKSDB_CUCKOO_LIVE_TABLE_RACE_WINDOW
  GTEST_SKIP() << "statistics, not concurrency (every lookup takes ~1 us "
                  "in the race-window build)";
#endif
  const int f = GetParam();
  const int b = Slots(f);
  std::vector<int> levels = {0, 1, 2};
  if (MaxLevel(f) > 2) levels.push_back(std::min(4, MaxLevel(f)));
  for (int d : levels) {
    // A table at level d grown from a small one by splits, filled to about
    // 90% of its capacity.
    const uint64_t c = 4000u >> d;
    std::unique_ptr<LiveTable> table =
        std::make_unique<LiveTable>(LiveLayout(f, c, 0, 11));
    std::mt19937_64 rng(f * 31 + d);
    const uint64_t target = uint64_t(0.9 * 4000 * b);
    uint64_t n = 0;
    for (int level = 0; level <= d; ++level) {
      if (level > 0) {
        table = table->SplitCopy();
        ASSERT_EQ(table->size(), n);
      }
      const uint64_t fill = level == d ? target : (target >> (d - level));
      for (; n < fill; ++n) ASSERT_TRUE(table->Insert(rng()));
    }
    ASSERT_EQ(table->layout().level(), d);
    const double load = table->load_factor();
    const double values = std::ldexp(1.0, f - d) - (d == 0 ? 1 : 0);
    const double expected = 1.0 - std::pow(1.0 - 1.0 / values, 2.0 * b * load);
    // Enough queries for ~500 expected hits (at least 10^5).
    const uint64_t queries =
        std::max<uint64_t>(100000, uint64_t(500 / expected));
    uint64_t hits = 0, retries = 0;
    for (uint64_t q = 0; q < queries; ++q)
      hits += table->Contains(rng(), &retries);
    const double mean = expected * double(queries);
    EXPECT_NEAR(double(hits), mean, 5 * std::sqrt(mean) + 3)
        << "f " << f << " level " << d << " load " << load;
  }
}

// Splits keep every entry: the split table holds exactly the entries of the
// source, each where the next level places it.
TEST_P(PerWidth, SplitConservesEntriesAndFindsEveryKey) {
  const int f = GetParam();
  LiveKeyFilter filter(SmallOptions(f, /*background=*/false), 200);
  std::vector<KeyHash> in;
  std::mt19937_64 rng(f);
  uint64_t splits = 0;
  while (splits < 4) {
    const KeyHash h(rng());
    ASSERT_TRUE(filter.Insert(h));
    in.push_back(h);
    const LiveKeyFilterStats s = filter.GetStats();
    if (s.splits != splits) {
      splits = s.splits;
      ASSERT_EQ(s.num_keys, in.size());
      for (KeyHash k : in) ASSERT_TRUE(filter.MayContain(k));
    }
  }
}

TEST(LiveKeyFilter, RescanWantedWhenSplitsMadeTheWidthNarrow) {
  LiveKeyFilterOptions o = SmallOptions(12, /*background=*/false);
  o.rescan_below_bits = 10;
  LiveKeyFilter filter(o, 200);
  std::mt19937_64 rng(3);
  while (filter.GetStats().splits < 2) {
    ASSERT_TRUE(filter.Insert(KeyHash(rng())));
    EXPECT_FALSE(filter.RescanWanted());
  }
  EXPECT_EQ(filter.GetStats().width, 10);
  while (filter.GetStats().splits < 3)
    ASSERT_TRUE(filter.Insert(KeyHash(rng())));
  EXPECT_EQ(filter.GetStats().width, 9);
  EXPECT_TRUE(filter.RescanWanted());
  EXPECT_TRUE(filter.GetStats().rescan_wanted);
  // A rebuild from the keys restores the width and clears the request.
  const uint64_t keys = filter.size();
  auto builder = filter.BeginRebuild(filter.RescanCapacity());
  EXPECT_GE(filter.RescanCapacity(), keys + keys / 8);
  std::mt19937_64 again(3);
  for (uint64_t i = 0; i < keys; ++i)
    ASSERT_TRUE(builder->Add(KeyHash(again())));
  ASSERT_TRUE(filter.Replace(std::move(builder)));
  EXPECT_FALSE(filter.RescanWanted());
  EXPECT_EQ(filter.GetStats().width, 12);
}

// At the last level the table cannot split: a full table refuses the insert
// (unchanged) and asks for a rebuild.
TEST(LiveKeyFilter, LastLevelAsksForARebuild) {
  LiveKeyFilterOptions o = SmallOptions(8, /*background=*/false);
  o.rescan_below_bits = 0;
  LiveKeyFilter filter(o, 10);
  std::mt19937_64 rng(5);
  uint64_t stored = 0;
  for (;;) {
    if (!filter.Insert(KeyHash(rng()))) break;
    ++stored;
    ASSERT_LT(stored, 1000000u);
  }
  const LiveKeyFilterStats s = filter.GetStats();
  EXPECT_EQ(s.level, MaxLevel(8));
  EXPECT_EQ(s.splits, uint64_t(MaxLevel(8)));
  EXPECT_EQ(s.num_keys, stored);
  EXPECT_EQ(s.insert_failures, 1u);
  EXPECT_TRUE(filter.RescanWanted());
}

// A key inserted more often than its two buckets hold fails without
// growing the table (no split helps duplicates).
TEST(LiveKeyFilter, DuplicatesBeyondTwoBucketsFailWithoutSplitting) {
  LiveKeyFilter filter(SmallOptions(12, /*background=*/false), 1000);
  const KeyHash h(0xfeedfacecafebeefULL);
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(filter.Insert(h));
  EXPECT_FALSE(filter.Insert(h));
  const LiveKeyFilterStats s = filter.GetStats();
  EXPECT_EQ(s.splits, 0u);
  EXPECT_EQ(s.insert_failures, 1u);
  EXPECT_EQ(s.num_keys, 10u);
}

// A rebuild captures the set at BeginRebuild; writes after that go to the
// delta log and are replayed by Replace.
TEST(LiveKeyFilter, RebuildReplaysWritesMadeDuringTheScan) {
  LiveKeyFilter filter(SmallOptions(), 1000);
  const auto hashes = RandomHashes(3000, 8);
  std::set<uint64_t> live;
  for (size_t i = 0; i < 900; ++i) {
    ASSERT_TRUE(filter.Insert(hashes[i]));
    live.insert(hashes[i].value);
  }
  auto builder = filter.BeginRebuild(filter.RescanCapacity());
  EXPECT_TRUE(filter.rebuilding());
  const std::set<uint64_t> source = live;  // what a DB iterator would see
  // Concurrent writes: erase some old, insert new (more than the final
  // replay under the mutex: the rest is replayed outside it).
  for (size_t i = 0; i < 300; ++i) {
    ASSERT_TRUE(filter.Erase(hashes[i]));
    live.erase(hashes[i].value);
  }
  for (size_t i = 900; i < 2900; ++i) {
    ASSERT_TRUE(filter.Insert(hashes[i]));
    live.insert(hashes[i].value);
  }
  for (uint64_t h : source) ASSERT_TRUE(builder->Add(KeyHash(h)));
  ASSERT_TRUE(filter.Replace(std::move(builder)));
  EXPECT_FALSE(filter.rebuilding());
  EXPECT_EQ(filter.size(), live.size());
  for (uint64_t h : live) ASSERT_TRUE(filter.MayContain(KeyHash(h)));
  const LiveKeyFilterStats stats = filter.GetStats();
  EXPECT_EQ(stats.rebuilds, 1u);
  // After the rebuild, writes are no longer logged.
  ASSERT_TRUE(filter.Insert(hashes[2999]));
  EXPECT_TRUE(filter.MayContain(hashes[2999]));
}

// A builder that overflows splits instead of failing.
TEST(LiveKeyFilter, BuilderSplitsWhenItOverflows) {
  LiveKeyFilter filter(SmallOptions(), 1000);
  auto builder = filter.BeginRebuild(10);
  const auto hashes = RandomHashes(1000, 1);
  for (KeyHash h : hashes) ASSERT_TRUE(builder->Add(h));
  EXPECT_GE(builder->level(), 3);
  EXPECT_EQ(builder->size(), hashes.size());
  // The builder answers lookups as the filter will: every item held, few
  // false positives among other hashes.
  for (KeyHash h : hashes) ASSERT_TRUE(builder->MayContain(h));
  size_t false_positives = 0;
  for (KeyHash h : RandomHashes(1000, 2)) {
    false_positives += builder->MayContain(h) ? 1 : 0;
  }
  EXPECT_LT(false_positives, 200u);
  ASSERT_TRUE(filter.Replace(std::move(builder)));
  for (KeyHash h : hashes) ASSERT_TRUE(filter.MayContain(h));
  EXPECT_EQ(filter.GetStats().level,
            filter.GetStats().fingerprint_bits - filter.GetStats().width);
}

// A builder from an aborted or superseded rebuild is refused: its delta log
// is gone, so installing it would lose the writes made during its scan.
TEST(LiveKeyFilter, StaleBuildersAreRefused) {
  LiveKeyFilter filter(SmallOptions(), 1000);
  ASSERT_TRUE(filter.Insert(KeyHash(42)));
  auto first = filter.BeginRebuild(1000);
  auto second = filter.BeginRebuild(1000);
  EXPECT_FALSE(filter.Replace(std::move(first)));
  EXPECT_FALSE(filter.rebuilding());  // a failed Replace aborts the rebuild
  EXPECT_FALSE(filter.Replace(std::move(second)));
  auto third = filter.BeginRebuild(1000);
  filter.AbortRebuild();
  EXPECT_FALSE(filter.Replace(std::move(third)));
  EXPECT_TRUE(filter.MayContain(KeyHash(42)));
  EXPECT_EQ(filter.GetStats().rebuilds, 0u);
}

// Not ready: every key "may be present", writes only go to the rebuild's
// log, and only a successful Replace makes the filter ready.
TEST(LiveKeyFilter, NotReadyUntilARebuildIsInstalled) {
  LiveKeyFilter filter(SmallOptions(), 1000);
  EXPECT_FALSE(filter.MayContain("x"));
  filter.MarkNotReady();
  EXPECT_FALSE(filter.ready());
  EXPECT_TRUE(filter.GetStats().building);
  EXPECT_TRUE(filter.MayContain("x"));
  bool out[2] = {false, false};
  const KeyHash hs[2] = {KeyHash(1), KeyHash(2)};
  filter.MayContainBatch(hs, 2, out);
  EXPECT_TRUE(out[0] && out[1]);
  EXPECT_EQ(filter.Freeze(), nullptr);  // nothing trustworthy to checkpoint

  auto builder = filter.BeginRebuild(1000);
  ASSERT_TRUE(builder->Add(HashKey("scanned")));
  ASSERT_TRUE(filter.Insert(HashKey("written during the scan")));
  ASSERT_TRUE(filter.Insert(HashKey("erased during the scan")));
  ASSERT_TRUE(filter.Erase(HashKey("erased during the scan")));
  EXPECT_TRUE(filter.MayContain("x"));  // still building
  // MarkNotReady again (e.g. another ingestion) abandons this rebuild.
  auto stale = std::move(builder);
  filter.MarkNotReady();
  EXPECT_FALSE(filter.Replace(std::move(stale)));
  EXPECT_FALSE(filter.ready());

  builder = filter.BeginRebuild(1000);
  ASSERT_TRUE(builder->Add(HashKey("scanned")));
  ASSERT_TRUE(filter.Insert(HashKey("written during the scan")));
  ASSERT_TRUE(filter.Replace(std::move(builder)));
  EXPECT_TRUE(filter.ready());
  EXPECT_TRUE(filter.MayContain("scanned"));
  EXPECT_TRUE(filter.MayContain("written during the scan"));
  EXPECT_FALSE(filter.MayContain("x"));
  EXPECT_EQ(filter.size(), 2u);
}

// Readers keep answering correctly while tables are swapped under them.
TEST(LiveKeyFilter, ReadersSurviveTableSwaps) {
  for (bool membarrier : {true, false}) {
    SCOPED_TRACE(membarrier ? "membarrier" : "fenced readers");
    internal::SetReaderFencesForTesting(membarrier);
    LiveKeyFilter filter(SmallOptions(), 1000);
    const auto stable = RandomHashes(800, 31);
    for (KeyHash h : stable) ASSERT_TRUE(filter.Insert(h));
    std::atomic<bool> stop{false};
    std::atomic<uint64_t> misses{0};
    std::vector<std::thread> readers;
    for (int r = 0; r < 2; ++r) {
      readers.emplace_back([&, r] {
        std::mt19937_64 rng(r);
        std::vector<KeyHash> batch(16);
        std::unique_ptr<bool[]> out(new bool[16]);
        while (!stop.load(std::memory_order_relaxed)) {
          for (auto& h : batch) h = stable[rng() % stable.size()];
          filter.MayContainBatch(batch.data(), batch.size(), out.get());
          for (size_t k = 0; k < batch.size(); ++k) misses += !out[k];
          misses += !filter.MayContain(stable[rng() % stable.size()]);
        }
      });
    }
    for (int swap = 0; swap < 200; ++swap) {
      auto builder = filter.BeginRebuild(1000 + 37 * (swap % 10));
      for (KeyHash h : stable) ASSERT_TRUE(builder->Add(h));
      ASSERT_TRUE(filter.Replace(std::move(builder)));
    }
    stop = true;
    for (auto& t : readers) t.join();
    EXPECT_EQ(misses.load(), 0u);
    EXPECT_EQ(filter.GetStats().rebuilds, 200u);
  }
  internal::SetReaderFencesForTesting(true);
}

// Writers insert and erase while the table splits many times in the
// background; readers check keys that are present during their whole read.
// No reader may miss one, no insert may fail, and writers never wait for a
// split here (the table has room while it splits).
TEST(LiveKeyFilter, ReadersAndWritersDuringBackgroundSplits) {
  LiveKeyFilterOptions o = SmallOptions(12, /*background=*/true);
  o.rescan_below_bits = 0;
  LiveKeyFilter filter(o, 500);
  const auto keys = RandomHashes(120000, 77);
  // keys[0, stable) inserted up front and never erased; the writer appends
  // keys[stable, ...) and erases every other one of them.
  const size_t stable = 400;
  for (size_t i = 0; i < stable; ++i) ASSERT_TRUE(filter.Insert(keys[i]));
  std::atomic<size_t> published{stable};  // keys[0, published) inserted
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> misses{0}, reads{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < 2; ++r) {
    readers.emplace_back([&, r] {
      std::mt19937_64 rng(r + 100);
      uint64_t local = 0;
      while (!stop.load(std::memory_order_relaxed)) {
        const size_t n = published.load(std::memory_order_acquire);
        // Stable keys, and appended keys that are never erased (odd offsets).
        size_t i = rng() % n;
        if (i >= stable && ((i - stable) & 1) == 0) i = rng() % stable;
        misses += !filter.MayContain(keys[i]);
        if (++local == 64) {  // the count so far, for the waits below
          reads += local;
          local = 0;
        }
      }
      reads += local;
    });
  }
  // The readers run before the first write and until they read more than
  // the count checked below (a busy machine may start them late, or run
  // the writes before they got far; at most 10 s each).
  auto wait_for_reads = [&](uint64_t n) {
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (reads.load() < n && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::yield();
    }
  };
  wait_for_reads(2 * 64);
  for (size_t i = stable; i < keys.size(); ++i) {
    ASSERT_TRUE(filter.Insert(keys[i]));
    published.store(i + 1, std::memory_order_release);
    if (i >= stable + 2 && ((i - 2 - stable) & 1) == 0) {
      ASSERT_TRUE(filter.Erase(keys[i - 2]));
    }
  }
  filter.WaitForSplit();
  wait_for_reads(1001);
  stop = true;
  for (auto& t : readers) t.join();
  const LiveKeyFilterStats s = filter.GetStats();
  EXPECT_EQ(misses.load(), 0u);
  // Entries conserved through the splits: the writes made while a split
  // copied the table are neither lost nor doubled.
  const size_t erased = (keys.size() - stable - 2 + 1) / 2;
  EXPECT_EQ(s.num_keys, keys.size() - erased);
  EXPECT_EQ(s.erases, erased);
  EXPECT_GE(s.splits, 5u);
  EXPECT_EQ(s.insert_failures, 0u);
  EXPECT_GT(reads.load(), 1000u);
  for (size_t i = 0; i < keys.size(); ++i) {
    if (i < stable || ((i - stable) & 1) == 1 || i + 2 >= keys.size()) {
      ASSERT_TRUE(filter.MayContain(keys[i])) << i;
    }
  }
}

// Writes (inserts that relocate, erases) between the chunk copies of a
// split (deterministically, from the split's test hook) and concurrently
// from another thread: each is in the split table exactly once (the frozen
// image plus the replayed log), none lost, none doubled.
struct WritesDuringSplit {
  LiveKeyFilter* filter = nullptr;
  const std::vector<KeyHash>* keys = nullptr;
  size_t next = 0, erased = 0, hooked = 0;
  std::mutex mu;  // the hook and the writer thread share next/erased
  bool Write() {
    std::lock_guard<std::mutex> lock(mu);
    if (next >= keys->size()) return false;
    EXPECT_TRUE(filter->Insert((*keys)[next++]));
    EXPECT_TRUE(filter->Erase((*keys)[erased++]));
    return true;
  }
};
WritesDuringSplit* writes_during_split = nullptr;

TEST(LiveKeyFilter, WritesDuringASplitAreNeitherLostNorDoubled) {
  LiveKeyFilterOptions o = SmallOptions(12, /*background=*/true);
  LiveKeyFilter filter(o, 250000);
  const auto keys = RandomHashes(300000, 91);
  WritesDuringSplit w;
  w.filter = &filter;
  w.keys = &keys;
  writes_during_split = &w;
  internal::split_chunk_hook = [](uint64_t) {
    for (int k = 0; k < 5; ++k) writes_during_split->Write();
    ++writes_during_split->hooked;
  };
  // Until the split starts. On a fast machine the background split (the
  // hook's writes included) may also end before this thread looks again, so
  // a finished split ends the loop too.
  while (!filter.splitting() && filter.GetStats().splits == 0) {
    ASSERT_LT(w.next, keys.size());
    std::lock_guard<std::mutex> lock(w.mu);
    ASSERT_TRUE(filter.Insert(keys[w.next++]));
  }
  while (filter.splitting() && w.Write()) {
  }
  filter.WaitForSplit();
  internal::split_chunk_hook = nullptr;
  const LiveKeyFilterStats s = filter.GetStats();
  EXPECT_GE(w.hooked, 100u);  // chunks copied
  EXPECT_EQ(s.splits, 1u);
  EXPECT_EQ(s.insert_waits, 0u);
  EXPECT_EQ(s.num_keys, w.next - w.erased);
  for (size_t i = w.erased; i < w.next; ++i) {
    ASSERT_TRUE(filter.MayContain(keys[i])) << i;
  }
}

// A split abandoned in the middle (MarkNotReady from the split's hook, as an
// ingestion would): nothing is published, the filter stays not ready until
// a rebuild is installed, and a later split works.
LiveKeyFilter* abandon_filter = nullptr;
TEST(LiveKeyFilter, SplitAbandonedByMarkNotReady) {
  LiveKeyFilter filter(SmallOptions(12, /*background=*/true), 100000);
  abandon_filter = &filter;
  internal::split_chunk_hook = [](uint64_t chunk) {
    if (chunk == 3) abandon_filter->MarkNotReady();
  };
  const auto keys = RandomHashes(300000, 17);
  size_t n = 0;
  // Until the split starts; the background split may also have reached its
  // fourth chunk (not ready) before this thread sees splitting().
  while (!filter.splitting() && filter.ready()) {
    ASSERT_LT(n, keys.size());
    ASSERT_TRUE(filter.Insert(keys[n++]));
  }
  filter.WaitForSplit();
  internal::split_chunk_hook = nullptr;
  LiveKeyFilterStats s = filter.GetStats();
  EXPECT_EQ(s.splits, 0u);
  EXPECT_EQ(s.level, 0);
  EXPECT_TRUE(s.building);
  EXPECT_FALSE(s.split_in_progress);
  EXPECT_EQ(s.memory_bytes, filter.GetStats().memory_bytes);
  auto builder = filter.BeginRebuild(n);
  for (size_t i = 0; i < n; ++i) ASSERT_TRUE(builder->Add(keys[i]));
  ASSERT_TRUE(filter.Replace(std::move(builder)));
  while (filter.GetStats().splits == 0) ASSERT_TRUE(filter.Insert(keys[n++]));
  filter.WaitForSplit();
  for (size_t i = 0; i < n; ++i) ASSERT_TRUE(filter.MayContain(keys[i]));
  EXPECT_EQ(filter.size(), n);
}

// ------------------------------------------------------------ checkpoints

LiveKeyFilterStats StatsOf(const LiveKeyFilter& f) { return f.GetStats(); }

// The encoded image is the table at the freeze instant, although writers
// change it (inserts with relocations, erases) between the chunk copies:
// equal to the encoding taken with writers stopped.
TEST(LiveCheckpoint, ImageIsTheTableAtTheFreezeWhileWritersContinue) {
  LiveKeyFilter filter(SmallOptions(12, /*background=*/false), 40000);
  const auto keys = RandomHashes(80000, 5);
  for (size_t i = 0; i < 30000; ++i) ASSERT_TRUE(filter.Insert(keys[i]));
  const std::string reference = filter.EncodeSnapshot("id");
  ASSERT_FALSE(reference.empty());

  std::unique_ptr<LiveKeyFilter::Checkpoint> cp = filter.Freeze();
  ASSERT_NE(cp, nullptr);
  EXPECT_EQ(filter.Freeze(), nullptr);  // one checkpoint at a time
  EXPECT_EQ(cp->num_keys(), 30000u);
  // Between pieces (outside the filter mutex), write: the chunks not copied
  // yet must come from their pre-images.
  size_t next = 30000, erased = 0;
  uint64_t max_memory = 0;
  std::string image;
  ASSERT_TRUE(cp->Encode("id", [&](std::string_view piece) {
    image.append(piece.data(), piece.size());
    for (int k = 0; k < 300 && next < 37000; ++k) {
      EXPECT_TRUE(filter.Insert(keys[next++]));
      EXPECT_TRUE(filter.Erase(keys[erased++]));
    }
    max_memory = std::max(max_memory, StatsOf(filter).memory_bytes);
    return true;
  }));
  EXPECT_EQ(image.size(), cp->EncodedSize(2));
  EXPECT_FALSE(cp->Encode("id", [](std::string_view) { return true; }));
  EXPECT_GE(next, 33000u);  // writes between most pieces
  EXPECT_TRUE(image == reference) << "the image differs from the table at "
                                     "the freeze";
  // The pre-images were held meanwhile, and are freed with the checkpoint.
  cp.reset();
  EXPECT_GT(max_memory, StatsOf(filter).memory_bytes);
  // The live table did change.
  EXPECT_NE(filter.EncodeSnapshot("id"), reference);
}

// The same with a writer thread running flat out during the encoding (and
// readers), as a checkpoint runs in a database.
TEST(LiveCheckpoint, ImageIsTheTableAtTheFreezeWithAConcurrentWriter) {
  LiveKeyFilter filter(SmallOptions(12, /*background=*/false), 200000);
  const auto keys = RandomHashes(400000, 8);
  for (size_t i = 0; i < 150000; ++i) ASSERT_TRUE(filter.Insert(keys[i]));
  const std::string reference = filter.EncodeSnapshot("id");
  auto cp = filter.Freeze();
  ASSERT_NE(cp, nullptr);
  std::atomic<bool> done{false};
  std::atomic<size_t> writes{0};
  std::thread writer([&] {
    size_t next = 150000, erased = 0;
    while (!done.load(std::memory_order_relaxed) && next < keys.size()) {
      ASSERT_TRUE(filter.Insert(keys[next++]));
      ASSERT_TRUE(filter.Erase(keys[erased++]));
      writes.fetch_add(1, std::memory_order_relaxed);
    }
  });
  std::thread reader([&] {
    std::mt19937_64 rng(1);
    while (!done.load(std::memory_order_relaxed)) {
      filter.MayContain(keys[rng() % keys.size()]);
    }
  });
  std::string image;
  bool first_piece = true;
  ASSERT_TRUE(cp->Encode("id", [&](std::string_view piece) {
    image.append(piece.data(), piece.size());
    // The header comes first: before any chunk is encoded, wait until the
    // writer has written (on a busy machine its thread may otherwise start
    // only after the encoding; at most 10 s).
    if (first_piece) {
      first_piece = false;
      const auto deadline =
          std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (writes.load() < 1000 &&
             std::chrono::steady_clock::now() < deadline) {
        std::this_thread::yield();
      }
    }
    // Let the writer in between some pieces.
    if (image.size() % 3 == 0) std::this_thread::yield();
    return true;
  }));
  done = true;
  writer.join();
  reader.join();
  EXPECT_TRUE(image == reference);
  EXPECT_GE(writes.load(), 1000u);
}

// A checkpoint and background splits at the same time: the checkpoint shows
// the table it froze, although a split publishes a new one meanwhile.
TEST(LiveCheckpoint, SurvivesASplitOfItsTable) {
  LiveKeyFilter filter(SmallOptions(12, /*background=*/true), 1000);
  const auto keys = RandomHashes(20000, 6);
  size_t n = 0;
  while (n < 900) ASSERT_TRUE(filter.Insert(keys[n++]));
  filter.WaitForSplit();
  const std::string reference = filter.EncodeSnapshot("x");
  auto cp = filter.Freeze();
  ASSERT_NE(cp, nullptr);
  const uint64_t splits = StatsOf(filter).splits;
  while (StatsOf(filter).splits < splits + 2) {
    ASSERT_LT(n, keys.size());
    ASSERT_TRUE(filter.Insert(keys[n++]));
    filter.WaitForSplit();
  }
  std::string image;
  ASSERT_TRUE(cp->Encode("x", [&](std::string_view piece) {
    image.append(piece.data(), piece.size());
    return true;
  }));
  EXPECT_TRUE(image == reference);
  cp.reset();
  for (size_t i = 0; i < n; ++i) ASSERT_TRUE(filter.MayContain(keys[i]));
}

TEST(LiveCheckpoint, SinkCanStopTheEncoding) {
  LiveKeyFilter filter(SmallOptions(), 100000);
  for (KeyHash h : RandomHashes(1000, 2)) ASSERT_TRUE(filter.Insert(h));
  auto cp = filter.Freeze();
  int pieces = 0;
  EXPECT_FALSE(cp->Encode("", [&](std::string_view) { return ++pieces < 3; }));
  EXPECT_EQ(pieces, 3);
}

// ------------------------------------------------------------ snapshots

std::string Encode(LiveKeyFilter& filter, std::string_view id) {
  return filter.EncodeSnapshot(id);
}

TEST_P(PerWidth, SnapshotRoundTripAtSeveralLevels) {
  const int f = GetParam();
  LiveKeyFilterOptions o = SmallOptions(f, /*background=*/false);
  o.rescan_below_bits = 0;
  LiveKeyFilter filter(o, 500);
  const auto hashes = RandomHashes(4000, 17);
  for (KeyHash h : hashes) ASSERT_TRUE(filter.Insert(h));
  ASSERT_GE(filter.GetStats().level, 2);
  const std::string bytes = Encode(filter, "owner identity");
  std::string why, identity;
  auto builder = LiveKeyFilter::DecodeSnapshot(o, bytes, &identity, &why);
  ASSERT_NE(builder, nullptr) << why;
  EXPECT_EQ(identity, "owner identity");
  LiveKeyFilter loaded(o, 1);
  ASSERT_TRUE(loaded.Replace(std::move(builder)));
  const auto a = filter.GetStats();
  const auto b = loaded.GetStats();
  EXPECT_EQ(a.num_buckets, b.num_buckets);
  EXPECT_EQ(a.level, b.level);
  EXPECT_EQ(b.num_keys, hashes.size());
  for (KeyHash h : hashes) ASSERT_TRUE(loaded.MayContain(h));
  std::mt19937_64 rng(4);
  for (int q = 0; q < 20000; ++q) {
    const KeyHash h(rng());
    ASSERT_EQ(filter.MayContain(h), loaded.MayContain(h));
  }
  EXPECT_EQ(Encode(loaded, "owner identity"), bytes);
  // Another width in the options: not used.
  LiveKeyFilterOptions other = o;
  other.fingerprint_bits = f == 12 ? 13 : 12;
  EXPECT_EQ(LiveKeyFilter::DecodeSnapshot(other, bytes, &identity, &why),
            nullptr);
  EXPECT_NE(why.find("fingerprints"), std::string::npos) << why;
}

std::string Hex(const std::string& s) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char ch : s) {
    out += digits[ch >> 4];
    out += digits[ch & 15];
  }
  return out;
}

// Pins the exact bytes of a tiny snapshot (format version 2, see
// plugin/core/live/live_snapshot.h), so that the format cannot drift.
TEST(LiveSnapshot, GoldenBytes) {
  LiveKeyFilterOptions o;
  o.seed = 5;
  LiveKeyFilter filter(o, 1);  // c = 2 buckets
  // Top 12 bits 0x001 and 0xffe, low 32 bits in bucket 0 and 1.
  ASSERT_TRUE(filter.Insert(KeyHash(0x0010000000000000ULL)));
  ASSERT_TRUE(filter.Insert(KeyHash(0xffe0000080000000ULL)));
  const std::string bytes = Encode(filter, "ab");
  const std::string expected =
      "434b4f4f4c495645"  // magic "CKOOLIVE"
      "02000000"          // version 2
      "0c"                // f = 12
      "05"                // b = 5
      "04"                // T = 4
      "00"                // d = 0
      "05000000"          // seed 5
      "02000000"          // identity length 2
      "0200000000000000"  // c = 2
      "0200000000000000"  // m = 2
      "0200000000000000"  // 2 entries
      "6162"              // identity "ab"
      "fe0f000000000000"  // bucket 0: ~0x001 = 0xffe in slot 0
      "0100000000000000"  // bucket 1: ~0xffe = 0x001 in slot 0
      ;
  ASSERT_EQ(bytes.size(), 48u + 2 + 16 + 8);
  EXPECT_EQ(Hex(bytes.substr(0, bytes.size() - 8)), expected);
  char sum[8];
  const uint64_t h = XXH64(bytes.data(), bytes.size() - 8, 0);
  for (int i = 0; i < 8; ++i) sum[i] = static_cast<char>(h >> (8 * i));
  EXPECT_EQ(bytes.substr(bytes.size() - 8), std::string(sum, 8));
}

// Rewrites the checksum after a deliberate change, so that the structural
// checks behind it are what rejects the snapshot.
void Reseal(std::string* bytes) {
  uint64_t sum = XXH64(bytes->data(), bytes->size() - 8, 0);
  for (size_t i = bytes->size() - 8; i < bytes->size(); ++i, sum >>= 8) {
    (*bytes)[i] = static_cast<char>(sum & 0xff);
  }
}

TEST(LiveSnapshot, RejectsCorruptionTruncationAndStructuralLies) {
  const LiveKeyFilterOptions o = SmallOptions();
  LiveKeyFilter filter(o, 3000);
  for (KeyHash h : RandomHashes(2500, 5)) ASSERT_TRUE(filter.Insert(h));
  const std::string good = Encode(filter, "id");
  std::string why, identity;
  ASSERT_NE(LiveKeyFilter::DecodeSnapshot(o, good, &identity, &why), nullptr);
  auto rejects = [&](const std::string& bytes, const char* reason) {
    why.clear();
    EXPECT_EQ(LiveKeyFilter::DecodeSnapshot(o, bytes, &identity, &why),
              nullptr);
    EXPECT_NE(why.find(reason), std::string::npos) << why;
  };
  // Every single-byte flip at a spread of positions is caught.
  for (size_t pos = 0; pos < good.size(); pos += 97) {
    std::string bad = good;
    bad[pos] ^= 0x5a;
    EXPECT_EQ(LiveKeyFilter::DecodeSnapshot(o, bad, &identity, &why), nullptr)
        << "flip at " << pos;
  }
  // Truncated or extended.
  rejects(good.substr(0, 0), "too short");
  rejects(good.substr(0, 10), "too short");
  rejects(good.substr(0, 64), "checksum");
  rejects(good.substr(0, good.size() - 8), "checksum");
  rejects(good + "x", "checksum");
  // Valid checksums, lying fields.
  auto with = [&](size_t offset, uint8_t value) {
    std::string bad = good;
    bad[offset] = static_cast<char>(value);
    Reseal(&bad);
    return bad;
  };
  rejects(with(12, 7), "parameters");     // f
  rejects(with(13, 4), "parameters");     // b
  rejects(with(14, 5), "parameters");     // T
  rejects(with(15, 9), "level");          // d > f - T
  rejects(with(15, 1), "bucket counts");  // m != c * 2^d
  rejects(with(24, 3), "bucket counts");  // c odd
  rejects(with(20, 3), "size");           // identity length
  {
    std::string bad = good;  // one more entry than stored
    bad[40] = static_cast<char>(static_cast<uint8_t>(bad[40]) + 1);
    Reseal(&bad);
    rejects(bad, "entry count");
  }
  {
    std::string bad = good;  // a bit outside the slots (bits 60..63)
    const size_t word = 48 + 2;
    bad[word + 7] =
        static_cast<char>(static_cast<uint8_t>(bad[word + 7]) | 0x80);
    Reseal(&bad);
    rejects(bad, "invalid bucket");
  }
}

// A snapshot read piece by piece (pieces of any size, as a file or a
// network stream may deliver them) decodes exactly as one in memory: the
// same table, identity, or reason, for intact, damaged, truncated and
// extended images and for resealed lies.
TEST(LiveSnapshot, DecodedPieceByPieceAsInMemory) {
  const LiveKeyFilterOptions o = SmallOptions();
  LiveKeyFilter filter(o, 3000);
  for (KeyHash h : RandomHashes(2500, 5)) ASSERT_TRUE(filter.Insert(h));
  const std::string good = Encode(filter, "identity");
  std::vector<std::string> inputs = {good,
                                     good.substr(0, 0),
                                     good.substr(0, 7),
                                     good.substr(0, 55),
                                     good.substr(0, 64),
                                     good.substr(0, good.size() - 8),
                                     good + "x"};
  for (size_t pos = 0; pos < good.size(); pos += 211) {
    std::string bad = good;
    bad[pos] ^= 0x5a;
    inputs.push_back(bad);
  }
  for (size_t offset : {12, 13, 14, 15, 20, 24, 32, 40, 48 + 8 + 2 + 7}) {
    std::string bad = good;
    bad[offset] = static_cast<char>(static_cast<uint8_t>(bad[offset]) ^ 0x81);
    Reseal(&bad);
    inputs.push_back(bad);
  }
  std::mt19937_64 rng(7);
  for (const std::string& bytes : inputs) {
    std::string why, identity;
    const auto in_memory =
        LiveKeyFilter::DecodeSnapshot(o, bytes, &identity, &why);
    for (size_t max_piece : {1, 3, 8, 9, 64, 1000}) {
      SCOPED_TRACE("size " + std::to_string(bytes.size()) +
                   ", pieces <= " + std::to_string(max_piece));
      size_t at = 0;
      std::string why2, identity2;
      const auto streamed = LiveKeyFilter::DecodeSnapshot(
          o, bytes.size(),
          [&](char* dst, size_t n, size_t* got) {
            *got =
                std::min({n, bytes.size() - at, size_t{1} + rng() % max_piece});
            std::memcpy(dst, bytes.data() + at, *got);
            at += *got;
            return true;
          },
          &identity2, &why2);
      ASSERT_EQ(streamed == nullptr, in_memory == nullptr) << why << why2;
      EXPECT_EQ(why2, why);
      if (in_memory != nullptr) {
        EXPECT_EQ(identity2, identity);
        EXPECT_EQ(streamed->size(), in_memory->size());
      }
    }
  }
  // A stream of another length than announced: rejected.
  size_t at = 0;
  std::string why;
  EXPECT_EQ(LiveKeyFilter::DecodeSnapshot(
                o, good.size() + 8,
                [&](char* dst, size_t n, size_t* got) {
                  *got = std::min(n, good.size() - at);
                  std::memcpy(dst, good.data() + at, *got);
                  at += *got;
                  return true;
                },
                nullptr, &why),
            nullptr);
  EXPECT_FALSE(why.empty());
  // A read error stops the decode.
  EXPECT_EQ(LiveKeyFilter::DecodeSnapshot(
                o, good.size(), [](char*, size_t, size_t*) { return false; },
                nullptr, &why),
            nullptr);
  EXPECT_EQ(why, "read error");
}

// Version 1 (16-bit fingerprints, 4 per bucket) is rejected with a reason.
TEST(LiveSnapshot, RejectsVersionOne) {
  std::string v1(56 + 16 + 8, '\0');
  std::memcpy(&v1[0], "CKOOLIVE", 8);
  v1[8] = 1;    // version
  v1[12] = 16;  // f
  v1[13] = 4;   // b
  v1[32] = 2;   // buckets
  Reseal(&v1);
  std::string why, identity;
  EXPECT_EQ(LiveKeyFilter::DecodeSnapshot(SmallOptions(), v1, &identity, &why),
            nullptr);
  EXPECT_NE(why.find("version 1"), std::string::npos) << why;
}

}  // namespace
}  // namespace cuckoo
