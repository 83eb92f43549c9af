// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

#include "cuckoo/live_key_filter.h"

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <mutex>
#include <new>
#include <thread>
#include <utility>
#include <vector>

#include "live/frozen_view.h"
#include "live/live_layout.h"
#include "live/live_snapshot.h"
#include "live/live_table.h"
#include "live/reader_gate.h"
#include "live/test_hooks.h"
#include "util/relaxed_counters.h"

namespace cuckoo {

using internal::FrozenView;
using internal::LiveLayout;
using internal::LiveTable;

namespace {

// Load factors per slots per bucket b. The load of the first failed insert
// of a fresh table (breadth-first search, 4 stable tag bits; live_bench
// --bench=fill, 2^14 and 2^20 buckets, 8 seeds each) was never below
// b=4: 0.966, b=5: 0.9845, b=6: 0.9906, b=7: 0.9940, b=8: 0.9959.
// Tables split at max_load, 3-4% below that, so that the inserts made while
// a split runs still find room; tables built from keys start at target_load,
// 1.5-2% below max_load, so that a set that stays the same size (churn)
// does not split. b = 5 (f = 11, 12): 64 / (5 * 0.93) = 13.8 bits per key.
struct Loads {
  double target;
  double max;
  double limit;  // largest max_load accepted
};
Loads LoadsFor(int slots) {
  switch (slots) {
    case 4:
      return {0.91, 0.93, 0.95};
    case 5:
      return {0.93, 0.95, 0.97};
    case 6:
      return {0.94, 0.96, 0.975};
    case 7:
      return {0.95, 0.965, 0.98};
    default:
      return {0.955, 0.97, 0.985};
  }
}

bool ValidBits(int f) {
  return f >= internal::kLiveMinFingerprintBits &&
         f <= internal::kLiveMaxFingerprintBits;
}

LiveKeyFilterOptions Resolve(LiveKeyFilterOptions o) {
  const int b = internal::LiveSlotsPerBucket(o.fingerprint_bits);
  if (o.target_load == 0) o.target_load = DefaultLiveTargetLoad(b);
  if (o.max_load == 0) o.max_load = DefaultLiveMaxLoad(b);
  return o;
}

// Delta-log operations replayed under the mutex at the end of a split or a
// rebuild; longer logs are replayed outside it in rounds.
constexpr size_t kFinalReplayOps = 1024;

}  // namespace

double DefaultLiveTargetLoad(int slots_per_bucket) {
  return LoadsFor(slots_per_bucket).target;
}
double DefaultLiveMaxLoad(int slots_per_bucket) {
  return LoadsFor(slots_per_bucket).max;
}
double LiveMaxLoadLimit(int slots_per_bucket) {
  return LoadsFor(slots_per_bucket).limit;
}

std::string ValidateLiveKeyFilterOptions(const LiveKeyFilterOptions& options) {
  if (!ValidBits(options.fingerprint_bits)) {
    return "fingerprint_bits must be in [8, 16]";
  }
  const LiveKeyFilterOptions o = Resolve(options);
  const int b = internal::LiveSlotsPerBucket(o.fingerprint_bits);
  const double limit = LiveMaxLoadLimit(b);
  if (!(o.max_load > 0.0 && o.max_load <= limit)) {
    return "max_load must be in (0, " + std::to_string(limit) + "] for " +
           std::to_string(b) + " slots per bucket";
  }
  if (!(o.target_load > 0.0 && o.target_load < o.max_load)) {
    return "target_load must be in (0, max_load)";
  }
  if (o.rescan_below_bits < 0 || o.rescan_below_bits > 16) {
    return "rescan_below_bits must be in [0, 16]";
  }
  if (o.initial_capacity > (uint64_t{1} << 34)) {
    return "initial_capacity above 2^34 keys";
  }
  return "";
}

namespace internal {

// Reader statistics: detail::LiveReaderCounters, one stripe per thread
// (ReaderSlot::counters_offset). A lookup bumps one counter, answers[its
// answer] (lookups = the sum).
using ReaderCounters = detail::LiveReaderCounters;
constexpr uint32_t kCounterStripes = detail::kLiveCounterStripes;

// The table a published word points to (readiness ignored).
inline LiveTable* TableOf(uintptr_t published) {
  return static_cast<LiveTable*>(
      reinterpret_cast<detail::LiveProbeTable*>(published & ~uintptr_t{1}));
}
// The word publishing `table` (ready).
inline uintptr_t PublishedWord(LiveTable* table) {
  return reinterpret_cast<uintptr_t>(
      static_cast<detail::LiveProbeTable*>(table));
}

inline void Bump(std::atomic<uint64_t>* counter, uint64_t n) {
  counter->store(counter->load(std::memory_order_relaxed) + n,
                 std::memory_order_relaxed);
}

// Writes made since a given instant, replayed into a table that was
// captured at that instant (a split's frozen image, a rebuild's scan).
class DeltaLog {
 public:
  struct Op {
    uint64_t hash;
    bool insert;
  };
  bool recording() const { return recording_; }
  void Start() {
    ops_.clear();
    recording_ = true;
    Account();
  }
  void Stop() {
    recording_ = false;
    std::vector<Op>().swap(ops_);
    Account();
  }
  void Add(uint64_t hash, bool insert) {
    if (!recording_) return;
    ops_.push_back(Op{hash, insert});
    Account();
  }
  // Moves the operations logged so far out (the log keeps recording).
  void Take(std::vector<Op>* out) {
    out->clear();
    out->swap(ops_);
    Account();
  }
  uint64_t bytes() const { return bytes_.load(std::memory_order_relaxed); }

 private:
  void Account() {
    bytes_.store(ops_.capacity() * sizeof(Op), std::memory_order_relaxed);
  }
  bool recording_ = false;
  std::vector<Op> ops_;
  std::atomic<uint64_t> bytes_{0};
};

// The filter's writer-side state; everything here is guarded by `mu`
// except the atomics, which GetStats reads without it.
struct LiveFilterState {
  std::mutex mu;
  // Signalled when a split ends (published, failed or abandoned) and when
  // a table is published.
  std::condition_variable changed;
  std::shared_ptr<LiveTable> current;  // the table readers see (table_)
  // Incremented by every publication (split, Replace) and by MarkNotReady;
  // a split abandons its work when it changed.
  uint64_t generation = 0;
  DeltaLog split_log;
  DeltaLog rebuild_log;
  // Incremented by BeginRebuild, AbortRebuild and MarkNotReady: a builder
  // from an earlier BeginRebuild is refused by Replace.
  uint64_t rebuild_epoch = 0;
  bool split_running = false;  // requested or running
  bool split_requested = false;
  bool stop = false;
  std::thread worker;  // background splits, started on the first one
  std::condition_variable worker_wake;
  // After a failed split, no new one before the table holds this many keys.
  uint64_t split_retry_keys = 0;
  // The current table needed a split but is at its last level.
  bool full_at_last_level = false;
  bool checkpoint_alive = false;

  std::atomic<bool> rescan_wanted{false};
  // Memory outside the current table: a split's new table, a rebuild's
  // table (as allocated by BeginRebuild), pre-images.
  std::atomic<uint64_t> pending_table_bytes{0};
  std::atomic<uint64_t> rebuild_table_bytes{0};
  std::atomic<uint64_t> preimage_bytes{0};

  // Writer counters (relaxed; GetStats copies them into the stats).
  RelaxedCounters<
      LiveKeyFilterStats, &LiveKeyFilterStats::inserts,
      &LiveKeyFilterStats::erases, &LiveKeyFilterStats::erase_misses,
      &LiveKeyFilterStats::insert_failures, &LiveKeyFilterStats::splits,
      &LiveKeyFilterStats::split_micros, &LiveKeyFilterStats::insert_waits,
      &LiveKeyFilterStats::rebuilds>
      counters;
  // Relocations of the tables retired so far (stats.relocations adds the
  // current table's), and the duration of the last split (a value, not a
  // count).
  std::atomic<uint64_t> retired_relocations{0};
  std::atomic<uint64_t> last_split_micros{0};
  std::atomic<bool> rebuilding{false};
  std::atomic<bool> splitting{false};
};

}  // namespace internal

using internal::DeltaLog;
using internal::LiveFilterState;
using internal::ReaderCounters;
using internal::ReadSection;

// ------------------------------------------------------------------ Builder

LiveKeyFilter::Builder::Builder(uint64_t capacity_keys,
                                std::unique_ptr<LiveTable> table)
    : capacity_keys_(capacity_keys), table_(std::move(table)) {}

LiveKeyFilter::Builder::~Builder() = default;

bool LiveKeyFilter::Builder::Add(KeyHash hash) {
  if (failed_) return false;
  if (table_->Insert(hash.value)) return true;
  // Full: one split (twice the buckets, one fingerprint bit less), unless
  // the item's buckets hold nothing but its own copies (no split helps).
  if (!table_->layout().can_split() || table_->OnlyCopiesOf(hash.value)) {
    failed_ = true;
    return false;
  }
  try {
    table_ = table_->SplitCopy();
  } catch (const std::bad_alloc&) {
    failed_ = true;
    return false;
  }
  if (!table_->Insert(hash.value)) failed_ = true;
  return !failed_;
}

bool LiveKeyFilter::Builder::Erase(KeyHash hash) {
  return !failed_ && table_->Erase(hash.value);
}

bool LiveKeyFilter::Builder::MayContain(KeyHash hash) const {
  uint64_t retries = 0;  // no concurrent writer: none
  return !failed_ && table_->Contains(hash.value, &retries);
}

uint64_t LiveKeyFilter::Builder::size() const { return table_->size(); }

int LiveKeyFilter::Builder::level() const { return table_->layout().level(); }

uint64_t LiveKeyFilter::Builder::memory_bytes() const {
  return table_->memory_bytes();
}

// ------------------------------------------------------------ LiveKeyFilter

LiveKeyFilter::LiveKeyFilter(const LiveKeyFilterOptions& options,
                             uint64_t capacity_keys)
    : options_(Resolve(options)),
      counters_(new ReaderCounters[internal::kCounterStripes]),
      state_(new LiveFilterState) {
  const int f = options_.fingerprint_bits;
  state_->current = std::make_shared<LiveTable>(LiveLayout(
      f, LiveTable::BaseBucketsFor(capacity_keys, f, options_.target_load), 0,
      options_.seed));
  static_assert(alignof(LiveTable) > kNotReady,
                "the not-ready bit lives in the table address");
  published_.store(internal::PublishedWord(state_->current.get()),
                   std::memory_order_release);
}

LiveKeyFilter::~LiveKeyFilter() {
  LiveFilterState& st = *state_;
  {
    std::lock_guard<std::mutex> lock(st.mu);
    st.stop = true;
    ++st.generation;
  }
  st.worker_wake.notify_all();
  st.changed.notify_all();
  if (st.worker.joinable()) st.worker.join();
}

// ---------------------------------------------------------------- readers

bool LiveKeyFilter::MayContainBatch(const KeyHash* hashes, size_t n,
                                    bool* out) const {
  ReadSection section;
  const uintptr_t published = published_.load(std::memory_order_acquire);
  if ((published & kNotReady) != 0) {
    for (size_t k = 0; k < n; ++k) out[k] = true;
    return false;
  }
  ReaderCounters& c = *detail::LiveCountersOf(counters_.get(), section.slot());
  internal::TableOf(published)->ContainsBatch(hashes, n, out, &c.retries);
  uint64_t absent = 0;
  for (size_t k = 0; k < n; ++k) absent += !out[k];
  internal::Bump(&c.answers[0], absent);
  internal::Bump(&c.answers[1], n - absent);
  return true;
}

uint64_t LiveKeyFilter::size() const {
  ReadSection section;
  return internal::TableOf(published_.load(std::memory_order_acquire))->size();
}

bool LiveKeyFilter::RescanWanted() const {
  return state_->rescan_wanted.load(std::memory_order_relaxed);
}

uint64_t LiveKeyFilter::RescanCapacity() const {
  const uint64_t keys = size();
  return std::max<uint64_t>(options_.initial_capacity, keys + keys / 8);
}

uint64_t LiveKeyFilter::max_capacity() const {
  return static_cast<uint64_t>(
      double(internal::kLiveMaxBuckets - 2) *
      internal::LiveSlotsPerBucket(options_.fingerprint_bits) *
      options_.target_load);
}

bool LiveKeyFilter::rebuilding() const {
  return state_->rebuilding.load(std::memory_order_relaxed);
}

LiveKeyFilterStats LiveKeyFilter::GetStats() const {
  const LiveFilterState& st = *state_;
  LiveKeyFilterStats s;
  {
    ReadSection section;
    const LiveTable* table =
        internal::TableOf(published_.load(std::memory_order_acquire));
    const LiveLayout& layout = table->layout();
    s.num_keys = table->size();
    s.num_buckets = table->num_buckets();
    s.capacity = table->capacity();
    s.table_bytes = table->table_bytes();
    s.memory_bytes = table->memory_bytes();
    s.relocations = table->relocations();
    s.fingerprint_bits = layout.fingerprint_bits();
    s.width = layout.width();
    s.level = layout.level();
  }
  s.memory_bytes += sizeof(*this) + sizeof(LiveFilterState) +
                    internal::kCounterStripes * sizeof(ReaderCounters) +
                    st.pending_table_bytes.load(std::memory_order_relaxed) +
                    st.rebuild_table_bytes.load(std::memory_order_relaxed) +
                    st.preimage_bytes.load(std::memory_order_relaxed) +
                    st.split_log.bytes() + st.rebuild_log.bytes();
  s.load_factor =
      s.capacity == 0 ? 0.0 : double(s.num_keys) / double(s.capacity);
  s.bits_per_key =
      s.num_keys == 0 ? 0.0 : double(s.table_bytes) * 8 / double(s.num_keys);
  const double values = std::ldexp(1.0, s.width) - (s.level == 0 ? 1.0 : 0.0);
  const int b = internal::LiveSlotsPerBucket(s.fingerprint_bits);
  s.expected_fpr = 1.0 - std::pow(1.0 - 1.0 / values, 2.0 * b * s.load_factor);
  st.counters.CopyTo(&s);
  s.relocations += st.retired_relocations.load(std::memory_order_relaxed);
  s.last_split_micros = st.last_split_micros.load(std::memory_order_relaxed);
  for (uint32_t k = 0; k < internal::kCounterStripes; ++k) {
    const uint64_t absent =
        counters_[k].answers[0].load(std::memory_order_relaxed);
    s.lookups +=
        absent + counters_[k].answers[1].load(std::memory_order_relaxed);
    s.absent += absent;
    s.read_retries += counters_[k].retries.load(std::memory_order_relaxed);
  }
  s.split_in_progress = splitting();
  s.rebuild_in_progress = rebuilding();
  s.building = !ready();
  s.rescan_wanted = RescanWanted();
  return s;
}

// ---------------------------------------------------------------- writers

namespace {

// Replays logged operations into a table nobody else writes. False if an
// insert found no room.
template <typename InsertFn, typename EraseFn>
bool Replay(const std::vector<DeltaLog::Op>& ops, InsertFn&& insert,
            EraseFn&& erase) {
  for (const DeltaLog::Op& op : ops) {
    if (op.insert) {
      if (!insert(op.hash)) return false;
    } else {
      // Every logged erase removed a present fingerprint, which the
      // captured table (plus the earlier logged inserts) also holds.
      erase(op.hash);
    }
  }
  return true;
}

}  // namespace

void LiveKeyFilter::UpdateRescanWantedLocked() {
  LiveFilterState& st = *state_;
  const LiveLayout& layout = st.current->layout();
  const bool narrow =
      layout.level() > 0 && layout.width() < options_.rescan_below_bits;
  st.rescan_wanted.store(ready() && (narrow || st.full_at_last_level),
                         std::memory_order_relaxed);
}

bool LiveKeyFilter::RequestSplitLocked(std::unique_lock<std::mutex>& lock) {
  LiveFilterState& st = *state_;
  if (st.split_running) return true;
  const LiveTable& table = *st.current;
  if (!table.layout().can_split()) {
    st.full_at_last_level = true;
    UpdateRescanWantedLocked();
    return false;
  }
  if (!ready() || st.stop || table.size() < st.split_retry_keys) {
    return false;
  }
  st.split_running = true;
  st.splitting.store(true, std::memory_order_relaxed);
  if (!options_.background_splits) {
    RunSplit(lock);
    return true;
  }
  st.split_requested = true;
  if (!st.worker.joinable()) {
    st.worker = std::thread([this] { SplitWorker(); });
  }
  st.worker_wake.notify_one();
  return true;
}

void LiveKeyFilter::SplitWorker() {
  LiveFilterState& st = *state_;
  std::unique_lock<std::mutex> lock(st.mu);
  for (;;) {
    st.worker_wake.wait(lock, [&] { return st.stop || st.split_requested; });
    if (st.stop) {
      st.split_running = false;
      st.splitting.store(false, std::memory_order_relaxed);
      st.changed.notify_all();
      return;
    }
    st.split_requested = false;
    RunSplit(lock);
  }
}

void LiveKeyFilter::RunSplit(std::unique_lock<std::mutex>& lock) {
  LiveFilterState& st = *state_;
  std::shared_ptr<LiveTable> src = st.current;
  const uint64_t generation = st.generation;
  auto finish = [&](bool published) {
    st.split_running = false;
    st.splitting.store(false, std::memory_order_relaxed);
    if (!published && st.generation == generation && !st.stop) {
      // Failed on its own (memory, or an insert of the replay found no
      // room): not again before the table grew by 1/64.
      st.split_retry_keys = src->size() + src->size() / 64 + 1;
    }
    st.changed.notify_all();
  };
  if (!ready() || st.stop || !src->layout().can_split()) {
    finish(false);
    return;
  }
  // The freeze instant: the image of `src` from now on, and every later
  // write in the split log.
  const auto start = std::chrono::steady_clock::now();
  FrozenView view(*src, &st.preimage_bytes);
  src->AttachView(&view);
  st.split_log.Start();
  auto detach = [&] {
    src->DetachView(&view);
    st.split_log.Stop();
  };
  auto cancelled = [&] { return st.generation != generation || st.stop; };

  lock.unlock();
  std::unique_ptr<LiveTable> dst;
  bool ok = true;
  try {
    dst = std::make_unique<LiveTable>(src->layout().Split());
    st.pending_table_bytes.store(dst->memory_bytes(),
                                 std::memory_order_relaxed);
  } catch (const std::bad_alloc&) {
    ok = false;
  }
  std::vector<uint64_t> chunk(LiveTable::kChunkBuckets);
  for (uint64_t k = 0; ok && k < view.num_chunks(); ++k) {
    {
      std::lock_guard<std::mutex> relock(st.mu);
      if (cancelled()) {
        ok = false;
        break;
      }
      view.CopyChunk(k, chunk.data());
    }
    dst->SplitFrom(chunk.data(), k * LiveTable::kChunkBuckets,
                   view.chunk_buckets(k));
    if (internal::SplitChunkHook hook =
            internal::split_chunk_hook.load(std::memory_order_relaxed)) {
      hook(k);
    }
  }
  // Replay the writes made since the freeze: outside the mutex while the
  // log is long, the last few under it, then publish.
  auto insert = [&](uint64_t h) { return dst->Insert(h); };
  auto erase = [&](uint64_t h) { dst->Erase(h); };
  std::vector<DeltaLog::Op> ops;
  lock.lock();
  while (ok) {
    if (cancelled()) {
      ok = false;
      break;
    }
    st.split_log.Take(&ops);
    if (ops.size() <= kFinalReplayOps) {
      ok = Replay(ops, insert, erase);
      break;
    }
    lock.unlock();
    ok = Replay(ops, insert, erase);
    lock.lock();
  }
  detach();
  st.pending_table_bytes.store(0, std::memory_order_relaxed);
  if (!ok) {
    lock.unlock();
    dst.reset();  // a large table is freed outside the mutex
    lock.lock();
    finish(false);
    return;
  }
  st.retired_relocations.fetch_add(src->relocations(),
                                   std::memory_order_relaxed);
  // Not cancelled: the filter is ready (MarkNotReady changes generation).
  PublishLocked(std::shared_ptr<LiveTable>(std::move(dst)), "Split");
  st.counters.Add<&LiveKeyFilterStats::splits>();
  const uint64_t micros = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(
          std::chrono::steady_clock::now() - start)
          .count());
  st.last_split_micros.store(micros, std::memory_order_relaxed);
  st.counters.Add<&LiveKeyFilterStats::split_micros>(micros);
  finish(true);
  // Readers that may still hold `src` finish before it is released (a
  // Checkpoint may keep it alive longer); freed outside the mutex.
  lock.unlock();
  internal::SynchronizeReaders();
  src.reset();
  lock.lock();
}

void LiveKeyFilter::PublishLocked(std::shared_ptr<LiveTable> table,
                                  const char* what) {
  LiveFilterState& st = *state_;
  st.current = std::move(table);
  if (internal::PublishHook hook =
          internal::publish_hook.load(std::memory_order_relaxed)) {
    hook(what);
  }
  // The one store that changes what readers probe: the table and "ready"
  // together (publication protocol, live_key_filter.h).
  published_.store(internal::PublishedWord(st.current.get()),
                   std::memory_order_release);
  ++st.generation;
  st.full_at_last_level = false;
  UpdateRescanWantedLocked();
  st.changed.notify_all();
}

bool LiveKeyFilter::RecordIfNotReadyLocked(uint64_t hash, bool insert) {
  if (ready()) return false;
  LiveFilterState& st = *state_;
  st.rebuild_log.Add(hash, insert);
  if (insert) {
    st.counters.Add<&LiveKeyFilterStats::inserts>();
  } else {
    st.counters.Add<&LiveKeyFilterStats::erases>();
  }
  return true;
}

bool LiveKeyFilter::Insert(KeyHash hash) {
  LiveFilterState& st = *state_;
  std::unique_lock<std::mutex> lock(st.mu);
  if (RecordIfNotReadyLocked(hash.value, true)) return true;
  bool waited = false;
  while (!st.current->Insert(hash.value)) {
    // No room in the item's sub-table: a split is running or starts now,
    // unless the item's buckets hold nothing but its own copies (a run of
    // duplicates, which no split separates) or the table cannot split.
    const uint64_t generation = st.generation;
    if (st.current->OnlyCopiesOf(hash.value) || !RequestSplitLocked(lock)) {
      st.counters.Add<&LiveKeyFilterStats::insert_failures>();
      return false;
    }
    if (st.generation == generation) {
      if (!waited) st.counters.Add<&LiveKeyFilterStats::insert_waits>();
      waited = true;
      st.changed.wait(lock, [&] {
        return st.generation != generation || !st.split_running;
      });
    }
    // MarkNotReady while waiting.
    if (RecordIfNotReadyLocked(hash.value, true)) return true;
    if (st.generation == generation) {  // the split failed
      st.counters.Add<&LiveKeyFilterStats::insert_failures>();
      return false;
    }
  }
  st.counters.Add<&LiveKeyFilterStats::inserts>();
  st.split_log.Add(hash.value, true);
  st.rebuild_log.Add(hash.value, true);
  // Splits start when the item's sub-table reached max_load (at level 0
  // the whole table; later the fullest of the 2^d sub-tables).
  const LiveTable& table = *st.current;
  if (double(table.SubTableItems(hash.value)) >=
      options_.max_load * double(table.sub_table_capacity())) {
    RequestSplitLocked(lock);
  }
  return true;
}

bool LiveKeyFilter::Erase(KeyHash hash) {
  LiveFilterState& st = *state_;
  std::lock_guard<std::mutex> lock(st.mu);
  if (RecordIfNotReadyLocked(hash.value, false)) return true;
  if (!st.current->Erase(hash.value)) {
    st.counters.Add<&LiveKeyFilterStats::erase_misses>();
    return false;
  }
  st.counters.Add<&LiveKeyFilterStats::erases>();
  st.split_log.Add(hash.value, false);
  st.rebuild_log.Add(hash.value, false);
  return true;
}

bool LiveKeyFilter::splitting() const {
  return state_->splitting.load(std::memory_order_relaxed);
}

void LiveKeyFilter::WaitForSplit() {
  LiveFilterState& st = *state_;
  std::unique_lock<std::mutex> lock(st.mu);
  st.changed.wait(lock, [&] { return !st.split_running; });
}

// ---------------------------------------------------------------- rebuilds

std::unique_ptr<LiveKeyFilter::Builder> LiveKeyFilter::BeginRebuild(
    uint64_t capacity_keys) {
  const int f = options_.fingerprint_bits;
  auto table = std::make_unique<LiveTable>(LiveLayout(
      f, LiveTable::BaseBucketsFor(capacity_keys, f, options_.target_load), 0,
      options_.seed));
  std::unique_ptr<Builder> builder(
      new Builder(capacity_keys, std::move(table)));
  LiveFilterState& st = *state_;
  std::lock_guard<std::mutex> lock(st.mu);
  st.rebuild_log.Start();
  builder->epoch_ = ++st.rebuild_epoch;
  st.rebuilding.store(true, std::memory_order_relaxed);
  st.rebuild_table_bytes.store(builder->memory_bytes(),
                               std::memory_order_relaxed);
  return builder;
}

uint64_t LiveKeyFilter::BeginRebuildLog() {
  LiveFilterState& st = *state_;
  std::lock_guard<std::mutex> lock(st.mu);
  st.rebuild_log.Start();
  st.rebuilding.store(true, std::memory_order_relaxed);
  st.rebuild_table_bytes.store(0, std::memory_order_relaxed);
  return ++st.rebuild_epoch;
}

void LiveKeyFilter::AdoptRebuild(Builder* builder, uint64_t ticket) {
  builder->epoch_ = ticket;
}

void LiveKeyFilter::AbortRebuildLocked() {
  LiveFilterState& st = *state_;
  st.rebuild_log.Stop();
  ++st.rebuild_epoch;
  st.rebuilding.store(false, std::memory_order_relaxed);
  st.rebuild_table_bytes.store(0, std::memory_order_relaxed);
}

void LiveKeyFilter::AbortRebuild() {
  std::lock_guard<std::mutex> lock(state_->mu);
  AbortRebuildLocked();
}

bool LiveKeyFilter::Replace(std::unique_ptr<Builder> builder) {
  LiveFilterState& st = *state_;
  std::unique_lock<std::mutex> lock(st.mu);
  auto fail = [&] {
    AbortRebuildLocked();
    return false;
  };
  if (builder == nullptr || builder->failed_) return fail();
  if (builder->epoch_ != 0) {
    // From BeginRebuild: only the latest one, while its log records.
    if (builder->epoch_ != st.rebuild_epoch || !st.rebuild_log.recording()) {
      return fail();
    }
    auto insert = [&](uint64_t h) { return builder->Add(KeyHash(h)); };
    auto erase = [&](uint64_t h) { builder->table_->Erase(h); };
    std::vector<DeltaLog::Op> ops;
    for (;;) {
      st.rebuild_log.Take(&ops);
      if (ops.size() <= kFinalReplayOps) {
        if (!Replay(ops, insert, erase)) return fail();
        break;
      }
      lock.unlock();
      const bool ok = Replay(ops, insert, erase);
      lock.lock();
      if (!ok || builder->epoch_ != st.rebuild_epoch) return fail();
    }
  }
  AbortRebuildLocked();  // the log is replayed: stop recording
  std::shared_ptr<LiveTable> old = st.current;
  st.retired_relocations.fetch_add(old->relocations(),
                                   std::memory_order_relaxed);
  st.split_retry_keys = 0;
  // Ready again, with the new table, in one store.
  PublishLocked(std::shared_ptr<LiveTable>(std::move(builder->table_)),
                "Replace");
  st.counters.Add<&LiveKeyFilterStats::rebuilds>();
  lock.unlock();
  internal::SynchronizeReaders();
  old.reset();
  return true;
}

void LiveKeyFilter::MarkNotReady() {
  LiveFilterState& st = *state_;
  std::lock_guard<std::mutex> lock(st.mu);
  published_.store(internal::PublishedWord(st.current.get()) | kNotReady,
                   std::memory_order_release);
  ++st.generation;  // a running split is abandoned
  AbortRebuildLocked();
  st.rescan_wanted.store(false, std::memory_order_relaxed);
  st.changed.notify_all();
}

// ---------------------------------------------------------------- snapshots

std::unique_ptr<LiveKeyFilter::Checkpoint> LiveKeyFilter::Freeze() {
  LiveFilterState& st = *state_;
  std::lock_guard<std::mutex> lock(st.mu);
  if (!ready() || st.checkpoint_alive) return nullptr;
  std::unique_ptr<Checkpoint> cp(new Checkpoint);
  cp->filter_ = this;
  cp->table_ = st.current;
  cp->view_ = std::make_unique<FrozenView>(*st.current, &st.preimage_bytes);
  cp->num_keys_ = st.current->size();
  st.current->AttachView(cp->view_.get());
  st.checkpoint_alive = true;
  return cp;
}

LiveKeyFilter::Checkpoint::~Checkpoint() {
  std::lock_guard<std::mutex> lock(filter_->state_->mu);
  table_->DetachView(view_.get());
  view_.reset();
  filter_->state_->checkpoint_alive = false;
}

int LiveKeyFilter::Checkpoint::level() const {
  return table_->layout().level();
}

uint64_t LiveKeyFilter::Checkpoint::EncodedSize(size_t identity_size) const {
  return internal::LiveSnapshotSize(table_->num_buckets(), identity_size);
}

bool LiveKeyFilter::Checkpoint::Encode(std::string_view identity,
                                       const Sink& sink) {
  if (encoded_ || identity.size() > internal::kMaxSnapshotIdentity) {
    return false;
  }
  encoded_ = true;
  internal::LiveSnapshotEncoder encoder(sink);
  if (!encoder.Begin(table_->layout(), num_keys_, identity)) return false;
  std::vector<uint64_t> chunk(LiveTable::kChunkBuckets);
  for (uint64_t k = 0; k < view_->num_chunks(); ++k) {
    {
      std::lock_guard<std::mutex> lock(filter_->state_->mu);
      view_->CopyChunk(k, chunk.data());
    }
    if (!encoder.AddWords(chunk.data(), view_->chunk_buckets(k))) return false;
  }
  return encoder.Finish();
}

std::string LiveKeyFilter::EncodeSnapshot(std::string_view identity) {
  std::string out;
  std::unique_ptr<Checkpoint> cp = Freeze();
  if (cp == nullptr) return out;
  out.reserve(cp->EncodedSize(identity.size()));
  cp->Encode(identity, [&](std::string_view piece) {
    out.append(piece.data(), piece.size());
    return true;
  });
  return out;
}

std::unique_ptr<LiveKeyFilter::Builder> LiveKeyFilter::DecodeSnapshot(
    const LiveKeyFilterOptions& options, std::string_view data,
    std::string* identity, std::string* why) {
  return SnapshotBuilder(
      options, internal::DecodeLiveSnapshot(data, identity, why), why);
}

std::unique_ptr<LiveKeyFilter::Builder> LiveKeyFilter::DecodeSnapshot(
    const LiveKeyFilterOptions& options, uint64_t size,
    const SnapshotReader& read, std::string* identity, std::string* why) {
  return SnapshotBuilder(
      options, internal::DecodeLiveSnapshot(size, read, identity, why), why);
}

std::unique_ptr<LiveKeyFilter::Builder> LiveKeyFilter::SnapshotBuilder(
    const LiveKeyFilterOptions& options, std::unique_ptr<LiveTable> table,
    std::string* why) {
  if (table == nullptr) return nullptr;
  const int f = table->layout().fingerprint_bits();
  if (f != options.fingerprint_bits) {
    if (why != nullptr) {
      *why = "snapshot has " + std::to_string(f) +
             "-bit fingerprints, the options ask for " +
             std::to_string(options.fingerprint_bits);
    }
    return nullptr;
  }
  const LiveKeyFilterOptions resolved = Resolve(options);
  const uint64_t keys = static_cast<uint64_t>(
      std::floor(double(table->capacity()) * resolved.target_load));
  return std::unique_ptr<Builder>(new Builder(keys, std::move(table)));
}

}  // namespace cuckoo
