// Cuckoo filters in RocksDB SST filter blocks: a rocksdb::FilterPolicy.
//
// Each full filter block (or each partition of a partitioned filter) holds one
// partial-key cuckoo filter (Fan et al., CoNEXT 2014) over the 64-bit XXH3
// hashes of the keys (and/or prefixes) RocksDB adds, serialized in the core
// format of include/cuckoo/cuckoo_filter.h (bucket array + 32-byte trailer).
//
//   #include "rocksdb_cuckoo/filter_policy.h"
//
//   rocksdb::BlockBasedTableOptions table_options;
//   table_options.filter_policy.reset(rocksdb_cuckoo::NewCuckooFilterPolicy(10));
//
// or, through an options string or OPTIONS file, after registering the
// factories once per process (or loading librocksdb_cuckoo.so, whose static
// initializer registers them in ObjectLibrary::Default()):
//
//   rocksdb_cuckoo::RegisterCuckooFilterPolicies(*rocksdb::ObjectLibrary::Default(),
//   ""); "block_based_table_factory={filter_policy=cuckoofilter:10}"
//
// Options strings (all numbers plain decimal, no sign, no exponent):
//   cuckoofilter:<bits_per_key>
//       Automatic layout for a budget of <bits_per_key> bits per distinct key
//       (see CuckooFilterOptions::bits_per_key), e.g. cuckoofilter:10.
//   cuckoofilter:<bits_per_key>:<f>:<b>:<semi>
//       Explicit layout: f fingerprint bits (4..32), b entries per
//       bucket (1, 2, 4, 8), semi-sorted buckets (0 or 1; only b = 4, f <= 16);
//       the load factor is then (bits per entry) / bits_per_key and must not
//       exceed the maximum load of b (b=1: 0.45, 2: 0.84, 4: 0.95, 8: 0.98).
//   cuckoofilter:fpr:<rate>
//       The smallest automatic layout whose expected false positive rate is at
//       most <rate> (0 < rate < 1).
// Invalid arguments (e.g. "cuckoofilter:abc", "cuckoofilter:-1", bucket size 3)
// make FilterPolicy::CreateFromString and strict options parsing
// (ConfigOptions::input_strings_escaped = false) return InvalidArgument.
// Note that RocksDB's lenient parsing (escaped input, used for OPTIONS files)
// ignores errors of options set by name, and an unregistered name loads as
// "no filter" with an OK status: check that a loaded filter_policy is not
// null (IsCuckooFilterPolicy). Name() is the canonical string, always of one
// of the first two forms (bits per key with at most 3 decimals), and parses
// back to an identical policy, so the policy round-trips through OPTIONS
// files.
//
// Compatibility: all cuckoo policies read each other's filter blocks (the
// layout is in the block trailer); CompatibilityName() is shared by all of
// them and changes only with the on-disk encoding. Tables written with another
// policy (Bloom, Ribbon, none) are read correctly but unfiltered, and vice
// versa.
//
// Filter size: for n distinct keys and a budget of B bits per key the bucket
// array never exceeds ceil(n * B / 8) bytes, plus the 32-byte trailer, except
// (a) tiny filters, which are at least 2 buckets, and (b) the rare builds in
// which the cuckoo random walk fails at the target load twice: the table then
// grows by 2% steps (counted in CuckooFilterPolicyStats::filters_grown).
//
// Costs: building a filter of n keys takes O(n) expected time and, until
// Finish, 8 bytes per added key (hashes) plus an unpacked scratch table of
// 2 bytes per slot (f <= 16; 4 bytes for f > 16), about 2.2 bytes per key at
// 10 bits/key. Keys that are not strictly monotonic in bytewise order (a
// non-bytewise comparator, or prefixes interleaved with whole keys) add one
// O(n) de-duplication pass. A lookup hashes the key (XXH3) and probes two
// buckets: O(1), no allocation; the batched (MultiGet) lookup overlaps the
// cache misses of its keys. A reader does not copy the block.
//
// Thread safety: the policy and its filter readers may be used concurrently
// from any number of threads; a builder (one per table file being written)
// is used by one thread at a time, as RocksDB does.
#ifndef ROCKSDB_CUCKOO_FILTER_POLICY_H_
#define ROCKSDB_CUCKOO_FILTER_POLICY_H_

#include <cstdint>
#include <memory>
#include <string>

#include "rocksdb/filter_policy.h"
#include "rocksdb/rocksdb_namespace.h"
#include "rocksdb/status.h"
#include "rocksdb/utilities/object_registry.h"

namespace rocksdb_cuckoo {

// Limits of CuckooFilterOptions::bits_per_key (bits per distinct key).
constexpr double kMinBitsPerKey = 4.0;
constexpr double kMaxBitsPerKey = 64.0;

// Configuration of a cuckoo filter policy. Exactly one of three modes:
//  1. automatic (default): set bits_per_key only;
//  2. explicit layout: set fingerprint_bits (non-zero), bucket_size,
//     semi_sort, and optionally bits_per_key (0 = the bucket size's maximum
//     load, i.e. the smallest filter of that layout);
//  3. target rate: set target_fpr (non-zero) and leave fingerprint_bits 0;
//     bits_per_key is then ignored.
struct CuckooFilterOptions {
  // Space budget in bits per distinct key, trailer excluded; kept to 0.001
  // bits (rounded to nearest). Automatic mode picks the layout with the
  // lowest expected false positive rate within the budget: semi-sorted
  // buckets of 4 with the largest fingerprint f <= 16 such that
  // (f - 1) / 0.95 <= bits_per_key, or from ~17.9 bits plain buckets of 4
  // with the largest f <= 32 such that f / 0.95 <= bits_per_key; then it
  // lowers the load to spend exactly the budget. Examples: 8 -> f=8 (~2.7%),
  // 10 -> f=10 (~0.70%), 12 -> f=12 (~0.18%), 16 -> f=16 (~0.011%),
  // 20 -> f=19 (~0.0015%), 24 -> f=22 (~0.0002%).
  // Range [kMinBitsPerKey, kMaxBitsPerKey]; 0 only in explicit mode.
  double bits_per_key = 10.0;

  // Explicit mode when non-zero: fingerprint bits, 4..32.
  int fingerprint_bits = 0;
  // Explicit mode: entries per bucket, 1, 2, 4 or 8.
  int bucket_size = 4;
  // Explicit mode: semi-sorted buckets (bucket_size 4, fingerprint_bits
  // <= 16), one bit per entry smaller at the same false positive rate.
  bool semi_sort = true;

  // Target-rate mode when non-zero, in (0, 1).
  double target_fpr = 0.0;
};

// The layout a policy uses, resolved from CuckooFilterOptions.
struct CuckooFilterLayout {
  int fingerprint_bits = 0;
  int bucket_size = 0;
  bool semi_sort = false;
  // Bits per distinct key of the bucket array (the budget, 0.001 precision).
  double bits_per_key = 0;
  // Target load factor: (bits per entry) / bits_per_key.
  double load_factor = 0;
  // Expected false positive rate at that load: 2 * b * load / (2^f - 1)
  // (an absent key matches iff its (bucket pair, fingerprint) combination
  // is stored; the builder stores almost every combination only once).
  double expected_fpr = 0;
  // The canonical options string, e.g. "cuckoofilter:10" (== policy Name()).
  std::string name;
};

// Validates `options` and resolves the layout. Returns InvalidArgument with a
// message on any out-of-range or contradictory field. O(1).
ROCKSDB_NAMESPACE::Status ResolveCuckooFilterLayout(
    const CuckooFilterOptions& options, CuckooFilterLayout* layout);

// Parses an options string of one of the forms in the header comment.
ROCKSDB_NAMESPACE::Status ParseCuckooFilterPolicyString(
    const std::string& value, CuckooFilterLayout* layout);

// A new policy for a budget of `bits_per_key` bits per key (automatic mode).
// Out-of-range values are clamped to [kMinBitsPerKey, kMaxBitsPerKey] (NaN
// selects 10), like NewBloomFilterPolicy never fails. The caller owns the
// result (usually through BlockBasedTableOptions::filter_policy).
const ROCKSDB_NAMESPACE::FilterPolicy* NewCuckooFilterPolicy(
    double bits_per_key);

// A new policy for any mode. On error returns InvalidArgument and leaves
// *policy unchanged.
ROCKSDB_NAMESPACE::Status NewCuckooFilterPolicy(
    const CuckooFilterOptions& options,
    std::shared_ptr<const ROCKSDB_NAMESPACE::FilterPolicy>* policy);

// Registers the factories for the "cuckoofilter" options strings (all forms
// above) as `const FilterPolicy` in `library`. Returns the number of
// factories added. Call once per library (ObjectLibrary::Default() for the
// default registry); librocksdb_cuckoo.so does so when loaded.
int RegisterCuckooFilterPolicies(ROCKSDB_NAMESPACE::ObjectLibrary& library,
                                 const std::string& arg);

// True if `policy` is a cuckoo filter policy of this library.
bool IsCuckooFilterPolicy(const ROCKSDB_NAMESPACE::FilterPolicy* policy);

// Event counters of a policy (or of all policies of the process). Counters
// are updated once per filter built or reader created (never per key) with
// relaxed atomics; a snapshot is consistent per field only.
struct CuckooFilterPolicyStats {
  uint64_t filters_built = 0;  // Finish() calls that built a filter
  uint64_t keys_added = 0;     // distinct hashes in those filters
  uint64_t filter_bytes = 0;   // bytes of those filters (with trailer)
  uint64_t build_retries = 0;  // extra attempts with another seed
  uint64_t filters_grown = 0;  // filters built above the budget
  uint64_t construction_corruptions = 0;  // checksum / post-verify failures
  uint64_t readers_created = 0;           // GetFilterBitsReader calls
  uint64_t invalid_blocks = 0;  // blocks rejected -> "always may match"
};

// Copies the counters of `policy` into *stats and returns true, or returns
// false if `policy` is not a cuckoo filter policy.
bool GetCuckooFilterPolicyStats(const ROCKSDB_NAMESPACE::FilterPolicy* policy,
                                CuckooFilterPolicyStats* stats);

// The counters summed over every cuckoo policy of the process, including
// ones already destroyed.
CuckooFilterPolicyStats GetGlobalCuckooFilterPolicyStats();

}  // namespace rocksdb_cuckoo

#endif  // ROCKSDB_CUCKOO_FILTER_POLICY_H_
