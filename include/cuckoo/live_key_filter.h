// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// LiveKeyFilter: a concurrent cuckoo filter over a changing set of keys (the
// live keys of a RocksDB column family) that grows without the keys, with
// deletion, copy-on-write checkpoints and lock-free reads.
//
// It answers "definitely absent" or "may be present" for a key. It never
// answers "absent" for a key that was inserted and not erased, also while
// writers insert, erase, relocate entries, split the table or swap in a
// rebuilt one.
//
// Structure: one 64-bit word per bucket holding b = floor(64 / f) slots of
// f-bit fingerprints (f = fingerprint_bits, 8..16, default 12: 5 slots).
// Lookups read two words. At load a the false positive rate is about
// 2 b a / 2^w, w = f when built from keys (default: 0.23% at a = 0.93, 13.8
// bits per key; 64 / (b a) bits per key in general).
//
// Growth without the keys: when the load reaches max_load (from the first
// split on: the load of the fullest of the 2^d sub-tables that share a low
// part of the bucket index), a background
// thread owned by the filter splits the table in two (a copy-on-write image
// of the table, so writers continue meanwhile; the writes made during the
// split are replayed, then the doubled table is published with one atomic
// store). Each split moves one fingerprint bit into the bucket index: the
// compared width w drops by one and the false positive rate doubles at equal
// load (level d = splits since the last build from keys, w = f - d). At most
// f - 4 splits; then, or earlier when w would drop below rescan_below_bits,
// RescanWanted() asks the owner for a build from the keys (BeginRebuild),
// which restores w = f. Inserts never fail because of a growth: one that
// finds the table full while a split runs waits for it (counted in
// stats.insert_waits).
//
// Memory: bits per key = 64 / (b * load). Load after a build from keys:
// target_load (default 0.93 for b = 5: 13.8 bits per key); just after a
// split max_load / 2; averaged over the keys inserted during a doubling from
// max_load / 2 to max_load, 128 ln 2 / (b max_load) (b = 5: 18.7 at 0.95).
// During a split the new table (2x) exists next to the old one, plus the
// pre-images of the chunks written before the split copied them; a
// Checkpoint keeps the table it froze alive until it is destroyed.
//
// Thread safety, per method:
// - Readers (MayContain*, GetStats, size, RescanWanted, ...): any thread,
//   any time, no lock and no atomic read-modify-write (see
//   plugin/core/live/reader_gate.h). A retired table is freed once no
//   reader can hold it.
//   Not async-signal-safe: never call a method of this class (nor of
//   FilteredDB) from a signal handler. A handler's lookup nested inside the
//   interrupted thread's own lookup can let a writer free the table that
//   lookup is reading (a false negative), and one that interrupts a
//   thread's first lookup deadlocks.
//   fork(): if another thread was inside a lookup (of any filter: readers
//   share one process-wide registry) when the process forked, a writer in
//   the child that must wait for readers (a split, Replace) waits forever
//   for that thread's section. Fork only while no other thread reads a
//   LiveKeyFilter or a FilteredDB, or use the filters only in the parent.
//   Unloading: a thread that has read a filter runs a pthread key
//   destructor of this library when it exits (returning its reader slot),
//   so a shared object that contains the library must stay mapped while
//   such threads may exit. librocksdb_cuckoo.so is linked with -z nodelete
//   (dlclose leaves it loaded); link a shared object of yours that embeds
//   the static library the same way.
// - Writers (Insert, Erase, BeginRebuild, Replace, AbortRebuild,
//   MarkNotReady, Freeze, WaitForSplit): any thread; they serialize on the
//   filter's own mutex (short holds). Builder: one thread at a time.
//
// Publication protocol (why a reader never misses a present key):
// - A reader loads one word, once: the table to probe and whether the filter
//   is ready (a not-ready filter answers "may be present" without probing).
//   It combines it with no other field. Every change of either is one
//   release store of that word under the filter mutex: Replace publishes
//   the new table and "ready" together (a reader sees "not ready", or the
//   old table of a ready filter, or the new table; never "ready" with a
//   table that lacks keys); a split publishes the doubled table (only while
//   ready); MarkNotReady keeps the table and clears "ready".
// - A table is published only when it holds every present key: a rebuild's
//   delta log and a split's log are replayed into it under the mutex first,
//   and while it is current every Insert reaches it before returning.
// - Within a table, an entry that moves (relocation) or whose twin is erased
//   is covered by seqlock stripes (plugin/core/live/live_table.h): a reader
//   that raced such a write retries before it answers "absent".
// - A table that stops being published is freed only after every read
//   section that may have loaded it has ended (reader_gate.h), or later when
//   a Checkpoint still holds it.
//
// Exactness is the caller's job: Insert adds a copy even if the key is
// present, and Erase of a key that is not present can erase another key's
// fingerprint (creating a false negative). FilteredDB resolves both with
// point reads of the database.
#ifndef CUCKOO_LIVE_KEY_FILTER_H_
#define CUCKOO_LIVE_KEY_FILTER_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "cuckoo/cuckoo_filter.h"      // KeyHash, HashKey
#include "cuckoo/detail/live_probe.h"  // the inline path of Probe

namespace cuckoo {

namespace internal {
class LiveTable;
class FrozenView;
struct LiveFilterState;
}  // namespace internal

struct LiveKeyFilterOptions {
  // Fingerprint bits f, 8..16. A bucket holds floor(64 / f) of them
  // (8: 8, 9: 7, 10: 6, 11-12: 5, 13-16: 4). Each extra bit halves the false
  // positive rate at equal load; 12 gives 0.23% at 13.8 bits per key.
  int fingerprint_bits = 12;
  // Keys the first table is sized for (at target_load).
  uint64_t initial_capacity = uint64_t{1} << 16;
  // Load factor tables built from keys are sized for, in (0, max_load).
  // 0 selects the default of the bucket size: DefaultLiveTargetLoad(b).
  double target_load = 0;
  // Load factor at which the table splits, in (target_load, limit(b)]
  // (limit: LiveMaxLoadLimit(b)). 0 selects DefaultLiveMaxLoad(b).
  double max_load = 0;
  // Seed of the alternate-bucket offsets (stored in snapshots).
  uint32_t seed = 0;
  // A split that leaves the compared width w below this many bits (and any
  // table that cannot split any more) sets RescanWanted(), asking the owner
  // to rebuild from the keys. 0: only when the table cannot split.
  // Default 10: for f = 12 up to two splits (FPR up to ~4x the fresh one).
  int rescan_below_bits = 10;
  // Split in a background thread owned by the filter (true), or in the
  // insert that reaches max_load (false: that insert waits for the split;
  // deterministic, for tests).
  bool background_splits = true;
};

// Default load factors per bucket size b (slots per bucket), from
// measurements of where breadth-first inserts start failing (see
// live_key_filter.cc): tables are built at DefaultLiveTargetLoad and split
// at DefaultLiveMaxLoad.
double DefaultLiveTargetLoad(int slots_per_bucket);
double DefaultLiveMaxLoad(int slots_per_bucket);
// The largest max_load accepted for b slots per bucket.
double LiveMaxLoadLimit(int slots_per_bucket);

// Returns "" if the options are valid, otherwise a message.
std::string ValidateLiveKeyFilterOptions(const LiveKeyFilterOptions& options);

// Figures of one filter (LiveKeyFilter::GetStats). FilteredDB reports them
// together with its own database-side counters (FilteredDBStats in
// rocksdb_cuckoo/filtered_db.h).
struct LiveKeyFilterStats {
  // ---- current table
  uint64_t num_keys = 0;  // fingerprints stored
  uint64_t num_buckets = 0;
  uint64_t capacity = 0;      // slots: b per bucket
  uint64_t table_bytes = 0;   // bucket array: 8 bytes per bucket
  uint64_t memory_bytes = 0;  // all memory: table, seqlock stripes, counters,
                              // and during a split or rebuild the new table,
                              // delta logs and saved pre-images
  double bits_per_key = 0;    // table_bytes * 8 / num_keys (0 if empty)
  double load_factor = 0;     // num_keys / capacity
  int fingerprint_bits = 0;   // f
  int width = 0;              // w = f - level: fingerprint bits compared
  int level = 0;              // d: splits since the table was built from keys
  double expected_fpr = 0;    // 1 - (1 - 1/V)^(2 b load), V = 2^w
                              // (2^f - 1 at level 0)
  // ---- writer counters (since the filter was created)
  uint64_t inserts = 0;
  uint64_t erases = 0;
  uint64_t erase_misses = 0;       // Erase found no matching fingerprint
  uint64_t insert_failures = 0;    // Insert returned false (no room, no split)
  uint64_t relocations = 0;        // entries moved by inserts (all tables)
  uint64_t splits = 0;             // tables doubled from their own contents
  uint64_t last_split_micros = 0;  // the last split, freeze to publication
  uint64_t split_micros = 0;       // all splits
  uint64_t insert_waits = 0;       // inserts that waited for a split
  uint64_t rebuilds = 0;           // tables replaced by Replace (from keys or
                                   // from a snapshot)
  // ---- reader counters (per-thread stripes, relaxed; may undercount
  // slightly when more than 64 threads read at the same time)
  uint64_t lookups = 0;       // MayContain* keys answered from the table
  uint64_t absent = 0;        // ... of which answered "absent"
  uint64_t read_retries = 0;  // optimistic reads repeated (raced a move)
  // ---- state
  bool split_in_progress = false;
  bool rebuild_in_progress = false;  // BeginRebuild ... Replace/AbortRebuild
  bool building = false;             // not ready: every key "may be present"
  bool rescan_wanted = false;        // RescanWanted()
};

class LiveKeyFilter {
 public:
  // A ready filter whose first table holds `capacity_keys` at the target
  // load. Options must be valid (see ValidateLiveKeyFilterOptions). Throws
  // std::bad_alloc when the table cannot be allocated.
  LiveKeyFilter(const LiveKeyFilterOptions& options, uint64_t capacity_keys);
  // Stops and joins the split thread. Every Checkpoint must be destroyed
  // first.
  ~LiveKeyFilter();
  LiveKeyFilter(const LiveKeyFilter&) = delete;
  LiveKeyFilter& operator=(const LiveKeyFilter&) = delete;

  // ---------------------------------------------------------- readers
  // The answer of one lookup, and whether a table was consulted.
  enum class Answer : uint8_t {
    kAbsent,      // certainly not present (the table was probed)
    kMayContain,  // the table holds a matching fingerprint
    kNotReady,    // not ready: may be present, no table probed
  };
  // O(1): two bucket loads, no allocation, no lock, no read-modify-write.
  // One load decides readiness and the table (see "Publication protocol"),
  // so kNotReady is exactly "this lookup consulted no table". Any thread,
  // concurrently with every other method. Inline (defined below; about 75
  // instructions for an absent key, no call): a read section, the
  // placement, two bucket loads and a seqlock check; a lookup that raced a
  // relocation or erase of its bucket pair retries out of line, and a
  // thread's first lookup registers it (out of line, once).
  Answer Probe(KeyHash hash) const;
  Answer Probe(std::string_view key) const { return Probe(HashKey(key)); }
  // False only if the key is certainly not present.
  bool MayContain(KeyHash hash) const { return Probe(hash) != Answer::kAbsent; }
  bool MayContain(std::string_view key) const {
    return MayContain(HashKey(key));
  }
  // out[k] = MayContain(hashes[k]) for k < n; keeps the buckets of 16 keys
  // in flight (faster than single calls on tables larger than the caches).
  // Returns false when the filter was not ready (every out[k] true, no table
  // probed), true when every key was looked up in one table.
  bool MayContainBatch(const KeyHash* hashes, size_t n, bool* out) const;

  LiveKeyFilterStats GetStats() const;
  // Fingerprints stored in the current table.
  uint64_t size() const;
  // True when the owner should rebuild the filter from its keys (see
  // rescan_below_bits): the table is at its last level and full, or a split
  // left the width below rescan_below_bits. Cleared by Replace.
  bool RescanWanted() const;
  // Keys a rebuild should size its table for: the stored keys plus 1/8
  // (room for the writes made during the scan), at least initial_capacity.
  uint64_t RescanCapacity() const;
  // The largest capacity_keys a table built from keys can hold (larger
  // requests are clamped): 2^32 - 4 buckets at the target load.
  uint64_t max_capacity() const;
  const LiveKeyFilterOptions& options() const { return options_; }

  // ---------------------------------------------------------- writers
  // Adds one copy of the item. O(1) expected. Waits for a running split if
  // the table has no room, and starts one at max_load. Returns false, with
  // the filter unchanged, only when the table has no room and cannot split
  // (at its last level, or a pathological run of duplicates): rebuild from
  // the keys. While the filter is not ready (building), only records the
  // write in the rebuild's delta log and returns true.
  bool Insert(KeyHash hash);
  // Removes one copy of the item's fingerprint; false if none is stored.
  // While not ready: records the write for the rebuild, returns true.
  bool Erase(KeyHash hash);

  // Waits until no split is running (one started meanwhile included).
  void WaitForSplit();
  // True while a split is requested or running (one relaxed load).
  bool splitting() const;

  // ---------------------------------------------------------- rebuilds
  // A table being filled from keys off-line (a fresh table, full width).
  // Not thread-safe; one thread at a time.
  class Builder {
   public:
    ~Builder();
    Builder(const Builder&) = delete;
    Builder& operator=(const Builder&) = delete;
    // Adds one copy of the item. When the table is full it splits (doubling,
    // one fingerprint bit less; see level()). False only when it cannot
    // split any more (the builder is then unusable: start again larger).
    bool Add(KeyHash hash);
    // Removes one copy of the item's fingerprint (e.g. a logged erasure
    // replayed onto a decoded snapshot); false if none is stored.
    bool Erase(KeyHash hash);
    // True if the table may hold the item (a stored copy, or a false
    // positive); false once the builder failed. O(1).
    bool MayContain(KeyHash hash) const;
    uint64_t size() const;
    // Keys the table was sized for.
    uint64_t capacity_keys() const { return capacity_keys_; }
    // Splits made by Add since the table was built (0: full width).
    int level() const;
    uint64_t memory_bytes() const;

   private:
    friend class LiveKeyFilter;
    Builder(uint64_t capacity_keys, std::unique_ptr<internal::LiveTable> t);
    uint64_t capacity_keys_;
    std::unique_ptr<internal::LiveTable> table_;
    bool failed_ = false;
    uint64_t epoch_ = 0;  // BeginRebuild's; 0 for a decoded snapshot
  };

  // Starts recording every later Insert/Erase in a delta log (replacing any
  // earlier one) and returns an empty builder for `capacity_keys` keys at the
  // target load. The owner fills it with every key present at this instant
  // (e.g. from a database iterator created under the same lock), then calls
  // Replace. The current table keeps answering meanwhile. Throws
  // std::bad_alloc when the table cannot be allocated (no rebuild starts).
  std::unique_ptr<Builder> BeginRebuild(uint64_t capacity_keys);
  // Applies the delta log to the builder's table and makes it current (the
  // filter becomes ready); a running split is abandoned. Waits until no
  // reader holds the old table, then frees it (unless a Checkpoint holds
  // it). The delta log is replayed mostly outside the mutex; writers wait at
  // most for the last 1024 operations. Returns false if the builder failed
  // or cannot hold the replayed inserts: the rebuild is then aborted
  // (AbortRebuild) and the filter unchanged. A builder from DecodeSnapshot
  // is installed as it is (the owner guarantees it holds every present key,
  // e.g. at open, before any write); a builder from an earlier BeginRebuild
  // than the latest, or from one aborted since (AbortRebuild, MarkNotReady,
  // a failed Replace), is refused: the writes made during its scan are not
  // logged any more.
  bool Replace(std::unique_ptr<Builder> builder);
  // Starts recording the delta log, as BeginRebuild does, for a builder that
  // comes later (a snapshot decoded and brought up to date off-line), and
  // returns the rebuild's ticket. No table is allocated here.
  uint64_t BeginRebuildLog();
  // Makes `builder` (from DecodeSnapshot) the builder of the rebuild that
  // BeginRebuildLog returned `ticket` for: Replace then replays the writes
  // logged since into it, and refuses it if that rebuild was aborted or
  // superseded meanwhile, as it does for BeginRebuild's builders.
  static void AdoptRebuild(Builder* builder, uint64_t ticket);
  // Stops recording the delta log (a rebuild abandoned). Readiness does not
  // change.
  void AbortRebuild();
  bool rebuilding() const;

  // Not-ready mode: from now on every lookup answers "may be present", and
  // Insert/Erase leave the table alone (they only go to the delta log while
  // a rebuild records one). Only a successful Replace makes the filter ready
  // again. For a table that cannot be trusted (keys added behind the
  // filter's back, e.g. an ingestion; a background build at open): call
  // MarkNotReady, then BeginRebuild, scan, Replace.
  void MarkNotReady();
  bool ready() const {
    return (published_.load(std::memory_order_acquire) & kNotReady) == 0;
  }

  // ---------------------------------------------------------- snapshots
  // A consistent image of the filter at one instant, streamed while writers
  // continue (copy-on-write: until a chunk of 512 buckets has been encoded,
  // the first write to it saves its pre-image; memory = pre-images of the
  // chunks written before they were encoded). The table it shows stays
  // allocated until the checkpoint is destroyed.
  class Checkpoint {
   public:
    ~Checkpoint();
    Checkpoint(const Checkpoint&) = delete;
    Checkpoint& operator=(const Checkpoint&) = delete;
    // Receives the encoding piece by piece (each at most 32 KiB); returns
    // false to stop (e.g. an I/O error).
    using Sink = std::function<bool(std::string_view piece)>;
    // Writes snapshot format version 2 (plugin/core/live/live_snapshot.h)
    // with the owner's `identity` bytes (<= 1 MiB) in the header; takes the
    // filter mutex once per chunk (about a microsecond). At most once per
    // checkpoint. Returns false if the sink stopped it.
    bool Encode(std::string_view identity, const Sink& sink);
    // Bytes Encode writes for an identity of `identity_size` bytes.
    uint64_t EncodedSize(size_t identity_size) const;
    uint64_t num_keys() const { return num_keys_; }
    int level() const;

   private:
    friend class LiveKeyFilter;
    Checkpoint() = default;
    LiveKeyFilter* filter_ = nullptr;
    std::shared_ptr<internal::LiveTable> table_;
    std::unique_ptr<internal::FrozenView> view_;
    uint64_t num_keys_ = 0;
    bool encoded_ = false;
  };
  // Freezes the current table: O(1) plus one byte per chunk, under the
  // mutex. Returns null if the filter is not ready or another Checkpoint of
  // this filter is alive (one at a time; splits do not count).
  std::unique_ptr<Checkpoint> Freeze();
  // Freeze + Encode into a string (the whole snapshot in memory).
  std::string EncodeSnapshot(std::string_view identity);

  // Validates a snapshot (size, magic, version, parameters, checksum, every
  // bucket, entry count; version 1 is rejected with that reason) whose
  // fingerprint width matches options.fingerprint_bits, and returns a
  // builder holding its table (for Replace) with the stored owner identity
  // in *identity, or null with the reason in *why. Never reads outside
  // `data`.
  static std::unique_ptr<Builder> DecodeSnapshot(
      const LiveKeyFilterOptions& options, std::string_view data,
      std::string* identity, std::string* why);
  // The same, from a snapshot of `size` bytes read piece by piece: `read`
  // fills `dst` with the next up to `n` bytes and sets *got (0 at the end),
  // or returns false on a read error. Holds 1 MiB of it at a time beside the
  // table (a file need not be read into memory first); a stream whose length
  // is not `size` is rejected.
  using SnapshotReader = std::function<bool(char* dst, size_t n, size_t* got)>;
  static std::unique_ptr<Builder> DecodeSnapshot(
      const LiveKeyFilterOptions& options, uint64_t size,
      const SnapshotReader& read, std::string* identity, std::string* why);

 private:
  friend class Checkpoint;
  // DecodeSnapshot's builder of a decoded table (null: *why is set).
  static std::unique_ptr<Builder> SnapshotBuilder(
      const LiveKeyFilterOptions& options,
      std::unique_ptr<internal::LiveTable> table, std::string* why);
  // Writer side (plugin/core/live/live_key_filter.cc); "Locked": the
  // filter mutex is held.
  bool RequestSplitLocked(std::unique_lock<std::mutex>& lock);
  void RunSplit(std::unique_lock<std::mutex>& lock);
  void SplitWorker();
  // Makes `table` current and the filter ready, with one store; `what`
  // names the publication for the test hook ("Replace", "Split").
  void PublishLocked(std::shared_ptr<internal::LiveTable> table,
                     const char* what);
  void UpdateRescanWantedLocked();
  void AbortRebuildLocked();
  // Not ready: records the write in the rebuild's log and returns true.
  bool RecordIfNotReadyLocked(uint64_t hash, bool insert);

  const LiveKeyFilterOptions options_;  // with the defaults resolved
  // What readers see, in one word (see "Publication protocol" above): the
  // address of the table to probe, | kNotReady while the filter is not
  // ready. Stored under the filter mutex with release; loaded with acquire
  // inside a read section (reader_gate.h).
  static constexpr uintptr_t kNotReady = 1;
  // The address is that of the table's detail::LiveProbeTable (the start of
  // its internal::LiveTable).
  std::atomic<uintptr_t> published_{0};
  // Per-thread reader statistics (kLiveCounterStripes stripes).
  std::unique_ptr<detail::LiveReaderCounters[]> counters_;
  // Everything the writers share (mutex, split thread, delta logs, ...).
  std::unique_ptr<internal::LiveFilterState> state_;
};

inline LiveKeyFilter::Answer LiveKeyFilter::Probe(KeyHash hash) const {
  const detail::LiveReadSection section = detail::EnterLiveReadSection();
  const uintptr_t published = published_.load(std::memory_order_acquire);
  Answer answer = Answer::kNotReady;
  if (CUCKOO_LIVE_LIKELY((published & kNotReady) == 0)) {
    detail::LiveReaderCounters* const c =
        detail::LiveCountersOf(counters_.get(), section.slot);
    const bool may = detail::LiveContains(
        *reinterpret_cast<const detail::LiveProbeTable*>(published), hash.value,
        &c->retries);
    // One relaxed bump per lookup (lookups = the sum of the two).
    c->answers[may].store(c->answers[may].load(std::memory_order_relaxed) + 1,
                          std::memory_order_relaxed);
    static_assert(static_cast<int>(Answer::kAbsent) == 0 &&
                      static_cast<int>(Answer::kMayContain) == 1,
                  "Answer values index LiveReaderCounters::answers");
    answer = static_cast<Answer>(may);
  }
  detail::LeaveLiveReadSection(section);
  return answer;
}

}  // namespace cuckoo

#endif  // CUCKOO_LIVE_KEY_FILTER_H_
