// LiveKeyFilter: a concurrent, growable cuckoo filter over a changing set of
// keys (the live keys of a RocksDB column family), with deletion.
//
// It answers "definitely absent" or "may be present" for a key. It never
// answers "absent" for a key that was inserted and not erased, also while
// a writer inserts, erases, relocates entries or swaps in a larger table.
//
// Structure: 16-bit fingerprints, 4 per bucket, one 64-bit atomic word per
// bucket (see plugin/core/live/live_table.h). With load factor a the false
// positive rate is about 8a / 65535 (1.0e-4 at the default sizing load 0.85)
// at 16 / a bits per key (18.8 at 0.85). Lookups probe two 8-byte buckets.
//
// Thread safety, per method:
// - Readers (MayContain*, GetStats, NeedsGrowth...): any thread, any time,
//   lock-free (no mutex; a few atomic increments on a per-thread slot).
// - Writers (Insert, Erase, BeginRebuild, Replace, AbortRebuild, SetBypass,
//   EncodeSnapshot): one at a time. The caller serializes them, e.g.
//   FilteredDB's write mutex. Builder is used by one thread at a time.
//
// Exactness is the caller's job: Insert adds a copy even if the key is
// present, and Erase of a key that is not present can erase another key's
// fingerprint (creating a false negative). FilteredDB resolves both with
// point reads of the database.
//
// Growth: the table has a fixed size. Tables are replaced whole: the caller
// calls BeginRebuild(capacity) (from then on every Insert/Erase is also
// recorded in a delta log), fills the returned Builder with every present
// key (e.g. from a database iterator created at the same moment, possibly in
// another thread), then Replace(builder) applies the delta log and publishes
// the new table with one atomic store. Readers keep using the old table until
// then; it is freed once no reader holds it.
#ifndef CUCKOO_LIVE_KEY_FILTER_H_
#define CUCKOO_LIVE_KEY_FILTER_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace cuckoo {

namespace internal {
class LiveTable;
class ReaderGate;
}  // namespace internal

struct LiveKeyFilterOptions {
  // Keys the first table is sized for (at target_load). FilteredDB uses the
  // larger of this and the column family's estimated key count at open.
  uint64_t initial_capacity = uint64_t{1} << 16;
  // Load factor new tables are sized for, in (0, max_load). 0.85 gives about
  // 18.8 bits per key and a false positive rate of about 1.0e-4.
  double target_load = 0.85;
  // Load factor at which the table should grow (NeedsGrowth), in
  // (target_load, 0.97]. Inserts usually still succeed up to about 0.96.
  double max_load = 0.93;
  // A grown table is sized for growth_factor x the stored keys, >= 1.25.
  double growth_factor = 2.0;
  // Seed of the alternate-bucket hash (stored in snapshots).
  uint32_t seed = 0;
};

// Returns "" if the options are valid, otherwise a message.
std::string ValidateLiveKeyFilterOptions(const LiveKeyFilterOptions& options);

// Figures of one filter (LiveKeyFilter::GetStats). FilteredDB reports them
// together with its own database-side counters (FilteredDBStats in
// rocksdb_cuckoo/filtered_db.h).
struct LiveKeyFilterStats {
  // ---- current table
  uint64_t num_keys = 0;  // fingerprints stored
  uint64_t num_buckets = 0;
  uint64_t capacity = 0;      // slots: 4 per bucket
  uint64_t table_bytes = 0;   // bucket array: 8 bytes per bucket
  uint64_t memory_bytes = 0;  // all memory: table, seqlock stripes, and
                              // during a rebuild the new table + delta log
  double bits_per_key = 0;    // table_bytes * 8 / num_keys (0 if empty)
  double load_factor = 0;     // num_keys / capacity
  double expected_fpr = 0;    // 1 - (1 - 1/65535)^(8 * load_factor)
  // ---- writer counters (since the filter was created)
  uint64_t inserts = 0;
  uint64_t erases = 0;
  uint64_t erase_misses = 0;    // Erase found no matching fingerprint
  uint64_t insert_no_room = 0;  // Insert found the table too full
  uint64_t relocations = 0;     // entries moved by inserts (current table)
  uint64_t rebuilds = 0;        // tables replaced (growth, reload, repair)
  // ---- reader counters (per-thread slots; may undercount slightly when
  // more than 32 threads read concurrently)
  uint64_t lookups = 0;       // MayContain* keys answered from the table
  uint64_t absent = 0;        // ... of which answered "absent"
  uint64_t read_retries = 0;  // optimistic reads repeated (raced a move)
  bool rebuild_in_progress = false;
  bool bypassed = false;  // SetBypass(true): every key "may be present"
};

class LiveKeyFilter {
 public:
  // A filter whose first table holds `capacity_keys` at options.target_load.
  // Options must be valid (see ValidateLiveKeyFilterOptions).
  LiveKeyFilter(const LiveKeyFilterOptions& options, uint64_t capacity_keys);
  ~LiveKeyFilter();
  LiveKeyFilter(const LiveKeyFilter&) = delete;
  LiveKeyFilter& operator=(const LiveKeyFilter&) = delete;

  // The item hash of a key (64-bit XXH3, cuckoo::HashKey).
  static uint64_t Hash(std::string_view key);

  // ---------------------------------------------------------- readers
  // False only if the key is certainly not present. O(1): two bucket loads.
  bool MayContain(std::string_view key) const {
    return MayContainHash(Hash(key));
  }
  bool MayContainHash(uint64_t hash) const;
  // out[k] = MayContainHash(hashes[k]); prefetches buckets of 16 keys at once.
  void MayContainHashes(const uint64_t* hashes, size_t n, bool* out) const;

  LiveKeyFilterStats GetStats() const;
  uint64_t size() const;
  // True when the current table's load factor reached options().max_load.
  bool NeedsGrowth() const;
  // Keys the next table should hold: growth_factor x stored keys, at least
  // the current capacity at target_load.
  uint64_t GrowthCapacity() const;
  const LiveKeyFilterOptions& options() const { return options_; }

  // ---------------------------------------------------------- writer
  // Adds one copy of the item. O(1) expected. Returns false, with the table
  // unchanged, when the table has no room for it: grow first.
  bool Insert(uint64_t hash);
  // Removes one copy of the item's fingerprint; false if none is stored.
  bool Erase(uint64_t hash);

  // A table being filled off-line. Not thread-safe; one thread at a time.
  class Builder {
   public:
    ~Builder();
    // Adds one copy of the item; false when the table is too full (the
    // builder is then unusable: start again with a larger capacity).
    bool Add(uint64_t hash);
    uint64_t size() const;
    uint64_t capacity_keys() const { return capacity_keys_; }
    uint64_t memory_bytes() const;

   private:
    friend class LiveKeyFilter;
    Builder(uint64_t capacity_keys, double load, uint32_t seed);
    uint64_t capacity_keys_;
    std::unique_ptr<internal::LiveTable> table_;
    bool failed_ = false;
  };

  // Starts recording every later Insert/Erase in a delta log (replacing any
  // earlier one) and returns an empty builder for `capacity_keys` keys.
  std::unique_ptr<Builder> BeginRebuild(uint64_t capacity_keys);
  // Records an insert that is already in the current table but that the
  // rebuild's source does not contain yet (e.g. a pending database write).
  void RecordPendingInsert(uint64_t hash);
  // Applies the delta log (if a rebuild was begun) to the builder's table
  // and makes it current; waits until no reader holds the old table, then
  // frees it. Returns false if the builder failed or overflowed while
  // applying the delta: nothing changes and the delta log keeps recording.
  bool Replace(std::unique_ptr<Builder> builder);
  // Stops recording the delta log.
  void AbortRebuild();
  bool rebuilding() const {
    return rebuilding_.load(std::memory_order_relaxed);
  }

  // While set, every lookup answers "may be present" (used while the table
  // cannot be trusted, e.g. during a repair rebuild).
  void SetBypass(bool bypass) {
    bypass_.store(bypass, std::memory_order_seq_cst);
  }
  bool bypass() const { return bypass_.load(std::memory_order_acquire); }

  // ---------------------------------------------------------- snapshots
  // Identity a snapshot is bound to; a snapshot is used only if all fields
  // match the database being opened.
  struct SnapshotIdentity {
    uint64_t sequence = 0;  // last sequence number the filter covers
    std::string db_id;      // DB::GetDbIdentity
    uint32_t cf_id = 0;
    std::string cf_name;
    // Digest of the on-disk state the snapshot was taken against (FilteredDB:
    // MANIFEST and WAL files). Sequence-number equality alone does not prove
    // that a snapshot covers a DB: an ingestion, a lost unsynced write or a
    // copied directory can reach the same sequence with other keys. Empty in
    // `expected` never matches a non-empty stored value.
    std::string db_state;
  };
  // Serialized table + identity + XXH64 checksum (format in
  // plugin/core/live/live_snapshot.h). Writer-serialized.
  std::string EncodeSnapshot(const SnapshotIdentity& identity) const;
  // Validates a snapshot (size, magic, version, parameters, checksum, entry
  // count, identity == expected) and returns a builder holding its table,
  // or null with the reason in *why. Never reads outside `data`.
  static std::unique_ptr<Builder> DecodeSnapshot(
      const LiveKeyFilterOptions& options, std::string_view data,
      const SnapshotIdentity& expected, std::string* why);

 private:
  struct DeltaOp {
    uint64_t hash;
    bool insert;
  };

  const LiveKeyFilterOptions options_;
  std::atomic<internal::LiveTable*> table_;
  std::unique_ptr<internal::ReaderGate> gate_;
  std::atomic<bool> bypass_{false};
  std::atomic<bool> rebuilding_{false};
  std::vector<DeltaOp> delta_;  // writer only
  std::atomic<uint64_t> delta_bytes_{0};
  std::atomic<uint64_t> rebuild_bytes_{0};
  std::atomic<uint64_t> inserts_{0};
  std::atomic<uint64_t> erases_{0};
  std::atomic<uint64_t> erase_misses_{0};
  std::atomic<uint64_t> insert_no_room_{0};
  std::atomic<uint64_t> rebuilds_{0};
};

}  // namespace cuckoo

#endif  // CUCKOO_LIVE_KEY_FILTER_H_
