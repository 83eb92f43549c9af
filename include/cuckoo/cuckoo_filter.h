// Copyright (c) 2026 the rocksdb-cuckoo authors
// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only

// Partial-key cuckoo filter (Fan, Andersen, Kaminsky, Mitzenmacher,
// "Cuckoo Filter: Practically Better Than Bloom", CoNEXT 2014).
//
// This header is the RocksDB-independent core API. A filter stores items
// given as keys (bytes, hashed with HashKey) or as KeyHash values; it never
// returns a false negative for an item that was inserted and not erased.
//
// Example (examples/core_filter.cc):
//   cuckoo::FilterConfig config;  // f = 12 bits, b = 4, load 95%
//   std::string error;
//   const uint64_t expected_items = 1000000;
//   auto filter = cuckoo::CuckooFilter::Create(config, expected_items, &error);
//   filter->Insert("apple");  // kInserted, kInsertedFull or kFull
//   bool maybe = filter->Contains("apple");  // true: no false negatives
//   filter->Erase("apple");  // only items known to be present
//
//   cuckoo::KeyHash h = cuckoo::HashKey("pear");  // hash once, use often
//   filter->Insert(h);
//
// Parameters (paper section 5): with b entries per bucket, f fingerprint bits
// and load factor a, the false positive rate is about 2*b*a / 2^f, so for a
// target rate e choose f >= log2(2b/e). b=4 reaches a ~95% load; b=2 ~84%,
// b=8 ~98%. Semi-sorting (b=4 only) saves one bit per entry at the same f.
//
// Thread safety: const methods may run concurrently with each other; any
// non-const method needs exclusive access.
#ifndef CUCKOO_CUCKOO_FILTER_H_
#define CUCKOO_CUCKOO_FILTER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>

#include "cuckoo/detail/probe.h"
#include "cuckoo/detail/table_geometry.h"

#if defined(__GNUC__) || defined(__clang__)
#define CUCKOO_PURE __attribute__((pure))
#else
#define CUCKOO_PURE
#endif

namespace cuckoo {

namespace internal {
class TableOps;
struct MutableTableRef;
struct ViewAccess;    // plugin/core/filter/view_access.h: table and victim slot
struct FilterAccess;  // plugin/core/filter/view_access.h: white-box tests
}  // namespace internal
namespace detail {
struct LookupAccess;  // cuckoo/typed_lookup.h: VisitLookup
}  // namespace detail

// Construction parameters. Validate with ValidateConfig().
struct FilterConfig {
  // Fingerprint bits f: 4..32. Fingerprint 0 marks an empty slot and is
  // never produced, so there are 2^f - 1 distinct fingerprints. Buckets are
  // bit-packed for every f (b * f bits), so each extra bit halves the FPR.
  int fingerprint_bits = 12;
  // Entries per bucket b: 1, 2, 4 or 8.
  int bucket_size = 4;
  // Semi-sorted buckets (b = 4 and 4 <= f <= 16 only): each bucket stores
  // 4f - 4 bits instead of 4f. Off by default: plain buckets exist for
  // every (f, b) and insert faster (docs/sample_report/report.md, section
  // 1b, compares f=12 with f=13 semi-sorted), and a filter sized by item
  // count gets its accuracy from f. The SST policy
  // (rocksdb_cuckoo/filter_policy.h) does the opposite on purpose: it sizes
  // by a bits-per-key budget, where the saved bit buys one more fingerprint
  // bit (half the false positive rate) in the same space, and its filters
  // are built once and only read, so its automatic layouts are semi-sorted.
  bool semi_sort = false;
  // Sizing load factor in (0, 1]; 0 selects DefaultTargetLoad(bucket_size).
  // Only used by Create(config, expected_items).
  double target_load = 0.0;
  // Maximum relocations of one insert's random walk (the paper's
  // MaxNumKicks). Must be >= 0.
  int max_kicks = 500;
  // Seed of the alternate-bucket hash and of the random walk. Two filters
  // with the same config, size and insert sequence have identical bytes.
  uint32_t seed = 0;
};

// Load factor used for sizing when FilterConfig::target_load is 0:
// b=1: 0.45, b=2: 0.84, b=4: 0.95, b=8: 0.98.
double DefaultTargetLoad(int bucket_size);

// Returns an empty string if `config` is valid, otherwise a message.
std::string ValidateConfig(const FilterConfig& config);

// Number of buckets Create() uses for `expected_items` items:
// ceil(n / (b * load)), rounded up to even, at least 2. Returns 0 when the
// result would exceed kMaxBuckets. The config must be valid.
uint64_t BucketsForItems(const FilterConfig& config, uint64_t expected_items);

// Largest supported bucket count (bucket indexes are 32-bit).
constexpr uint64_t kMaxBuckets = (uint64_t{1} << 32) - 2;

// The 64-bit hash of one item, as the filter consumes it: the low 32 bits
// choose the primary bucket and the high 32 bits the fingerprint, so all 64
// bits must look uniformly random. Made by HashKey(key), or, by a caller that
// already holds such a hash (e.g. computed once for several filters), by
// explicit construction: KeyHash(h). Never wrap a raw ID or counter: small
// sequential integers all map to bucket 0 with fingerprint 1, so the filter
// is full after 2b + 1 of them; pass their bytes to HashKey (or to the key
// overloads) instead. 8 bytes, trivially copyable: pass by value.
struct KeyHash {
  KeyHash() = default;
  constexpr explicit KeyHash(uint64_t uniform_hash) : value(uniform_hash) {}
  uint64_t value = 0;
};
static_assert(sizeof(KeyHash) == 8 && std::is_trivially_copyable_v<KeyHash>,
              "KeyHash is passed by value and in arrays on the lookup path");
constexpr bool operator==(KeyHash a, KeyHash b) { return a.value == b.value; }
constexpr bool operator!=(KeyHash a, KeyHash b) { return a.value != b.value; }

// 64-bit XXH3 hash of a key's bytes (seed 0): the item hash used by all
// adapters (the SST policy hashes RocksDB keys the same way).
KeyHash HashKey(std::string_view key);

// Outcome of CuckooFilter::Insert.
enum class InsertResult : uint8_t {
  // Stored in the table.
  kInserted,
  // Stored, but the random walk ran out of kicks: one displaced fingerprint
  // now sits in the single victim slot (still found by Contains). The filter
  // is full: further inserts return kFull until an Erase makes room.
  kInsertedFull,
  // Not stored, filter unchanged: the victim slot was already in use.
  kFull,
};

// Size and accuracy figures of a filter.
struct FilterStats {
  uint64_t num_items = 0;    // stored items, including the victim
  uint64_t num_buckets = 0;  // m
  uint64_t capacity = 0;     // m * b slots
  uint64_t table_bytes = 0;  // bytes of the bucket array
  double load_factor = 0;    // num_items / capacity
  double bits_per_item = 0;  // table_bytes * 8 / num_items (0 if empty)
  double expected_fpr = 0;   // 1 - (1 - 1/(2^f - 1))^(2 * b * load)
  bool has_victim = false;   // the victim slot is in use (filter full)
};

class CuckooFilterView;

// A mutable cuckoo filter that owns its table. Not copyable; movable through
// std::unique_ptr. No operation allocates after construction. Memory: the
// bucket array (stats().table_bytes) plus, when f <= 16 and the array is at
// least 64 times 4 * 2^f bytes, a table of the alternate-bucket offsets of
// every fingerprint (4 * 2^f bytes: 16 KiB for f = 12, at most 256 KiB and
// at most 1/64 of the array), which makes lookups and inserts on tables
// larger than the CPU caches cheaper.
class CuckooFilter {
 public:
  // A filter sized for `expected_items` at config.target_load. Returns null
  // and sets *error (if non-null) when the config or size is invalid.
  static std::unique_ptr<CuckooFilter> Create(const FilterConfig& config,
                                              uint64_t expected_items,
                                              std::string* error = nullptr);
  // A filter with exactly `num_buckets` buckets, rounded up to even
  // (minimum 2; at most kMaxBuckets). Not restricted to powers of two.
  static std::unique_ptr<CuckooFilter> CreateWithBuckets(
      const FilterConfig& config, uint64_t num_buckets,
      std::string* error = nullptr);
  // A mutable copy of serialized bytes (see Serialize). Validates like
  // CuckooFilterView::Parse; max_kicks is the config default.
  static std::unique_ptr<CuckooFilter> Deserialize(const char* data,
                                                   size_t size,
                                                   std::string* error);

  ~CuckooFilter();
  CuckooFilter(const CuckooFilter&) = delete;
  CuckooFilter& operator=(const CuckooFilter&) = delete;

  // Every item operation takes the key itself (hashed with HashKey) or its
  // KeyHash, for callers that hash once. A raw integer does not compile (see
  // KeyHash for why); neither does a literal 0, which would otherwise become
  // a null string_view.
  template <typename Int, typename = std::enable_if_t<std::is_integral_v<Int>>>
  InsertResult Insert(Int) = delete;
  template <typename Int, typename = std::enable_if_t<std::is_integral_v<Int>>>
  bool Contains(Int) const = delete;
  template <typename Int, typename = std::enable_if_t<std::is_integral_v<Int>>>
  bool Erase(Int) = delete;

  // Adds one copy of the item. O(1) expected; at most max_kicks relocations.
  // The same item may be stored up to 2b times.
  InsertResult Insert(KeyHash hash);
  InsertResult Insert(std::string_view key) { return Insert(HashKey(key)); }

  // Insert(hashes[k]) for k < n, in order: the filter ends byte for byte as
  // after that loop. Returns how many items were stored (kInserted or
  // kInsertedFull); fewer than n means the filter is full(). Faster than the
  // loop on tables larger than the CPU caches (it prefetches the buckets of
  // keys further ahead).
  uint64_t InsertMany(const KeyHash* hashes, size_t n);

  // Inserts hashes[k] for k < n in an order of the filter's choosing: the
  // fastest way to fill a filter larger than the CPU caches. Every stored
  // item is found by Contains and can be erased, as after InsertMany, but
  // the bytes differ. Returns how many items were stored; fewer than n means
  // the filter is full() and an unspecified subset is missing (build a
  // larger filter). On tables of 8 MiB and more (2 MiB semi-sorted) it
  // allocates 8 bytes per item for the duration of the call; smaller tables,
  // or a failed allocation, take InsertMany. O(n) plus the eviction walks.
  uint64_t InsertUnordered(const KeyHash* hashes, size_t n);

  // True if the item may be present (false positives at about
  // stats().expected_fpr), false if it is certainly absent. Probes 2 buckets.
  // Inline for the common layouts (see cuckoo/detail/probe.h), so the
  // cache misses of consecutive independent calls overlap.
  bool Contains(KeyHash hash) const;
  bool Contains(std::string_view key) const { return Contains(HashKey(key)); }

  // out[k] = Contains(hashes[k]) for k < n. Prefetches both buckets of each
  // group of keys before probing them; faster than a loop of Contains when the
  // table is larger than the CPU caches. No allocation.
  void ContainsBatch(const KeyHash* hashes, size_t n, bool* out) const;

  // Removes one stored copy of the item's fingerprint from its two buckets
  // (or the victim slot) and returns true; false if none matches.
  // Erasing an item that was never inserted can remove the fingerprint of a
  // different item that shares its fingerprint and bucket pair, creating a
  // false negative for that item: only erase items known to be present.
  //
  // On a full() filter every successful Erase retries placing the victim
  // (a new random walk), so the filter leaves the full state as soon as the
  // victim fits. It cannot fit while its "closed component" is over-full:
  // the buckets reachable from the victim's two buckets hold more entries
  // than slots, e.g. 2b + 1 copies of one (fingerprint, bucket pair), which
  // small f or b = 1 make common (with f = 4, b = 1 about 1 filter in 8 that
  // went full). Erasing items outside that component does not help; erasing
  // one inside it (e.g. a copy of the victim's item) does.
  bool Erase(KeyHash hash);
  bool Erase(std::string_view key) { return Erase(HashKey(key)); }

  // Removes all items.
  void Clear();

  FilterStats stats() const;
  uint64_t size() const { return num_items_; }
  uint64_t num_buckets() const { return num_buckets_; }
  // True when the victim slot is in use; the next Insert returns kFull.
  bool full() const { return victim_fp_ != 0; }
  const FilterConfig& config() const { return config_; }

  // Serialized form: the bucket array followed by a 32-byte trailer
  // (format version, f, b, flags, bucket count, item count, seed, victim,
  // checksum), all little-endian. Size is SerializedSize() bytes.
  size_t SerializedSize() const;
  void SerializeTo(char* out) const;
  std::string Serialize() const;

  // A read-only view over this filter's table (valid until it is modified
  // or destroyed).
  CuckooFilterView View() const;

 private:
  friend struct internal::FilterAccess;
  CuckooFilter(const FilterConfig& config, uint64_t num_buckets,
               const internal::TableOps* ops);
  size_t TableBytes() const;
  internal::MutableTableRef MutableRef();
  // The layout, size, seed and victim slot (for View and the trailer).
  detail::TableGeometry Geometry() const;
  // Reads the table, writes nothing: "pure" lets the compiler keep the
  // members the inline Contains reads in registers across a loop of calls
  // (an opaque call could otherwise have changed them).
  bool ContainsGeneric(uint64_t hash) const CUCKOO_PURE;

  FilterConfig config_;
  const internal::TableOps* ops_;
  detail::ProbeParams probe_;
  uint64_t num_buckets_;
  uint64_t num_items_ = 0;
  uint32_t victim_fp_ = 0;  // 0: no victim
  uint32_t victim_bucket_ = 0;
  uint64_t rng_state_;
  std::unique_ptr<uint8_t[]> table_;  // TableBytes() + slack for wide loads
  // detail::AltOffset of every fingerprint (2^f entries), for f <= 16 and
  // tables at least 64 times its size; null otherwise. Fixed by (f, m, seed).
  std::unique_ptr<uint32_t[]> alt_offsets_;
};

// A read-only filter over serialized bytes, without copying them (the bytes
// must outlive the view). Cheap to copy. Thread-safe.
class CuckooFilterView {
 public:
  // An empty view: Contains() returns false, valid() is false.
  CuckooFilterView() = default;

  // Validates every trailer field, the checksum and the total size, and
  // returns false with a message in *error (if non-null) on any mismatch;
  // never reads outside [data, data + size).
  static bool Parse(const char* data, size_t size, CuckooFilterView* out,
                    std::string* error);

  bool valid() const { return ops_ != nullptr; }
  // As CuckooFilter::Contains (inline for the common layouts); false on an
  // invalid view.
  template <typename Int,
            typename = std::enable_if_t<std::is_integral_v<Int>>>
  bool Contains(Int) const = delete;  // see CuckooFilter::Insert
  bool Contains(KeyHash hash) const;
  bool Contains(std::string_view key) const { return Contains(HashKey(key)); }
  void ContainsBatch(const KeyHash* hashes, size_t n, bool* out) const;

  FilterStats stats() const;
  int fingerprint_bits() const { return geometry_.fingerprint_bits; }
  int bucket_size() const { return geometry_.bucket_size; }
  bool semi_sort() const { return geometry_.semi_sort; }
  uint32_t seed() const { return geometry_.seed; }
  uint64_t num_buckets() const { return geometry_.num_buckets; }
  uint64_t size() const { return geometry_.num_items; }

 private:
  friend class CuckooFilter;
  friend struct internal::ViewAccess;
  friend struct detail::LookupAccess;
  bool ContainsGeneric(uint64_t hash) const CUCKOO_PURE;  // as CuckooFilter's

  const internal::TableOps* ops_ = nullptr;
  detail::ProbeParams probe_;  // bucket_bits 0: ContainsGeneric
  const uint8_t* table_ = nullptr;
  const uint32_t* alt_offsets_ = nullptr;  // the filter's, in View(); or null
  detail::TableGeometry geometry_;
};

inline bool CuckooFilter::Contains(KeyHash hash) const {
  // Every member is read before the branch, so that in a caller's loop the
  // reads are unconditional and (ContainsGeneric being pure) hoisted.
  const detail::ProbeParams p = probe_;
  const uint8_t* table = table_.get();
  const uint32_t* alt_offsets = alt_offsets_.get();
  const uint32_t num_buckets = static_cast<uint32_t>(num_buckets_);
  const uint32_t seed = config_.seed;
  const uint32_t victim_fp = victim_fp_;
  const uint32_t victim_bucket = victim_bucket_;
  if (p.bucket_bits == 0) return ContainsGeneric(hash.value);
  return detail::ProbeItem(p, table, alt_offsets, num_buckets, seed, victim_fp,
                           victim_bucket, hash.value);
}

inline bool CuckooFilterView::Contains(KeyHash hash) const {
  if (probe_.bucket_bits == 0) return ContainsGeneric(hash.value);
  const detail::TableGeometry& g = geometry_;
  return detail::ProbeItem(probe_, table_, alt_offsets_,
                           static_cast<uint32_t>(g.num_buckets), g.seed,
                           g.victim_fp, g.victim_bucket, hash.value);
}

}  // namespace cuckoo

#endif  // CUCKOO_CUCKOO_FILTER_H_
